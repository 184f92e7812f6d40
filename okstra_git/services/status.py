"""``task status``: one overview of a task and the exact next command (SPEC §14).

Phase, plan and approval, every Stage Map stage (state, holder, lease, done commit, merged
into the task worktree?), the latest verdict on the task's HEAD, how the local records stand
against each remote's fetched copy, and ``next`` (``nextstep``). Everything is read from this
clone — local task and claim refs, notes as local ∪ fetched (``notesview``) — without network:
run ``sync`` first to see other machines' latest, which ``next`` says when a fetch brought
newer records. No jsonschema and no Jinja here: it is a read agents call often.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.values import Record, Value, init
from ..git.repo import GitRepo
from ..logic import batch as batching
from ..logic.nextstep import Situation, StageView, Step, next_step
from ..logic.phases import FINAL_VERIFICATION
from ..logic.workspace import run_paths
from ..records.base import to_data
from ..records.claim import Claim, claim_holder, load_claims
from ..records.task import TaskState, require_task
from . import remoteview
from .context import Context

if TYPE_CHECKING:
    from ..records.verdict import Verdict


class StageStatus(Value):
    """One Stage Map stage in ``task status``."""

    __slots__ = (
        "claim",
        "depends_on",
        "fetched_from",
        "merge_ref",
        "merged",
        "mine",
        "number",
        "state",
        "title",
        "why",
    )
    number: int
    title: str
    depends_on: list[int]
    state: str
    """``ready``, ``blocked``, ``started``, ``expired`` or ``done``."""
    why: str | None
    """Why a blocked stage is not ready."""
    claim: Claim | None
    """The stage's claim record (a released one too)."""
    mine: bool
    """Held by this host."""
    merged: bool | None
    """A done stage: its done commit is in the task worktree HEAD; None when that commit is
    not in this repository (sync brings it) or the stage is not done."""
    merge_ref: str
    """What ``git merge`` needs for it here: its stage branch when at the done commit, else
    the commit."""
    fetched_from: str | None
    """The remote whose fetched claim record this is, newer than this clone's (only when the
    status was read with ``fetched``); None: the local record."""

    def __init__(
        self,
        number: int,
        title: str,
        depends_on: list[int],
        state: str,
        why: str | None,
        claim: Claim | None,
        mine: bool,
        merged: bool | None,
        merge_ref: str,
        fetched_from: str | None = None,
    ) -> None:
        init(
            self,
            number=number,
            title=title,
            depends_on=depends_on,
            state=state,
            why=why,
            claim=claim,
            mine=mine,
            merged=merged,
            merge_ref=merge_ref,
            fetched_from=fetched_from,
        )

    def to_data(self) -> dict[str, Any]:
        c = self.claim
        return {
            "stage": self.number,
            "title": self.title,
            "dependsOn": self.depends_on,
            "state": self.state,
            "why": self.why,
            "holder": (
                {"host": c.host, "user": c.user, "runId": c.run_id, "mine": self.mine}
                if c is not None and self.state != "ready" and self.state != "blocked"
                else None
            ),
            "leaseExpiresAt": c.lease_expires_at if c is not None else None,
            "doneCommit": c.head_commit if c is not None and c.status == "done" else None,
            "merged": self.merged,
            "branch": c.branch if c is not None and c.branch else None,
            "worktree": c.worktree_path if c is not None and c.worktree_path else None,
            **({"fetchedFrom": self.fetched_from} if self.fetched_from else {}),
        }


class TaskStatus(Record):
    """Everything ``task status`` shows."""

    __slots__ = (
        "lag",
        "next",
        "plan",
        "stages",
        "state",
        "task_branch",
        "task_head",
        "task_worktree",
        "verdict",
    )
    state: TaskState
    plan: dict[str, Any] | None
    stages: list[StageStatus]
    task_branch: str
    task_head: str | None
    task_worktree: str
    verdict: dict[str, Any] | None
    lag: list[remoteview.Lag]
    next: Step | None

    def __init__(
        self,
        state: TaskState,
        plan: dict[str, Any] | None = None,
        stages: list[StageStatus] | None = None,
        task_branch: str = "",
        task_head: str | None = None,
        task_worktree: str = "",
        verdict: dict[str, Any] | None = None,
        lag: list[remoteview.Lag] | None = None,
        next: Step | None = None,
    ) -> None:
        self.state = state
        self.plan = plan
        self.stages = [] if stages is None else stages
        self.task_branch = task_branch
        self.task_head = task_head
        self.task_worktree = task_worktree
        self.verdict = verdict
        self.lag = [] if lag is None else lag
        self.next = next

    def to_data(self) -> dict[str, Any]:
        task = self.state.task
        flow = task.workflow
        assert self.next is not None
        return {
            "taskKey": task.task_key,
            "ref": f"refs/okstra/tasks/{self.state.key.ref_suffix}",
            "commit": self.state.head,
            "phase": {
                "status": task.current_status,
                "current": flow.current_phase,
                "state": flow.current_phase_state,
                "next": flow.next_recommended_phase,
                "routing": flow.routing_status,
                "latestRun": to_data(task.latest_run) if task.latest_run else None,
            },
            "plan": self.plan,
            "stages": [s.to_data() for s in self.stages],
            "taskWorktree": {
                "branch": self.task_branch,
                "head": self.task_head,
                "path": self.task_worktree or None,
            },
            "verdict": self.verdict,
            "remoteLag": [lag.to_data() for lag in self.lag],
            "next": self.next.to_data(),
        }


def task_status(ctx: Context, key: TaskKey, fetched: bool = False) -> TaskStatus:
    """Read everything ``task status`` shows, and work out ``next``.

    ``fetched``: a stage whose claim a fetch brought newer than this clone's record (the
    remote's copy descends from it, or only the remote has one) is shown from the fetched
    record, checked as ``sync`` checks what it adopts (``remoteview.fetched_claims``) — what
    the board shows of other clones. ``next`` is then ``sync`` all the same: the local records
    are behind."""
    from .layout import task_branch

    repo = ctx.repo
    state = require_task(repo, key)
    status = TaskStatus(state)
    status.lag = remoteview.task_lag(repo, key)
    status.task_branch = task_branch(key)
    status.task_head = repo.read_ref(f"refs/heads/{status.task_branch}")
    if status.task_head is not None:
        found = repo.worktree_for_branch(status.task_branch)
        status.task_worktree = str(found) if found is not None else ""
    approval_reasons: tuple[str, ...] = ()
    if state.task.latest_plan is not None:
        status.plan, approval_reasons = _plan(ctx, key)
        newer = remoteview.fetched_claims(repo, key, status.lag) if fetched else {}
        status.stages = _stages(ctx, state, status.task_head, newer)
    status.verdict = _verdict(ctx, key, status.task_head)
    status.next = next_step(_situation(repo, status, approval_reasons))
    return status


def _plan(ctx: Context, key: TaskKey) -> tuple[dict[str, Any], tuple[str, ...]]:
    from .plans import plan_status

    found = plan_status(ctx, key)
    latest = found.state.task.latest_plan
    assert latest is not None
    approval = found.approvals[-1] if found.approvals else None
    return {
        "seq": latest.seq,
        "path": latest.path,
        "blob": latest.blob,
        "readFrom": found.source,
        "approved": found.approved,
        "reasons": found.reasons,
        "approvedBy": approval.approved_by if approval else None,
        "approvedAt": approval.approved_at if approval else None,
        "method": approval.method if approval else None,
    }, tuple(found.reasons)


def _stages(
    ctx: Context,
    state: TaskState,
    task_head: str | None,
    newer: dict[int, tuple[str, Claim]],
) -> list[StageStatus]:
    from .snapshots import stage_map_of

    repo = ctx.repo
    try:
        stage_map = stage_map_of(ctx, state)
    except (Refused, BadInput):
        return []
    claims = {n: s.claim for n, s in load_claims(repo, state.key).items()}
    claims.update({n: claim for n, (_, claim) in newer.items()})
    holders = {n: claim_holder(c, None) for n, c in claims.items()}
    selection = batching.select(stage_map.stages, holders)
    done = {n: c.head_commit for n, c in claims.items() if c.status == "done" and c.head_commit}
    present = {n: h for n, h in done.items() if repo.has_commit(h)}
    unmerged = (
        repo.not_contained(task_head, present.values(), state.task.implementation_base_commit)
        if task_head is not None
        else set(present.values())
    )
    here = socket.gethostname()
    found = []
    for stage in stage_map.stages:
        n, claim = stage.number, claims.get(stage.number)
        live = claim is not None and claim.status in ("started", "done")
        state_word = holders[n].state if live else ("ready" if n in selection.ready else "blocked")
        merged = None if n not in present else present[n] not in unmerged
        found.append(
            StageStatus(
                number=n,
                title=stage.title,
                depends_on=list(stage.depends_on),
                state=state_word,
                why=selection.blocked.get(n) if state_word == "blocked" else None,
                claim=claim,
                mine=live and claim is not None and claim.host == here,
                merged=merged,
                merge_ref=_merge_ref(repo, claim, done.get(n)),
                fetched_from=newer[n][0] if n in newer else None,
            )
        )
    return found


def _merge_ref(repo: GitRepo, claim: Claim | None, done: str | None) -> str:
    if claim is None or done is None:
        return ""
    if claim.branch and repo.read_ref(f"refs/heads/{claim.branch}") == done:
        return claim.branch
    return done


def _verdict(ctx: Context, key: TaskKey, head: str | None) -> dict[str, Any] | None:
    """The newest verdict on the task's HEAD (or a commit with its tree) and whether it opens
    the gate there, as the pre-push hook would judge it."""
    if head is None:
        return None
    from ..gate.judge import judge_head

    try:
        finding = judge_head(ctx.repo, head, str(key), ctx.gate_config())
    except BadInput as exc:  # the gate's config fails closed: say so, do not guess
        return {"head": head, "error": str(exc), "opensGate": False}
    seen: list[tuple[Verdict, str | None]] = [(finding.opening, None)] if finding.opening else []
    seen += [(r.verdict, r.why) for r in finding.rejected]
    if not seen:
        return None
    verdict, why = max(seen, key=lambda pair: pair[0].recorded_at)
    return {
        "head": head,
        "verdict": verdict.verdict,
        "scope": verdict.scope,
        "recordedOn": verdict.head,
        "recordedAt": verdict.recorded_at,
        "recordedBy": verdict.recorded_by,
        "opensGate": finding.opening is not None,
        "why": why,
    }


def _situation(repo: GitRepo, status: TaskStatus, reasons: tuple[str, ...]) -> Situation:
    task = status.state.task
    key = status.state.key
    stale = next((lag.remote for lag in status.lag if lag.stale), None)
    remotes = remoteview.okstra_remotes(repo)
    running = None
    run_report = ""
    if task.latest_run is not None and task.latest_run.status == "running":
        running = (task.latest_run.task_type, task.latest_run.seq)
        run_report = run_paths(key, *running)["report"]
    views = tuple(
        StageView(
            number=s.number,
            state=s.state,
            mine=s.mine,
            holder=(f"{s.claim.run_id} by {s.claim.user} on {s.claim.host}" if s.claim else ""),
            merged=s.merged,
            merge_ref=s.merge_ref,
            worktree=s.claim.worktree_path if s.claim is not None else "",
        )
        for s in status.stages
    )
    verdict = status.verdict or {}
    return Situation(
        key=str(key),
        status=task.current_status,
        next_phase=task.workflow.next_recommended_phase,
        running=running,
        run_report=run_report,
        verdict_recorded=(
            running is not None
            and running[0] == FINAL_VERIFICATION
            and task.workflow.phase_states.get(FINAL_VERIFICATION) == "completed"
        ),
        stale_remote=stale,
        remote=stale or (remotes[0] if remotes else None),
        plan_submitted=task.latest_plan is not None,
        plan_path=task.latest_plan.path if task.latest_plan else "",
        approval_reasons=reasons,
        latest_report=task.latest_report_path or "",
        stages=views,
        task_worktree=status.task_worktree,
        verdict_opens=bool(verdict.get("opensGate")),
        verdict=verdict.get("verdict"),
    )
