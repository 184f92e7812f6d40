"""The next step of a task, for this clone (docs/workflow.md): one pure function of where it stands.

``task status`` shows it, ``task show`` resumes with it, refusals hint with it, ``verify
record`` and ``ci check`` follow up with it: every printed "what now" comes from
:func:`next_step`, so two commands never disagree. A step is an object (``--json``):
``kind`` — ``run`` (run ``argv`` in ``cwd``), ``work`` (do the work in ``worktree``, committed
there when ``commit`` says so, write ``report``, then run ``argv``), ``wait`` (another clone
holds what comes next; ``argv`` refreshes the view), ``human`` (a person decides: approve,
resolve a conflict, push to a protected branch) or ``done`` — and ``argv``, ``cwd``
(absolute), ``who``, ``why``.
Its text form is one shell line that runs from any folder: ``git -C <cwd> …`` with absolute
paths, each word quoted (``core/shell.py``).

Rules, first match wins (the phase order and the gates of docs/workflow.md):

1. local records older than a remote's → ``sync`` (every other answer would be stale);
2. a finished task → done; a task on none of the remotes, while this clone shares through one
   (``init --remote R``) → ``sync R`` publishes it first;
3. a run still running → its work, then its finish (a final-verification run: record the
   verdict first; an implementation run: the stage rules of 5);
   then, when the latest report's §5 has rows open or answered, the clarification turn-around
   (``clarify resume``, a person answers them; seed 002's first recommended next step);
4. an analysis phase to run → ``run start`` it;
5. implementation, and final-verification before its run: submit the plan, approve it (a
   person), finish a merge left in the task worktree (a person), finish this clone's claimed
   stages, make this clone's missing stage worktrees, claim what is ready (``--remote`` when
   the task is shared), take over expired claims, integrate done stages the task branch
   lacks, wait for other clones, bring the task branch here to the published one, then
   ``run start --type final-verification``;
6. after the verdict: finish a merge left in the task worktree, bring the task branch in
   step with the published one, publish the verdict, push the verified commit to the
   protected branch (a person) — or, when that branch moved on the remote, merge it into the
   task branch first (a person) — then release-handoff; else verify the task's HEAD again.
"""

from __future__ import annotations

from ..core.shell import command
from ..core.values import Value, init

ANALYSIS_PHASES = ("requirements-discovery", "error-analysis", "implementation-planning")
KINDS = ("run", "work", "wait", "human", "done")


class StageView(Value):
    """One Stage Map stage as the next step needs it."""

    number: int
    state: str
    """``ready``, ``blocked``, ``started``, ``expired`` or ``done``."""
    mine: bool
    """Held by this clone (a live claim recording this clone's id)."""
    who: str
    """Who holds (or held) it, and where: ``user on host (clone …)``, as its claim says it."""
    merged: bool | None
    """A done stage: its done commit is in the task branch here (None: not in this clone)."""
    merge_ref: str
    """What to merge for it by hand: its stage branch when here at the done commit, else the
    commit."""
    worktree: str
    """Its stage worktree (absolute), when claimed with one."""
    worktree_here: bool
    """That worktree exists in this clone."""
    run_id: str
    """The run holding (or having held) it."""
    report: str
    """Where this clone writes the stage's report (absolute), for ``stage done``."""
    integrated: bool | None
    """A done stage: its done commit is in the published task branch (the local one when the
    task is not shared); None: not done."""

    def __init__(
        self,
        number: int,
        state: str,
        mine: bool = False,
        who: str = "",
        merged: bool | None = None,
        merge_ref: str = "",
        worktree: str = "",
        worktree_here: bool = True,
        run_id: str = "",
        report: str = "",
        integrated: bool | None = None,
    ) -> None:
        init(
            self,
            number=number,
            state=state,
            mine=mine,
            who=who,
            merged=merged,
            merge_ref=merge_ref,
            worktree=worktree,
            worktree_here=worktree_here,
            run_id=run_id,
            report=report,
            integrated=merged if integrated is None else integrated,
        )

    @property
    def holder(self) -> str:
        """``run by user on host (clone …)``, for a message."""
        return f"{self.run_id} by {self.who}"


class Situation(Value):
    """Where a task stands for this clone, as plain data."""

    key: str
    status: str
    """The task's ``currentStatus``."""
    next_phase: str | None
    """``workflow.nextRecommendedPhase``."""
    running: tuple[str, str] | None
    """(type, seq) of the latest run while it is running."""
    running_by: str
    """Who started that run when it is another clone's (its work is theirs); empty: this
    clone's (or a run from before clones had ids)."""
    running_clone: str
    """That other clone's id."""
    running_stage: int | None
    """The one stage the running final-verification run verifies (``run start --stage``);
    None: the whole task, or another phase."""
    run_report: str
    """The running run's report file (absolute): where its work writes it."""
    verdict_recorded: bool
    """The running final-verification run has recorded its verdict (``verify record``)."""
    stale_remote: str | None
    """A remote this clone's records are older than."""
    unpublished_on: str | None
    """The remote this clone shares through (``init --remote R``) when it lacks the task:
    the task is this clone's alone until a sync publishes it."""
    remote: str | None
    """The remote the task is shared through (it holds the task), when there is one."""
    plan_submitted: bool
    plan_path: str
    approval_reasons: tuple[str, ...]
    """Why the plan is not approved (``plans.Assessment.reasons``); empty: approved."""
    latest_report: str
    """The latest finished run's report (absolute): the plan to submit after planning."""
    stages: tuple[StageView, ...]
    task_worktree: str
    """The task worktree in this clone (absolute; empty: none here)."""
    task_branch: str
    """The task branch here against the published one: ``same``, ``ahead``, ``behind``,
    ``diverged``, ``missing-here`` (only published), ``unpublished`` (only here) or ``none``;
    ``local`` when the task is not shared."""
    merging: tuple[str, ...] | None
    """A merge left in the task worktree (its conflicted paths), else None."""
    verdict_opens: bool
    """An accepted whole-task verdict is on the task's HEAD."""
    verdict: str | None
    """The latest verdict on the task's HEAD, when there is one."""
    verdict_unpublished: bool
    """The verdict notes here are ahead of the remote's (a sync publishes them)."""
    main_push: tuple[str, ...] | None
    """The push that lands the verified HEAD on the protected branch (argv), when that branch
    on the remote (as last fetched) does not contain it yet and the push fast-forwards it."""
    main_moved: str
    """The protected branch on the remote as last fetched (``refs/remotes/R/B``), when it has
    commits the verified HEAD lacks: a push of HEAD would be rejected; empty otherwise."""
    clarify_open: int
    """§5 rows of the latest report (``latest_report``) still open or answered."""
    clarify_phase: str
    """The phase that report is of: what the turn-around runs again."""
    clone_dir: str
    """This clone's main worktree (absolute): where okstra's commands run."""
    start_missing: tuple[str, ...] | None
    """The command (run in ``clone_dir``) that brings the commit this clone's task worktree
    would start from, when the clone has no commit yet and not that one: a claim needs it."""

    def __init__(
        self,
        key: str,
        status: str,
        next_phase: str | None,
        running: tuple[str, str] | None = None,
        run_report: str = "",
        verdict_recorded: bool = False,
        stale_remote: str | None = None,
        unpublished_on: str | None = None,
        remote: str | None = None,
        plan_submitted: bool = False,
        plan_path: str = "",
        approval_reasons: tuple[str, ...] = (),
        latest_report: str = "",
        stages: tuple[StageView, ...] = (),
        task_worktree: str = "",
        task_branch: str = "local",
        merging: tuple[str, ...] | None = None,
        verdict_opens: bool = False,
        verdict: str | None = None,
        verdict_unpublished: bool = False,
        main_push: tuple[str, ...] | None = None,
        clone_dir: str = "/",
        running_by: str = "",
        running_clone: str = "",
        main_moved: str = "",
        clarify_open: int = 0,
        clarify_phase: str = "",
        start_missing: tuple[str, ...] | None = None,
        running_stage: int | None = None,
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
            unpublished_on=unpublished_on,
            remote=remote,
            plan_submitted=plan_submitted,
            plan_path=plan_path,
            approval_reasons=approval_reasons,
            latest_report=latest_report,
            stages=stages,
            task_worktree=task_worktree,
            task_branch=task_branch,
            merging=merging,
            verdict_opens=verdict_opens,
            verdict=verdict,
            verdict_unpublished=verdict_unpublished,
            main_push=main_push,
            clone_dir=clone_dir,
            running_by=running_by,
            running_clone=running_clone,
            main_moved=main_moved,
            clarify_open=clarify_open,
            clarify_phase=clarify_phase,
            start_missing=start_missing,
            running_stage=running_stage,
        )


class Step(Value):
    """The next step: what kind, the command and where it runs, who takes it and why."""

    kind: str
    """One of :data:`KINDS`."""
    argv: tuple[str, ...] | None
    """The command, word by word (None: nothing to run)."""
    cwd: str
    """The absolute folder ``argv`` runs in."""
    who: str
    """``agent``, ``human``, or (``wait``) the holder waited for."""
    why: str
    """The reason, in words."""
    worktree: str
    """``work``: the absolute worktree the work is committed in."""
    stages: tuple[int, ...]
    """``work`` on stages: their numbers."""
    report: str
    """``work``: the absolute file the work writes before ``argv`` runs (its report)."""
    commit: bool
    """``work``: the work is committed in ``worktree`` (a stage's code); a verification or an
    analysis commits nothing, it writes ``report``."""
    also: tuple[str, ...]
    """Other lines worth knowing (each one runs from anywhere)."""

    def __init__(
        self,
        kind: str,
        argv: tuple[str, ...] | None,
        cwd: str,
        who: str,
        why: str,
        worktree: str = "",
        stages: tuple[int, ...] = (),
        report: str = "",
        also: tuple[str, ...] = (),
        commit: bool = False,
    ) -> None:
        init(
            self,
            kind=kind,
            argv=argv,
            cwd=cwd,
            who=who,
            why=why,
            worktree=worktree,
            stages=stages,
            report=report,
            also=also,
            commit=commit,
        )

    @property
    def command(self) -> str | None:
        """The one shell line: ``argv`` made to run from any folder (``git -C cwd …``)."""
        if self.argv is None:
            return None
        return line(self.argv, self.cwd)

    def to_data(self) -> dict[str, object]:
        data: dict[str, object] = {
            "kind": self.kind,
            "argv": list(self.argv) if self.argv is not None else None,
            "cwd": self.cwd,
            "who": self.who,
            "why": self.why,
            "command": self.command,
            "also": list(self.also),
        }
        if self.kind == "work":
            data.update(worktree=self.worktree, stages=list(self.stages), commit=self.commit)
            if self.report:
                data["report"] = self.report
        return data


def line(argv: tuple[str, ...] | list[str], cwd: str) -> str:
    """``argv`` run in ``cwd``, as one quoted line that runs from any folder."""
    if argv[0] == "git" and cwd:
        return command("git", "-C", cwd, *argv[1:])
    return command(*argv)


def okstra_argv(*args: object) -> tuple[str, ...]:
    return ("git", "okstra", *(str(a) for a in args))


def next_step(s: Situation) -> Step:
    """The first rule of the module docstring that applies."""
    if s.stale_remote is not None:
        return _run(
            s,
            ("sync", s.stale_remote),
            f"this clone's records of {s.key} are older than {s.stale_remote}'s; everything "
            "else would be decided on stale records",
        )
    if s.status == "done" or s.next_phase == "done":
        return Step("done", None, s.clone_dir, "none", f"{s.key} is done")
    if s.unpublished_on is not None:
        return _run(
            s,
            ("sync", s.unpublished_on),
            f"{s.key} is in this clone only, not on {s.unpublished_on} yet: publish it, so "
            "other clones see it and every claim and run of it goes through "
            f"{s.unpublished_on} (a claim taken here alone would conflict with theirs)",
        )
    if s.running is not None:
        return _finish(s)
    if s.clarify_open:
        return _clarify(s)
    phase = s.next_phase or ""
    if phase in ANALYSIS_PHASES:
        return _run(s, _start(s, phase), f"{phase} is next")
    if phase in ("implementation", "final-verification"):
        return _implementation(s)  # the gate needs every stage done and integrated first
    if phase == "release-handoff":
        return _after_verdict(s)
    return _run(s, ("task", "show", s.key), f"no rule for phase {phase!r}", who="human")


def _run(s: Situation, args: tuple[object, ...], why: str, who: str = "agent") -> Step:
    """An okstra command, run in this clone."""
    return Step("human" if who == "human" else "run", okstra_argv(*args), s.clone_dir, who, why)


def _sync_args(s: Situation) -> tuple[object, ...]:
    return ("sync", s.remote) if s.remote else ("task", "status", s.key)


def _finish(s: Situation) -> Step:
    assert s.running is not None
    task_type, seq = s.running
    if task_type == "implementation":
        return _implementation(s)
    if s.running_by:
        by = f"{s.running_by} (clone {s.running_clone})"
        return Step(
            "wait",
            okstra_argv(*_sync_args(s)),
            s.clone_dir,
            by,
            f"{task_type} run {seq} is running in another clone ({by}): its work "
            "and its finish are that clone's; "
            + ("sync later to see it" if s.remote else "see it later"),
        )
    # Through the remote when the task is shared: the finish is published at once, leased as
    # the start was, so other clones see the phase move on (docs/concurrency-and-sync.md).
    shared = ("--remote", s.remote) if s.remote else ()
    finish = (
        "run", "finish", s.key, "--type", task_type, "--seq", seq, "--status", "completed",
        *shared,
    )  # fmt: skip
    if task_type == "final-verification":
        if not s.verdict_recorded:
            # A single-stage run's target, report and verdict are its stage's (run start
            # --stage): without --stage each would be the whole task's.
            one = ("--stage", s.running_stage) if s.running_stage is not None else ()
            what = "the task worktree's HEAD" if not one else f"stage {s.running_stage}'s HEAD"
            return Step(
                "work",
                okstra_argv("verify", "record", s.key, *one, "--report", s.run_report),
                s.clone_dir,
                "agent",
                f"final-verification run {seq} is running: verify {what} "
                f"({okstra_line(s, 'verify', 'target', s.key, *one)} shows the target), write "
                f"the report data with its verdict at {s.run_report} (started with the verdict "
                "you reached — accepted, conditional-accept or blocked — by "
                f"{okstra_line(s, 'report', 'init', s.key, *one, '--verdict', 'VERDICT')}), "
                "then record it",
                worktree=s.task_worktree,
                stages=tuple(st.number for st in s.stages),
                report=s.run_report,
            )
        return _run(
            s,
            (*finish, "--report", s.run_report),
            f"final-verification run {seq} recorded its verdict: finish the run with its "
            "report data",
        )
    # report init (run in clone_dir) writes the data beside the report, which render writes
    # from it (X.data.json → X.md).
    data = s.run_report.removesuffix(".md") + ".data.json"
    return Step(
        "work",
        okstra_argv(*finish, "--report", s.run_report),
        s.clone_dir,
        "agent",
        f"{task_type} run {seq} is running: {_run_work(s)}write its report "
        f"at {s.run_report} (start its data with "
        f"{okstra_line(s, 'report', 'init', s.key, '--type', task_type)}, fill its prompts, "
        f"then {okstra_line(s, 'report', 'render', data)} writes it), then finish it",
        worktree=s.clone_dir,
        report=s.run_report,
    )


def _run_work(s: Situation) -> str:
    """The running run's work, as the start of a why: a planning run's is its plan until it is
    approved ('' then)."""
    if s.running is None or s.running[0] != "implementation-planning":
        return "do its work, "
    if not s.plan_submitted:
        return (
            f"write the plan ({okstra_line(s, 'plan', 'init', s.key)} starts it and prints "
            "the commands that take it to its approval: its validate, submit and approve), "
        )
    if s.approval_reasons:
        return f"have the plan approved ({okstra_line(s, 'plan', 'approve', s.key)}), "
    return ""


def taking(step: Step, data: str, report: str = "") -> str | None:
    """The line of ``step`` (its command, or one of ``also``) that records the report written
    from the report data ``data``: the one whose ``--report`` is that report (the Markdown
    beside ``data``) or ``data`` itself, given ``data`` — report data is recorded as it is, so
    nothing needs rendering first. ``report`` (workspace-relative, the ``.md`` the data is of,
    from its header) also matches a ``--report`` of that run's report in any folder: data
    written elsewhere (``report init --out``) is recorded from where it is. None when the step
    records no such report."""
    import shlex

    def stem(path: str) -> str:
        return path.removesuffix(".md").removesuffix(".data.json")

    lines = [step.command] if step.command else []
    for said in [*lines, *step.also]:
        argv = shlex.split(said)
        if "--report" not in argv[:-1]:
            continue
        at = argv.index("--report") + 1
        named = argv[at]
        if data in (named, named.removesuffix(".md") + ".data.json") or (
            report and stem(named).endswith("/" + stem(report))
        ):
            return command(*argv[:at], data, *argv[at + 1 :])
    return None


def plan_steps(key: str, plan: str, clone_dir: str) -> tuple[str, ...]:
    """The commands that take a written plan (``plan``, absolute) to its approval, each one
    line that runs from any folder: validate, submit, approve (``plan init`` prints them; the
    submit then prints the task's step, its approval while it awaits one)."""
    steps = (
        ("plan", "validate", plan, "--task", key),
        ("plan", "submit", key, plan),
        ("plan", "approve", key),
    )
    return tuple(line(okstra_argv(*args), clone_dir) for args in steps)


def okstra_line(s: Situation, *args: object) -> str:
    return line(okstra_argv(*args), s.clone_dir)


def _implementation(s: Situation) -> Step:
    if not s.plan_submitted:
        if s.latest_report:
            return _run(
                s,
                ("plan", "submit", s.key, s.latest_report),
                "implementation starts from a submitted plan: the implementation-planning report",
            )
        return Step(
            "human",
            None,
            s.clone_dir,
            "human",
            "implementation starts from a submitted plan, and this task has no planning "
            "report to submit: write the plan, then "
            + okstra_line(s, "plan", "submit", s.key, "FILE"),
        )
    if s.approval_reasons and s.approval_reasons != ("not-recorded",):
        return _approve(s)
    if s.merging is not None:
        return _finish_merge(s)
    mine = [st for st in s.stages if st.state == "started" and st.mine]
    lost = [st for st in mine if st.worktree and not st.worktree_here]
    if lost:
        return _run(
            s,
            ("stage", "claim", s.key, "--resume", lost[0].run_id),
            f"this clone's run {lost[0].run_id} holds stage {lost[0].number}, whose worktree "
            "is missing here (an interrupted claim?): make it again",
        )
    if mine:
        return _work_on(s, mine)
    lapsed = [st for st in s.stages if st.state == "expired" and st.mine]
    if lapsed:
        # Still this clone's until someone takes it over: renewing keeps its work here.
        return _run(
            s,
            ("stage", "renew", s.key, "--stage", lapsed[0].number),
            f"the lease of this clone's claim of stage {lapsed[0].number} ran out and nobody "
            "has taken it over yet: renew it, then finish its work",
        )
    remote = ("--remote", s.remote) if s.remote else ()
    ready = [st for st in s.stages if st.state == "ready"]
    if ready:
        numbers = ", ".join(str(st.number) for st in ready)
        claim = ("stage", "claim", s.key, *remote)
        if s.start_missing is not None:
            return Step(
                "run",
                s.start_missing,
                s.clone_dir,
                "agent",
                f"ready: stage {numbers}, but this clone has no commit yet, nor the one its "
                "stage worktrees start from: bring it here, then claim "
                f"({okstra_line(s, *claim)})",
            )
        return _run(s, claim, f"ready: stage {numbers}")
    expired = [st for st in s.stages if st.state == "expired"]
    if expired:
        return _run(
            s,
            ("stage", "claim", s.key, "--take-over-expired", *remote),
            f"stage {expired[0].number}'s claim lease expired ({expired[0].holder})",
        )
    pending = [st for st in s.stages if st.state == "done" and not st.integrated]
    if pending:
        numbers = ", ".join(str(st.number) for st in pending)
        return _run(
            s,
            ("integrate", s.key, *remote),
            f"stage {numbers} done but not in the task branch: merge it there"
            + (" and publish it" if s.remote else ""),
        )
    held = [st for st in s.stages if st.state == "started"]
    if held:
        return Step(
            "wait",
            okstra_argv(*_sync_args(s)),
            s.clone_dir,
            held[0].holder,
            f"waiting for stage {held[0].number} ({held[0].holder}); "
            + ("sync later to see it" if s.remote else "see it later"),
        )
    if s.stages and all(st.state == "done" for st in s.stages):
        if s.task_branch in ("behind", "missing-here", "diverged", "unpublished", "ahead") or (
            not s.task_worktree
        ):
            return _run(
                s,
                ("integrate", s.key, *remote),
                "every stage is integrated, but "
                + {
                    "behind": "the task branch here is behind the published one",
                    "missing-here": "this clone has no task branch yet",
                    "diverged": "the task branch here differs from the published one",
                    "unpublished": "the task branch is not published yet",
                    "ahead": "the task branch here has commits the published one lacks",
                }.get(s.task_branch, "this clone has no task worktree yet")
                + ": bring it in step",
            )
        return _run(
            s,
            _start(s, "final-verification"),
            "every stage is done and integrated: verify the whole task (the run start checks "
            "the gate)",
        )
    blocked = ", ".join(str(st.number) for st in s.stages)
    return _run(s, ("stage", "ready", s.key), f"no stage is ready ({blocked})")


def _work_on(s: Situation, mine: list[StageView]) -> Step:
    first = mine[0]
    done = _stage_done(s, first)
    also = tuple(line(_stage_done(s, st), s.clone_dir) for st in mine[1:])
    if first.worktree:
        where = f"commit it in {first.worktree}"
    else:
        # Claimed with --no-worktree: the work is committed in this clone's checkout, whose
        # HEAD ``stage done --head HEAD`` (run there) records as the stage's head.
        where = (
            f"commit it in this clone's checkout, {s.clone_dir} (claimed without a worktree: "
            "stage done records its HEAD as the stage's head; --head SHA names another commit)"
        )
    return Step(
        "work",
        done,
        s.clone_dir,
        "agent",
        f"stage {first.number} is claimed by this clone: do its work and {where}, "
        f"write its report at {first.report}, then mark it done",
        worktree=first.worktree or s.clone_dir,
        stages=(first.number,),
        report=first.report,
        also=also,
        commit=True,
    )


def _stage_done(s: Situation, st: StageView) -> tuple[str, ...]:
    """``stage done`` of this clone's stage ``st``; one claimed without a worktree has no
    worktree HEAD to record, so it names the checkout's (``--head HEAD``, run in the clone)."""
    head = () if st.worktree else ("--head", "HEAD")
    return okstra_argv("stage", "done", s.key, "--stage", st.number, "--report", st.report, *head)


def _clarify(s: Situation) -> Step:
    """Seed 002: while the latest report's §5 has rows open or answered, the first next step
    is the clarification turn-around — the user answers in the report, and the phase runs
    again with the answers carried in."""
    rerun = _start(s, s.clarify_phase) if s.clarify_phase else None
    return _run(
        s,
        ("clarify", "resume", s.key),
        f"the latest report ({s.latest_report}) has {s.clarify_open} clarification item(s) "
        "open or answered: answer them in its §5 table, then the turn-around stages the "
        "report for the next run" + (f" and {s.clarify_phase} runs again with it" if rerun else ""),
        who="human",
    ).replace(also=(okstra_line(s, *rerun),) if rerun else ())


def _approve(s: Situation) -> Step:
    reasons = set(s.approval_reasons)
    if "invalid-plan" in reasons:
        return _run(
            s,
            ("plan", "validate", s.plan_path, "--task", s.key),
            "the plan fails its Stage Map checks: fix them, then submit it again",
        )
    if reasons & {"blockers-open", "section-5-unreadable"}:
        return _run(
            s,
            ("clarify", "status", s.plan_path),
            "clarification items block the approval: answer or resolve them",
            who="human",
        )
    return _run(
        s,
        ("plan", "approve", s.key, *(("--remote", s.remote) if s.remote else ())),
        "the plan waits for a person's approval"
        + (" (edited since it was approved)" if "stale" in reasons else ""),
        who="human",
    )


def _finish_merge(s: Situation) -> Step:
    assert s.merging is not None
    paths = ", ".join(s.merging) or "none left"
    abort = line(("git", "merge", "--abort"), s.task_worktree)
    remote = ("--remote", s.remote) if s.remote else ()
    return Step(
        "human",
        ("git", "commit", "--no-edit"),
        s.task_worktree,
        "human",
        f"a merge is left unfinished in the task worktree {s.task_worktree} "
        f"(conflicted: {paths}): resolve and `git add` them, commit, then publish with "
        f"{okstra_line(s, 'integrate', s.key, *remote)}; or give it up with {abort}",
        also=(okstra_line(s, "integrate", s.key, *remote), abort),
    )


def _after_verdict(s: Situation) -> Step:
    if s.merging is not None:
        return _finish_merge(s)
    if s.remote and (s.task_branch != "same" or not s.task_worktree):
        # What is verified and landed is the one published task branch (docs/workflow.md).
        return _run(
            s,
            ("integrate", s.key, "--remote", s.remote),
            "the task branch here is not the published one ("
            + s.task_branch.replace("-", " ")
            + "): bring it in step first",
        )
    if not s.verdict_opens:
        return _run(
            s,
            _start(s, "final-verification"),
            "the task's HEAD carries no accepted whole-task verdict (it moved after the "
            "verdict, or the verdict was not accepted): verify it again",
        )
    if s.verdict_unpublished and s.remote:
        return _run(
            s,
            ("sync", s.remote),
            "the accepted verdict is recorded here only: publish it (CI, the server gate and "
            "other clones read it from the remote)",
        )
    if s.main_moved:
        return _merge_main(s)
    if s.main_push is not None:
        return Step(
            "human",
            s.main_push,
            s.clone_dir,
            "human",
            "an accepted whole-task verdict is on the task's HEAD: land it on the protected "
            "branch (the gate lets it through now)",
        )
    return _run(
        s,
        _start(s, "release-handoff"),
        "an accepted whole-task verdict is on the task's HEAD",
    )


def _merge_main(s: Situation) -> Step:
    """The protected branch moved on the remote since the verified HEAD was based on it: bring
    its commits into the task branch with a merge (a rebase would rewrite the published task
    branch). A merge that changes no file — the remote's new commits are ones the task has —
    keeps the verdict, which the gate matches by tree (docs/security.md); any other is a new
    tree to verify, which the next step after it says."""
    theirs = s.main_moved.removeprefix("refs/remotes/")
    remote, _, branch = theirs.partition("/")
    fetch = line(("git", "fetch", remote, branch), s.clone_dir)
    return Step(
        "human",
        ("git", "merge", "--no-edit", theirs),
        s.task_worktree,
        "human",
        f"{branch} on {remote} has commits the verified HEAD lacks, so pushing HEAD there would "
        f"be rejected (non-fast-forward): merge {theirs} into the task branch (fetch it first "
        f"for the newest: {fetch}). If the merge changes no file the verdict still holds (the "
        "gate matches the tree) and the push comes next; otherwise the merged HEAD is "
        "verified again",
        also=(fetch,),
    )


def _start(s: Situation, phase: str) -> tuple[object, ...]:
    """``run start`` of ``phase``; through the remote when the task is shared, so no other
    clone starts the same run."""
    return ("run", "start", s.key, "--type", phase, *(("--remote", s.remote) if s.remote else ()))


STATE_COMMANDS = (
    ("task",), ("stage",), ("run",), ("integrate",), ("verify",), ("worktree",),
    ("plan", "status"), ("plan", "approve"),
)  # fmt: skip
"""The commands (or groups) refused for where the task stands, not for a file they were
given: their refusals hint with the task's next step."""


def refusal_hint(
    step: dict[str, object] | None, refused: tuple[str, ...], own: str | None
) -> str | None:
    """The hint a refusal of the command ``refused`` (its words: ``("stage", "claim")``)
    prints: the task's next step's command (``step``: ``Step.to_data()``), as every other
    "what now" — unless the step has nothing to run, or is that very command, which would
    only be refused again for a reason the state does not show (a merge that would
    conflict, a file that fails its checks): then the refusal's own fix, ``own``. A refusal
    of a command about a file (``report …``, ``plan submit``: the file exists, fails its
    checks) keeps its own fix too, which names the file; ``next`` still carries the step.
    An own fix is made :func:`absolute` in the step's clone (``cwd``)."""
    cwd = step.get("cwd") if step is not None else None
    if own is not None and isinstance(cwd, str):
        own = absolute(own, cwd)
    if own is not None and not any(refused[: len(c)] == c for c in STATE_COMMANDS):
        return own
    said = step.get("command") if step is not None else None
    argv = step.get("argv") if step is not None else None
    if not isinstance(said, str) or not isinstance(argv, list):
        return own
    if own is not None and tuple(argv[2 : 2 + len(refused)]) == refused:
        return own
    return said


def absolute(hint: str, cwd: str) -> str:
    """A refusal's own one-line ``git okstra …`` fix, made to run from any folder as every
    step does (``git -C cwd okstra …``). Anything else stays as it is: a line with ``-C``
    already, several lines, another program — and a fix naming a relative path (a file the
    user gave, relative to where they are, which ``-C`` would read from elsewhere)."""
    if not hint.startswith("git okstra ") or "\n" in hint:
        return hint
    import shlex

    argv = shlex.split(hint)
    if any(_relative_path(word) for word in argv[2:]):
        return hint
    return line(argv, cwd)


def _relative_path(word: str) -> bool:
    if word.startswith(("/", "-")) or "://" in word:
        return False
    return "/" in word or word.endswith((".md", ".json", ".txt"))
