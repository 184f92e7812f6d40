"""Plans in the task and the approval gate (docs/workflow.md).

A submitted plan is snapshotted into the task ref as ``plans/plan-<seq>.md`` (each snapshot is
immutable: new content gets a new seq). An approval is a note on the plan's blob in
``refs/notes/okstra/approvals``, so editing the plan after approval leaves the approval on the
old blob: the plan is then "stale" until approved again.

Approval writes (``plan approve``, and method A recorded by ``ensure_approved``) hold a
per-task lock file in the common git dir: racing approvers on one machine queue, and the second
finds the plan already approved instead of adding a second audit line and note line. The notes
ref itself is updated by compare-and-swap, so racers across machines or lock-less writers can
never corrupt it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import BadInput, Conflict, Refused
from ..core.keys import TaskKey
from ..core.shell import command, okstra
from ..core.strict import is_digits, one_line
from ..core.userfiles import sweep_dead_temps, write_atomic
from ..core.values import Value, init
from ..git.repo import RefUpdate
from ..logic.clarify import (
    ApprovalText,
    ClarificationItem,
    append_audit_line,
    approval_problems,
    flip_marker,
    read_approval_text,
)
from ..logic.planfile import PlanFile, Validation, blob_id, read_plan_file, validate_text
from ..logic.stagemap import StageMap
from ..logic.workspace import OKSTRA_DIR
from ..records.approval import APPROVALS_REF, Approval, approval_notes_update, read_approvals
from ..records.task import (
    PlanRef,
    Task,
    TaskState,
    event_commit,
    now_iso,
    require_task,
    task_ref,
    write_event,
)
from .context import Context
from .snapshots import PLANS_DIR, no_plan_message, snapshot, snapshot_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..logic.nextstep import Step

_LOCK_TIMEOUT = 60.0


def _refuse_invalid(
    ctx: Context, key: TaskKey, validation: Validation, doing: str, file: str | Path | None = None
) -> None:
    """Refuse a plan whose Stage Map fails; an unreadable §5 is the approval gate's to refuse.
    The fix validates ``file`` (default: the path the findings name, as the user gave it) for
    the task, as plan init prints it: ``git -C <clone>`` with the file absolute (a relative
    one would be read from the clone, ``git -C``'s folder, not the one it was given in), so
    it runs from any folder, and once the plan is valid it ends with the task's next step."""
    if validation.findings or validation.unfilled:
        from ..logic.nextstep import line, okstra_argv

        plan = Path(file or validation.path).resolve()
        check = line(okstra_argv("plan", "validate", plan, "--task", key), ctx.clone_dir)
        failed = len(validation.findings) + len(validation.unfilled)
        raise Refused(
            f"plan {validation.path} fails {failed} Stage Map check(s), so "
            f"okstra will not {doing} it; fix them ({check}):\n"
            f"{validation.report(stage_map_only=True)}",
            hint=check,
        )


# ---------------------------------------------------------------------------------------------
# Plans in the task


def _work_relative(ctx: Context, file: str) -> str:
    """``file`` as a path relative to the work tree; plans must live inside it."""
    workdir = _require_workdir(ctx)
    one_line(file, "plan file name")  # it is shown in directives and printed commands
    path = Path(file).resolve()
    if not path.is_relative_to(workdir):
        raise BadInput(
            f"plan {file} is outside the repository's work tree {workdir}; keep plans in the "
            f"repository (e.g. docs/plans/) so every worktree and clone sees the same file"
        )
    return path.relative_to(workdir).as_posix()


def _require_workdir(ctx: Context) -> Path:
    if ctx.workdir is None:
        raise BadInput(f"{ctx.repo.git_dir} is a bare repository: plans live in a work tree")
    return ctx.workdir.resolve()


def _snapshot_seqs(ctx: Context, head: str) -> list[str]:
    """The task's plan snapshot seqs, newest first."""
    names = ctx.repo.list_dir(head, PLANS_DIR)
    seqs = [n[5:-3] for n in names if n.startswith("plan-") and n.endswith(".md")]
    return sorted((seq for seq in seqs if is_digits(seq)), key=int, reverse=True)


def _snapshot_change(
    ctx: Context, plan: PlanFile, relpath: str, task: Task, head: str
) -> dict[str, bytes | None]:
    """Point ``task.latest_plan`` at ``plan``, adding a snapshot file unless it is the latest."""
    current = task.latest_plan
    if current is not None and current.blob == plan.blob:
        task.latest_plan = PlanRef(current.seq, relpath, plan.blob)
        return {}
    seqs = _snapshot_seqs(ctx, head)
    seq = f"{int(seqs[0]) + 1 if seqs else 1:03d}"
    task.latest_plan = PlanRef(seq, relpath, plan.blob)
    return {snapshot_path(seq): plan.raw}


def _adopt_plan(
    ctx: Context,
    key: TaskKey,
    plan: PlanFile,
    relpath: str,
    approved: bool,
    event: str,
    also: Callable[[], RefUpdate | None] | None = None,
) -> TaskState:
    """Make the task follow ``plan`` (snapshotted unless it is the latest already), ready for
    implementation when ``approved``, else waiting for the user's approval."""
    change = _follow(ctx, plan, relpath, approved)
    return write_event(ctx.repo, key, change, event, also, APPROVALS_REF if also else None)


def _follow(
    ctx: Context, plan: PlanFile, relpath: str, approved: bool
) -> Callable[[Task | None, str | None], tuple[Task, dict[str, bytes | None]]]:
    """The task change of :func:`_adopt_plan`, for ``write_event`` or a claim's transaction."""

    def change(task: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        assert task is not None and head is not None
        files = _snapshot_change(ctx, plan, relpath, task, head)
        flow = task.workflow
        flow.awaiting_approval = not approved
        flow.routing_status = "ready" if approved else "awaiting-approval"
        flow.next_recommended_phase = "implementation"
        task.current_status = "active" if approved else "awaiting-approval"
        return task, files

    return change


class Submitted(Value):
    state: TaskState
    """The task after the submit (unchanged when the plan was already submitted)."""
    plan: PlanRef
    """The snapshot the task now follows."""
    created: bool
    """False when this exact content at this path was already the task's plan."""
    validation: Validation


def submit_plan(ctx: Context, key: TaskKey, file: str) -> Submitted:
    """Validate the plan, snapshot it into the task and wait for the user's approval."""
    plan = read_plan_file(file)
    validation = validate_text(plan.text, file)
    _refuse_invalid(ctx, key, validation, "submit")
    relpath = _work_relative(ctx, file)
    state = require_task(ctx.repo, key)
    latest = state.task.latest_plan
    if latest is not None and (latest.blob, latest.path) == (plan.blob, relpath):
        return Submitted(state, latest, False, validation)
    # Content that already carries this task's approval (a re-submit of the approved plan)
    # does not go back to waiting.
    approved = bool(read_approvals(ctx.repo, plan.blob, str(key))) and not approval_problems(
        plan.text, relpath, key=str(key)
    )
    state = _adopt_plan(ctx, key, plan, relpath, approved, f"plan submit {relpath}")
    assert state.task.latest_plan is not None
    return Submitted(state, state.task.latest_plan, True, validation)


def submit_first(ctx: Context, key: TaskKey, file: str) -> Step | None:
    """The step after ``plan validate FILE --task KEY`` found ``file`` valid, when it is not
    the task's next step (None): while the task's implementation-planning run runs and
    ``file`` is not the plan the task follows, submitting it. The task's step is then the
    run's finish, which would leave the plan just written unsubmitted."""
    from ..logic.nextstep import Step, okstra_argv

    state = require_task(ctx.repo, key)
    run, latest = state.task.latest_run, state.task.latest_plan
    planning = (
        run is not None and run.status == "running" and run.task_type == "implementation-planning"
    )
    plan = read_plan_file(file)
    if not planning or (
        latest is not None and (latest.blob, latest.path) == (plan.blob, _work_relative(ctx, file))
    ):
        return None
    return Step(
        "run",
        okstra_argv("plan", "submit", key, Path(file).resolve()),
        str(ctx.clone_dir),
        "agent",
        f"the plan is valid and {key} does not follow it yet: submit it (it then waits for "
        "approval), then finish the planning run",
    )


# ---------------------------------------------------------------------------------------------
# Where the approval stands


class Assessment(Value):
    """Whether the task's plan is approved (docs/workflow.md, checks 1–3) and every reason it is
    not."""

    state: TaskState
    plan: PlanFile | None
    """The plan as read (work tree, else the snapshot); None when no plan was submitted."""
    relpath: str | None
    """The plan path relative to the work tree."""
    source: str
    """``work tree``, ``snapshot`` or ``none``: where ``plan`` was read from."""
    reasons: list[str]
    """Codes: ``no-plan``, ``invalid-plan``, ``marker-missing``, ``blockers-open``,
    ``section-5-unreadable``, ``stale``, ``not-recorded``. Empty when approved."""
    messages: list[str]
    """One paragraph per reason, as refusals print them (``not-recorded`` has none: nothing
    refuses it, ``plan status`` words it in views/plan.py)."""
    approvals: list[Approval]
    """This task's approval notes on the current blob."""
    approved_blob: str | None
    """When stale: the newest earlier snapshot that carries this task's approval."""
    blockers: list[ClarificationItem]
    """Unresolved ``Blocks=approval`` rows of §5."""
    validation: Validation | None
    """The plan's Stage Map and checks (None when no plan was submitted)."""
    stale_checkout: str | None
    """When the work tree holds a superseded snapshot of the task's plan (a checkout of an
    older commit): that, in words. The task's own plan is judged instead."""

    def __init__(
        self,
        state: TaskState,
        plan: PlanFile | None,
        relpath: str | None,
        source: str,
        reasons: list[str],
        messages: list[str],
        approvals: list[Approval] | None = None,
        approved_blob: str | None = None,
        blockers: list[ClarificationItem] | None = None,
        validation: Validation | None = None,
        stale_checkout: str | None = None,
    ) -> None:
        init(
            self,
            state=state,
            plan=plan,
            relpath=relpath,
            source=source,
            reasons=reasons,
            messages=messages,
            approvals=[] if approvals is None else approvals,
            approved_blob=approved_blob,
            blockers=[] if blockers is None else blockers,
            validation=validation,
            stale_checkout=stale_checkout,
        )

    @property
    def key(self) -> TaskKey:
        return self.state.key

    @property
    def approved(self) -> bool:
        return not self.reasons

    @property
    def recordable(self) -> bool:
        """Approved by its text alone (method A): only the note is missing."""
        return self.reasons == ["not-recorded"]


def _assess(ctx: Context, state: TaskState) -> Assessment:
    key = state.key
    latest = state.task.latest_plan
    if latest is None:
        return Assessment(state, None, None, "none", ["no-plan"], [no_plan_message(key)])
    local = ctx.workdir / latest.path if ctx.workdir is not None else None
    stale = None
    if local is not None and local.exists():
        plan, source = read_plan_file(local).replace(path=latest.path), "work tree"
        older = _snapshot_seq_of(ctx, state, plan.blob)
        if older is not None and older != latest.seq:
            stale = (
                f"{latest.path} in this checkout is plan-{older} of {key} (blob "
                f"{plan.blob[:12]}), superseded by plan-{latest.seq} (blob {latest.blob[:12]}); "
                f"okstra follows plan-{latest.seq} stored in the task, not this file (see it: "
                f"{command('git', 'show', f'{task_ref(key)}:{snapshot_path(latest.seq)}')})"
            )
            plan, source = snapshot(ctx, state, latest), "snapshot"
    else:
        plan, source = snapshot(ctx, state, latest), "snapshot"
    found = _assess_content(ctx, state, plan, latest.path, source)
    if stale is None:
        return found
    messages = [*found.messages, stale] if found.reasons else found.messages
    return found.replace(stale_checkout=stale, messages=messages)


def _snapshot_seq_of(ctx: Context, state: TaskState, blob: str) -> str | None:
    """The seq of the task's plan snapshot holding exactly ``blob``, if one does."""
    for name, oid in ctx.repo.dir_entries(state.head, PLANS_DIR).items():
        if oid == blob and name.startswith("plan-") and name.endswith(".md"):
            return name[5:-3]
    return None


def _hand_approval(
    ctx: Context, state: TaskState, plan: PlanFile, relpath: str, source: str, when: str
) -> Approval:
    """The method A record of a marker ticked by hand, attributed to whoever ticked it: the
    author of the task event that stored the ticked plan, else of the commit that brought the
    ticked file into this checkout; only an uncommitted tick is this clone's user's own. The
    recorder (this user, at the first claim) is kept beside when that is someone else."""
    me = ctx.repo.identity()
    seq = _snapshot_seq_of(ctx, state, plan.blob)
    head = ctx.repo.head_commit() if source == "work tree" else None
    if seq is not None:
        arrived = ctx.repo.introduced_by(state.head, snapshot_path(seq), plan.blob)
    elif head is not None:
        arrived = ctx.repo.introduced_by(head, relpath, plan.blob)
    else:
        arrived = None
    ticked_by = ctx.repo.commit_info(arrived).author if arrived is not None else me
    return Approval(
        task_key=str(state.key),
        plan_path=relpath,
        blob=plan.blob,
        approved_by=ticked_by,
        approved_at=when,
        method="A",
        recorded_by=me if ticked_by != me else None,
    )


@functools.lru_cache(maxsize=32)
def _read_plan(text: str, relpath: str) -> tuple[Validation, ApprovalText]:
    """The Stage Map checks and the approval text of a plan: a function of its content alone.

    A claim assesses the plan twice (the first look, then under the task ref's lock), and an
    agent claiming in one process assesses the same plan claim after claim; parsing it each
    time was a third of a claim. The values are immutable, so sharing them is safe.
    """
    return validate_text(text, relpath), read_approval_text(text)


def _assess_content(
    ctx: Context, state: TaskState, plan: PlanFile, relpath: str, source: str
) -> Assessment:
    key = state.key
    reasons: list[str] = []
    messages: list[str] = []
    validation, own = _read_plan(plan.text, relpath)
    if validation.findings or validation.unfilled:
        reasons.append("invalid-plan")
        failed = len(validation.findings) + len(validation.unfilled)
        messages.append(
            f"plan {relpath} fails {failed} Stage Map check(s):\n"
            + validation.report(stage_map_only=True)
        )
    if not own.marker_set:
        reasons.append("marker-missing")
    if own.blockers:
        reasons.append("blockers-open")
    if own.clarification.malformed:
        reasons.append("section-5-unreadable")
    messages += own.problems(relpath, key=str(key))

    approvals = read_approvals(ctx.repo, plan.blob, str(key))
    approved_blob = None
    if not approvals:
        approved_blob = _last_approved_blob(ctx, state, plan.blob)
        if approved_blob is not None:
            reasons.append("stale")
            messages.append(
                f"approval stale because the plan changed after approval: {relpath} is now "
                f"blob {plan.blob}, but the approval of {key} is on blob {approved_blob}; "
                f"review the change (git diff {approved_blob} {plan.blob}) and approve again: "
                f"{okstra('plan', 'approve', key)}"
            )
        elif not reasons:
            reasons.append("not-recorded")
    return Assessment(
        state,
        plan,
        relpath,
        source,
        reasons,
        messages,
        approvals,
        approved_blob,
        own.blockers,
        validation,
    )


def _last_approved_blob(ctx: Context, state: TaskState, current: str) -> str | None:
    """The newest plan snapshot of the task, other than ``current``, approved for this task."""
    for seq in _snapshot_seqs(ctx, state.head):
        raw = ctx.repo.read_path(state.head, snapshot_path(seq))
        if raw is None:
            continue
        blob = blob_id(raw)
        if blob != current and read_approvals(ctx.repo, blob, str(state.key)):
            return blob
    return None


def plan_status(ctx: Context, key: TaskKey) -> Assessment:
    """Where the approval of the task's plan stands; never writes."""
    return _assess(ctx, require_task(ctx.repo, key))


# ---------------------------------------------------------------------------------------------
# Approving


@contextmanager
def _approval_lock(ctx: Context, key: TaskKey) -> Iterator[None]:
    import filelock  # deferred: only approval writes need it

    path = ctx.repo.common_dir / "okstra-locks" / "approve" / f"{key.ref_suffix}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(path), timeout=_LOCK_TIMEOUT)
    try:
        with lock:
            yield
    except filelock.Timeout as exc:
        raise Conflict(
            f"another okstra process has been approving {key} for {_LOCK_TIMEOUT:.0f}s "
            f"(lock {path}); wait for it and run the command again"
        ) from exc


def _record(
    ctx: Context, state: TaskState, plan: PlanFile, approval: Approval
) -> tuple[TaskState, Approval]:
    """Snapshot ``plan`` as the task's approved plan and note the approval on its blob, in one
    transaction: never an approval the task does not follow, nor the reverse."""
    state = _adopt_plan(
        ctx,
        state.key,
        plan,
        approval.plan_path,
        True,
        _approve_event(approval),
        also=lambda: approval_notes_update(ctx.repo, approval),
    )
    return state, approval


def _approve_event(approval: Approval) -> str:
    by = f", ticked by {approval.approved_by}" if approval.recorded_by else ""
    return f"plan approve {approval.plan_path} (method {approval.method}{by})"


def _point_at(ctx: Context, state: TaskState, plan: PlanFile, relpath: str) -> TaskState:
    """Make the task follow ``plan`` (already approved) when its snapshot is another one."""
    latest = state.task.latest_plan
    if latest is not None and (latest.blob, latest.path) == (plan.blob, relpath):
        return state
    return _adopt_plan(ctx, state.key, plan, relpath, True, f"plan follow approved {relpath}")


def _rewrite_plan(workdir: Path, path: Path, data: bytes, expected: bytes) -> None:
    """Replace the plan by ``data`` atomically, unless someone changed it meanwhile.

    The temp file is written under the work tree's ``.okstra/tmp/`` (every clean-tree check
    ignores ``.okstra/``, and ``init`` excludes it), so a kill mid-write never leaves a file that
    ``git status`` shows beside the plan; leftovers of killed writers are swept here.
    """
    if path.read_bytes() != expected:
        raise Conflict(f"{path} changed while okstra was approving it; run the command again")
    temp_dir = workdir / OKSTRA_DIR / "tmp"
    sweep_dead_temps(temp_dir)
    write_atomic(path, data, "plan", temp_dir=temp_dir)


class Approved(Value):
    """What ``plan approve`` did."""

    state: TaskState
    path: str
    """The plan, relative to the work tree."""
    blob: str
    """The approved blob (the note is on it)."""
    approval: Approval
    """The approval in force: the new one, or the one found when already approved."""
    changed_file: bool
    """Whether the marker was ticked and the audit line added to the file."""
    already: bool
    """True when the plan was already approved as it stands: nothing was written."""


def approve_plan(ctx: Context, key: TaskKey, file: str | None = None) -> Approved:
    """Method B: check §5, tick the marker, add the audit line and record the approval."""
    workdir = _require_workdir(ctx)
    relpath = _work_relative(ctx, file) if file is not None else None
    with _approval_lock(ctx, key):
        state = require_task(ctx.repo, key)
        if relpath is None:
            if state.task.latest_plan is None:
                raise Refused(no_plan_message(key))
            relpath = state.task.latest_plan.path
        path = workdir / relpath
        plan = read_plan_file(path).replace(path=relpath)
        # The findings name the plan as the task records it (the work tree's path); the fix
        # names it absolute, as it runs from any folder.
        _refuse_invalid(ctx, key, validate_text(plan.text, relpath), "approve", path)
        own = read_approval_text(plan.text)
        problems = own.problems(relpath, key=str(key), require_marker=False)
        if problems:
            raise Refused("\n".join(problems))
        checked = own.marker_set
        when = now_iso()
        if checked:
            found = read_approvals(ctx.repo, plan.blob, str(key))
            if found:
                state = _point_at(ctx, state, plan, relpath)
                return Approved(state, relpath, plan.blob, found[0], False, True)
        else:
            # flip_marker refuses (exit 2) a plan without exactly one marker line.
            text = append_audit_line(flip_marker(plan.text, relpath), when, path=relpath)
            new = PlanFile(relpath, text.encode("utf-8"), text)
            _rewrite_plan(workdir, path, new.raw, plan.raw)
            plan = new
        approval = Approval(str(key), relpath, plan.blob, ctx.repo.identity(), when, "B")
        state, approval = _record(ctx, state, plan, approval)
        return Approved(state, relpath, plan.blob, approval, not checked, False)


def approve_plan_shared(ctx: Context, remote: str, key: TaskKey, file: str | None) -> Approved:
    """``plan approve --remote R``: approve on the task as ``remote`` holds it and publish the
    approval (the task's event and the approval note) at once, leased as ``run finish
    --remote`` is. Approved after the planning run was finished (the order its steps print),
    it had stayed in this clone: every other clone saw the plan still waiting for a person."""
    from .published import through_remote

    def act(_state: TaskState) -> tuple[TaskState, Approved]:
        done = approve_plan(ctx, key, file)
        return done.state, done

    return through_remote(ctx, remote, key, "approval of its plan", act, notes=(APPROVALS_REF,))[1]


class ApprovedPlan(Value):
    """An approved plan, as the stage-claim gate needs it."""

    path: str
    """Plan path relative to the work tree."""
    blob: str
    """Blob id the approval note is on."""
    stage_map: StageMap
    """The plan's validated Stage Map."""
    stale_checkout: str | None = None
    """The work tree's plan file is an older snapshot, not used (:class:`Assessment`)."""


def approve_in_claim(
    ctx: Context, state: TaskState
) -> tuple[ApprovedPlan, TaskState, list[RefUpdate]]:
    """The approval gate of a claim, run inside the claim's transaction on the task ref.

    Returns the approved plan and, when the task must first record a hand approval (method
    A) or follow the approved plan, the task state after that event — written, not landed —
    for the claim's own event to go on top of, with the approval note's update. Landing them
    with the claim means a claim that never lands (or is undone after losing on a remote)
    leaves no approval event or note behind; a published claim carries both.
    """
    assessment = _assess(ctx, state)
    if assessment.approved and _follows(assessment):
        return _approved_plan(assessment), state, []
    if not (assessment.approved or assessment.recordable):
        raise Refused("\n".join(assessment.messages))
    plan, relpath = assessment.plan, assessment.relpath
    assert plan is not None and relpath is not None
    notes: list[RefUpdate] = []
    event = f"plan follow approved {relpath}"
    if assessment.recordable:
        approval = _hand_approval(ctx, state, plan, relpath, assessment.source, now_iso())
        update = approval_notes_update(ctx.repo, approval)
        notes = [update] if update is not None else []
        event = _approve_event(approval) + ", recorded by the first claim"
    task, files = _follow(ctx, plan, relpath, True)(state.task, state.head)
    commit = event_commit(ctx.repo, state.key, task, state.head, files, event)
    return _approved_plan(assessment), TaskState(state.key, task, commit), notes


def ensure_approved(ctx: Context, key: TaskKey) -> ApprovedPlan:
    """Refuse (exit 1, with the texts of docs/workflow.md) unless the task's plan is approved;
    method A records.

    The plan is read from the work tree (the snapshot when the file is absent). A marker ticked
    by hand with §5 clear and no approval yet is recorded here (method A), with the content
    snapshotted into the task. A plan edited after its approval is refused as stale.
    """
    assessment = _assess(ctx, require_task(ctx.repo, key))
    if assessment.approved and _follows(assessment):
        return _approved_plan(assessment)
    if not (assessment.approved or assessment.recordable):
        raise Refused("\n".join(assessment.messages))
    with _approval_lock(ctx, key):
        # Re-read under the lock: a racer may have recorded it meanwhile.
        assessment = _assess(ctx, require_task(ctx.repo, key))
        plan, relpath = assessment.plan, assessment.relpath
        assert plan is not None and relpath is not None
        if assessment.recordable:
            state = assessment.state
            approval = _hand_approval(ctx, state, plan, relpath, assessment.source, now_iso())
            _record(ctx, state, plan, approval)
        elif assessment.approved:
            _point_at(ctx, assessment.state, plan, relpath)
        else:
            raise Refused("\n".join(assessment.messages))
    return _approved_plan(assessment)


def check_approved(ctx: Context, key: TaskKey) -> ApprovedPlan:
    """:func:`ensure_approved` without writing, for read-only commands (``stage ready``): a
    marker ticked by hand counts as it will at the claim, but nothing is recorded here."""
    assessment = _assess(ctx, require_task(ctx.repo, key))
    if not (assessment.approved or assessment.recordable):
        raise Refused("\n".join(assessment.messages))
    return _approved_plan(assessment)


def _follows(assessment: Assessment) -> bool:
    latest = assessment.state.task.latest_plan
    return (
        latest is not None and assessment.plan is not None and latest.blob == assessment.plan.blob
    )


def _approved_plan(assessment: Assessment) -> ApprovedPlan:
    assert assessment.plan is not None and assessment.relpath is not None
    assert assessment.validation is not None
    return ApprovedPlan(
        assessment.relpath,
        assessment.plan.blob,
        assessment.validation.stage_map,
        assessment.stale_checkout,
    )
