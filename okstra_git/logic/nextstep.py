"""The exact next command for a task, from where it stands (``task status``'s ``next``). Pure.

The rules follow the phase order of SPEC §1 and the gates of §4–§6, first match wins:

1. local records older than a remote's → ``sync`` (every other answer would be stale);
2. a finished task → nothing;
3. a run still running → finish it (a final-verification run: resolve its target and record
   the verdict first);
4. an analysis phase to run → ``run start`` it;
5. implementation, and final-verification before its run: submit the plan, approve it (a
   person), finish this host's claimed stages, claim what is ready (through the shared remote
   when there is one), take over expired claims, wait for other hosts, merge done stages into
   the task worktree (a person), then ``run start --type final-verification``;
6. after a verdict: release-handoff when an accepted whole-task verdict is on the task's HEAD,
   else verify that HEAD again.

Every command is built with ``okstra_git.core.shell`` (one quoted line); ``FILE``/``REPORT`` stand
for a path only the caller knows.
"""

from __future__ import annotations

from ..core.shell import command, okstra
from ..core.values import Value, init

ANALYSIS_PHASES = ("requirements-discovery", "error-analysis", "implementation-planning")


class StageView(Value):
    """One Stage Map stage as the next step needs it."""

    __slots__ = ("holder", "merge_ref", "merged", "mine", "number", "state", "worktree")
    number: int
    state: str
    """``ready``, ``blocked``, ``started``, ``expired`` or ``done``."""
    mine: bool
    """Held by this host (a started claim whose host is this machine)."""
    holder: str
    """``run by user on host``, for a message."""
    merged: bool | None
    """A done stage: its done commit is in the task worktree HEAD (None: not here)."""
    merge_ref: str
    """What to merge for it: its stage branch when here and at the done commit, else the
    commit."""
    worktree: str
    """Its stage worktree, when claimed here with one."""

    def __init__(
        self,
        number: int,
        state: str,
        mine: bool = False,
        holder: str = "",
        merged: bool | None = None,
        merge_ref: str = "",
        worktree: str = "",
    ) -> None:
        init(
            self,
            number=number,
            state=state,
            mine=mine,
            holder=holder,
            merged=merged,
            merge_ref=merge_ref,
            worktree=worktree,
        )


class Situation(Value):
    """Where a task stands, as plain data."""

    __slots__ = (
        "approval_reasons",
        "key",
        "latest_report",
        "next_phase",
        "plan_path",
        "plan_submitted",
        "remote",
        "run_report",
        "running",
        "stages",
        "stale_remote",
        "status",
        "task_worktree",
        "verdict",
        "verdict_opens",
        "verdict_recorded",
    )
    key: str
    status: str
    """The task's ``currentStatus``."""
    next_phase: str | None
    """``workflow.nextRecommendedPhase``."""
    running: tuple[str, str] | None
    """(type, seq) of the latest run while it is running."""
    run_report: str
    """The running run's report path (workspace-relative)."""
    verdict_recorded: bool
    """The running final-verification run has recorded its verdict (``verify record``)."""
    stale_remote: str | None
    """A remote this clone's records are older than."""
    remote: str | None
    """The shared remote claims go through, when there is one."""
    plan_submitted: bool
    plan_path: str
    approval_reasons: tuple[str, ...]
    """Why the plan is not approved (``plans.Assessment.reasons``); empty: approved."""
    latest_report: str
    """The latest finished run's report: the plan to submit after implementation-planning."""
    stages: tuple[StageView, ...]
    task_worktree: str
    verdict_opens: bool
    """An accepted whole-task verdict is on the task's HEAD."""
    verdict: str | None
    """The latest verdict on the task's HEAD, when there is one."""

    def __init__(
        self,
        key: str,
        status: str,
        next_phase: str | None,
        running: tuple[str, str] | None = None,
        run_report: str = "",
        verdict_recorded: bool = False,
        stale_remote: str | None = None,
        remote: str | None = None,
        plan_submitted: bool = False,
        plan_path: str = "",
        approval_reasons: tuple[str, ...] = (),
        latest_report: str = "",
        stages: tuple[StageView, ...] = (),
        task_worktree: str = "",
        verdict_opens: bool = False,
        verdict: str | None = None,
    ) -> None:
        init(
            self,
            key=key,
            status=status,
            next_phase=next_phase,
            running=running,
            run_report=run_report,
            verdict_recorded=verdict_recorded,
            stale_remote=stale_remote,
            remote=remote,
            plan_submitted=plan_submitted,
            plan_path=plan_path,
            approval_reasons=approval_reasons,
            latest_report=latest_report,
            stages=stages,
            task_worktree=task_worktree,
            verdict_opens=verdict_opens,
            verdict=verdict,
        )


class Step(Value):
    """The next command, who runs it, and why."""

    __slots__ = ("command", "extra", "who", "why")
    command: str | None
    """One shell line, or None when nothing is left to do."""
    who: str
    """``agent`` or ``human`` (approvals, merges, answers only a person gives)."""
    why: str
    """The reason, in words."""
    extra: list[str]
    """Other commands worth knowing (e.g. each stage still held by this host)."""

    def __init__(
        self, command: str | None, who: str, why: str, extra: list[str] | None = None
    ) -> None:
        init(self, command=command, who=who, why=why, extra=[] if extra is None else extra)

    def to_data(self) -> dict[str, object]:
        return {"command": self.command, "who": self.who, "why": self.why, "also": self.extra}


def next_step(s: Situation) -> Step:
    """The first rule of the module docstring that applies."""
    if s.stale_remote is not None:
        return Step(
            okstra("sync", s.stale_remote),
            "agent",
            f"this clone's records of {s.key} are older than {s.stale_remote}'s; everything "
            "else would be decided on stale records",
        )
    if s.status == "done" or s.next_phase == "done":
        return Step(None, "human", f"{s.key} is done")
    if s.running is not None:
        return _finish(s)
    phase = s.next_phase or ""
    if phase in ANALYSIS_PHASES:
        return Step(okstra("run", "start", s.key, "--type", phase), "agent", f"{phase} is next")
    if phase in ("implementation", "final-verification"):
        return _implementation(s)  # the gate needs every stage done and merged first
    if phase == "release-handoff":
        if s.verdict_opens:
            return Step(
                okstra("run", "start", s.key, "--type", "release-handoff"),
                "agent",
                "an accepted whole-task verdict is on the task's HEAD",
            )
        return Step(
            okstra("run", "start", s.key, "--type", "final-verification"),
            "agent",
            "the task's HEAD carries no accepted whole-task verdict (it moved after the "
            "verdict, or the verdict was not accepted): verify it again",
        )
    return Step(okstra("task", "show", s.key), "human", f"no rule for phase {phase!r}")


def _finish(s: Situation) -> Step:
    assert s.running is not None
    task_type, seq = s.running
    if task_type == "final-verification" and not s.verdict_recorded:
        record = okstra("verify", "record", s.key, "--verdict", "V", "--report", "DATA.json")
        return Step(
            okstra("verify", "target", s.key),
            "agent",
            f"final-verification run {seq} is running: resolve its target, verify, then "
            "record the verdict",
            [record],
        )
    if task_type == "implementation":
        return _implementation(s)
    report = s.run_report or "REPORT"
    finish = ("--type", task_type, "--seq", seq, "--status", "completed", "--report", report)
    return Step(
        okstra("run", "finish", s.key, *finish),
        "agent",
        f"{task_type} run {seq} is running: finish it when its report is written",
    )


def _implementation(s: Situation) -> Step:
    if not s.plan_submitted:
        plan = s.latest_report or "FILE"
        return Step(
            okstra("plan", "submit", s.key, plan),
            "agent",
            "implementation starts from a submitted plan: the implementation-planning report",
        )
    if s.approval_reasons and s.approval_reasons != ("not-recorded",):
        return _approve(s)
    mine = [st for st in s.stages if st.state == "started" and st.mine]
    if mine:
        done = [
            okstra("stage", "done", s.key, "--stage", st.number, "--report", "REPORT")
            for st in mine
        ]
        where = mine[0].worktree or "its stage worktree"
        return Step(
            done[0],
            "agent",
            f"stage {mine[0].number} is claimed on this host: commit its work in {where}, "
            "then mark it done",
            done[1:],
        )
    remote = ("--remote", s.remote) if s.remote else ()
    if any(st.state == "ready" for st in s.stages):
        ready = ", ".join(str(st.number) for st in s.stages if st.state == "ready")
        return Step(okstra("stage", "claim", s.key, *remote), "agent", f"ready: stage {ready}")
    expired = [st for st in s.stages if st.state == "expired"]
    if expired:
        return Step(
            okstra("stage", "claim", s.key, "--take-over-expired", *remote),
            "agent",
            f"stage {expired[0].number}'s claim lease expired ({expired[0].holder})",
        )
    held = [st for st in s.stages if st.state == "started"]
    if held:
        wait = okstra("sync", s.remote) if s.remote else okstra("stage", "list", s.key)
        return Step(
            wait,
            "agent",
            f"waiting for stage {held[0].number} ({held[0].holder}); sync later to see it",
        )
    unmerged = [st for st in s.stages if st.state == "done" and not st.merged]
    if unmerged:
        return _merge(s, unmerged)
    if s.stages and all(st.state == "done" for st in s.stages):
        return _verify(s)
    blocked = ", ".join(str(st.number) for st in s.stages)
    return Step(okstra("stage", "ready", s.key), "agent", f"no stage is ready ({blocked})")


def _approve(s: Situation) -> Step:
    reasons = set(s.approval_reasons)
    if "invalid-plan" in reasons:
        return Step(
            okstra("plan", "validate", s.plan_path),
            "agent",
            "the plan fails its Stage Map checks: fix them, then submit it again",
        )
    if reasons & {"blockers-open", "section-5-unreadable"}:
        return Step(
            okstra("clarify", "status", s.plan_path),
            "human",
            "clarification items block the approval: answer or resolve them",
        )
    return Step(
        okstra("plan", "approve", s.key),
        "human",
        "the plan waits for a person's approval"
        + (" (edited since it was approved)" if "stale" in reasons else ""),
    )


def _merge(s: Situation, unmerged: list[StageView]) -> Step:
    missing = [st for st in unmerged if st.merged is None]
    if missing and s.remote:
        return Step(
            okstra("sync", s.remote),
            "agent",
            f"stage {missing[0].number}'s done commit is not in this repository yet",
        )
    refs = [st.merge_ref for st in unmerged]
    where = ("-C", s.task_worktree) if s.task_worktree else ()
    numbers = ", ".join(str(st.number) for st in unmerged)
    return Step(
        command("git", *where, "merge", *refs),
        "human",
        f"stage {numbers} done but not merged into the task worktree; merge (and resolve any "
        "conflict), then verify",
    )


def _verify(s: Situation) -> Step:
    return Step(
        okstra("run", "start", s.key, "--type", "final-verification"),
        "agent",
        "every stage is done and merged: verify the whole task (the run start checks the gate)",
    )
