"""``task status``: one overview of a task and the exact next command
(docs/concurrency-and-sync.md).

Phase, plan and approval, every Stage Map stage (state, holder, lease, done commit, merged
into the task worktree?), the latest verdict on the task's HEAD, how the local records stand
against each remote's fetched copy, and ``next`` (``nextstep``). Everything is read from this
clone — local task and claim refs, notes as local ∪ fetched (``notesview``) — without network:
run ``sync`` first to see other machines' latest, which ``next`` says when a fetch brought
newer records. No jsonschema and no Jinja here: it is a read agents call often.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core.errors import BadInput, OkstraError, Refused
from ..core.keys import TaskKey
from ..core.values import Record, Value
from ..git.repo import GitRepo
from ..logic import batch as batching
from ..logic.nextstep import Situation, StageView, Step, next_step
from ..logic.phases import FINAL_VERIFICATION
from ..logic.workspace import run_paths, stage_report_path
from ..records.claim import Claim, claim_holder, claims_prefix, load_claims
from ..records.task import Task, TaskState, require_task, task_ref
from . import remoteview
from .branches import BranchState
from .context import Context

if TYPE_CHECKING:
    from ..records.verdict import Verdict


class StageStatus(Value):
    """One Stage Map stage in ``task status``."""

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
    """A live claim of this clone (``services/identity.py``)."""
    merged: bool | None
    """A done stage: its done commit is in the task worktree HEAD; None when that commit is
    not in this repository (sync brings it) or the stage is not done."""
    merge_ref: str
    """What ``git merge`` needs for it here: its stage branch when at the done commit, else
    the commit."""
    fetched_from: str | None = None
    """The remote whose fetched claim record this is, newer than this clone's (only when the
    status was read with ``fetched``); None: the local record."""
    integrated: bool | None = None
    """A done stage: its done commit is in the published task branch (the local one when the
    task is not shared); None: not done."""


class PlanStatus(Value):
    """The task's latest plan and its approval, in ``task status``."""

    seq: str
    path: str
    blob: str
    read_from: str
    """Where the plan was read from (``plans.PlanStatus.source``)."""
    approved: bool
    reasons: list[str]
    """Why it is not approved."""
    approved_by: str | None
    approved_at: str | None
    method: str | None
    """The newest approval's; None: no approval recorded."""


class VerdictStatus(Value):
    """The newest verdict on a commit and whether it opens the gate there, as the pre-push
    hook would judge it; or, ``error`` set, why it cannot be judged (the gate's config)."""

    head: str
    """The commit judged."""
    opens_gate: bool
    error: str | None = None
    verdict: str = ""
    scope: str = ""
    recorded_on: str = ""
    """The commit the verdict was recorded on (``head`` or one with its tree)."""
    recorded_at: str = ""
    recorded_by: str = ""
    why: str | None = None
    """Why it does not open the gate."""


class TaskStatus(Record):
    """Everything ``task status`` shows."""

    state: TaskState
    plan: PlanStatus | None
    stages: list[StageStatus]
    task_branch: str
    task_head: str | None
    task_worktree: str
    verdict: VerdictStatus | None
    published_verdict: VerdictStatus | None
    """The newest verdict on the task branch ``remote`` published, when this clone's task
    branch is not that one (behind it, diverged, or none here): what an accepted task shows in
    a clone that has not integrated it yet."""
    lag: list[remoteview.Lag]
    next: Step | None
    remote: str | None
    """The remote the task is shared through (it holds the task), when there is one."""
    branch: BranchState | None
    """The task branch here against the one ``remote`` published (as last fetched)."""
    unpublished: list[str]
    """Records of the task this clone has and ``remote`` lacks: refs ahead of the remote's, or
    only here, and approval or verdict notes not on the remote yet."""
    home: str | None
    """When the task is on no remote: the remote this clone shares through (``init --remote
    R``), which lacks it — ``unpublished`` then lists the task's refs, all only here."""

    def __init__(
        self,
        state: TaskState,
        plan: PlanStatus | None = None,
        stages: list[StageStatus] | None = None,
        task_branch: str = "",
        task_head: str | None = None,
        task_worktree: str = "",
        verdict: VerdictStatus | None = None,
        published_verdict: VerdictStatus | None = None,
        lag: list[remoteview.Lag] | None = None,
        next: Step | None = None,
        remote: str | None = None,
        branch: BranchState | None = None,
        unpublished: list[str] | None = None,
        home: str | None = None,
    ) -> None:
        self.state = state
        self.plan = plan
        self.stages = [] if stages is None else stages
        self.task_branch = task_branch
        self.task_head = task_head
        self.task_worktree = task_worktree
        self.verdict = verdict
        self.published_verdict = published_verdict
        self.lag = [] if lag is None else lag
        self.next = next
        self.remote = remote
        self.branch = branch
        self.unpublished = [] if unpublished is None else unpublished
        self.home = home

    @property
    def open_stages(self) -> int:
        """Stages not done yet."""
        return sum(1 for s in self.stages if s.state != "done")


def task_status(ctx: Context, key: TaskKey, fetched: bool = False) -> TaskStatus:
    """Read everything ``task status`` shows, and work out ``next``.

    ``fetched``: a stage whose claim a fetch brought newer than this clone's record (the
    remote's copy descends from it, or only the remote has one) is shown from the fetched
    record, checked as ``sync`` checks what it adopts (``remoteview.fetched_claims``) — what
    the board shows of other clones. ``next`` is then ``sync`` all the same: the local records
    are behind."""
    return status_and_situation(ctx, key, fetched)[0]


def next_for(ctx: Context, key: TaskKey) -> Step:
    """This clone's next step for ``key``: what every refusal and follow-up names."""
    return task_status(ctx, key).next  # type: ignore[return-value]


def refusal_step(key_text: str) -> Step | None:
    """The next step a refusal of a command about ``key_text`` names, in this folder's clone:
    the task's, or — the task not being here — the command that brings or makes it. None when
    no step can be told (no repository, a bad key). Its ``--json`` is ``Step.to_data()``, which
    the view (or the command's error) gives."""
    import shlex

    from ..core.errors import OkstraError
    from .context import open_context

    try:
        ctx = open_context(plumbed=True)  # a read, as task status is
        key = ctx.key(key_text)
    except OkstraError:
        return None
    try:
        return next_for(ctx, key)
    except Refused as exc:
        if exc.hint is None:
            return None
        argv = tuple(shlex.split(exc.hint))
        sync = argv[2:3] == ("sync",)
        return Step(
            "run" if sync else "human", argv, ctx.clone_dir, "agent" if sync else "human",
            str(exc),
        )  # fmt: skip
    except OkstraError:
        return None


def status_and_situation(
    ctx: Context, key: TaskKey, fetched: bool = False
) -> tuple[TaskStatus, Situation]:
    from .layout import task_branch

    repo = ctx.repo
    state = require_task(repo, key)
    status = TaskStatus(state)
    status.lag = remoteview.task_lag(repo, key)
    status.remote = remoteview.shared_remote(repo, key)
    status.task_branch = task_branch(key)
    status.task_head = repo.read_ref(f"refs/heads/{status.task_branch}")
    if status.task_head is not None:
        found = repo.worktree_for_branch(status.task_branch)
        status.task_worktree = str(found) if found is not None else ""
    if status.remote is not None:
        from .branches import task_branch_against

        status.branch = task_branch_against(repo, key, status.remote)
        status.unpublished = _unpublished(repo, status)
    else:
        status.home = remoteview.home_remote(repo)
        if status.home is not None:
            status.unpublished = [task_ref(key), *sorted(repo.list_refs(claims_prefix(key)))]
    approval_reasons: tuple[str, ...] = ()
    if state.task.latest_plan is not None:
        status.plan, approval_reasons = _plan(ctx, key)
        newer = remoteview.fetched_claims(repo, key, status.lag) if fetched else {}
        status.stages = _stages(ctx, state, status, newer)
    status.verdict = _verdict(ctx, key, status.task_head)
    status.published_verdict = _published_verdict(ctx, key, status)
    situation = _situation(ctx, status, approval_reasons)
    status.next = next_step(situation)
    return status, situation


def _unpublished(repo: GitRepo, status: TaskStatus) -> list[str]:
    from ..core.tracking import tracking_name
    from ..records.approval import APPROVALS_REF
    from ..records.verdict import VERDICTS_REF

    assert status.remote is not None
    found = [
        lag.ref
        for lag in status.lag
        if lag.remote == status.remote and lag.state in ("ahead", "missing-there")
    ]
    for notes in (APPROVALS_REF, VERDICTS_REF):
        mine, theirs = repo.read_ref(notes), repo.read_ref(tracking_name(status.remote, notes))
        if (
            mine is not None
            and mine != theirs
            and (theirs is None or not repo.contains(theirs, mine))
        ):
            found.append(notes)
    return found


def _plan(ctx: Context, key: TaskKey) -> tuple[PlanStatus, tuple[str, ...]]:
    from .plans import plan_status

    found = plan_status(ctx, key)
    latest = found.state.task.latest_plan
    assert latest is not None
    # The first approval is the approval (plan show names it too); a later line on the same
    # blob records it again (a claim recording a marker another clone's note had).
    approval = found.approvals[0] if found.approvals else None
    return PlanStatus(
        seq=latest.seq,
        path=latest.path,
        blob=latest.blob,
        read_from=found.source,
        approved=found.approved,
        reasons=found.reasons,
        approved_by=approval.approved_by if approval else None,
        approved_at=approval.approved_at if approval else None,
        method=approval.method if approval else None,
    ), tuple(found.reasons)


def _stages(
    ctx: Context,
    state: TaskState,
    status: TaskStatus,
    newer: dict[int, tuple[str, Claim]],
) -> list[StageStatus]:
    from .ownership import is_ours
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
    since = state.task.implementation_base_commit
    task_head = status.task_head
    unmerged = (
        repo.not_contained(task_head, present.values(), since)
        if task_head is not None
        else set(present.values())
    )
    if status.remote is None:
        published, unintegrated = task_head, unmerged
    else:
        published = status.branch.remote if status.branch is not None else None
        if published is not None and repo.has_commit(published):
            unintegrated = repo.not_contained(published, present.values(), since)
        else:
            unintegrated = set(present.values())
    found = []
    for stage in stage_map.stages:
        n, claim = stage.number, claims.get(stage.number)
        live = claim is not None and claim.status in ("started", "done")
        state_word = holders[n].state if live else ("ready" if n in selection.ready else "blocked")
        merged = None if n not in present else present[n] not in unmerged
        integrated = None
        if n in done:
            integrated = n in present and published is not None and present[n] not in unintegrated
        found.append(
            StageStatus(
                number=n,
                title=stage.title,
                depends_on=list(stage.depends_on),
                state=state_word,
                why=selection.blocked.get(n) if state_word == "blocked" else None,
                claim=claim,
                mine=live and claim is not None and is_ours(ctx, None, claim),
                merged=merged,
                merge_ref=_merge_ref(repo, claim, done.get(n)),
                fetched_from=newer[n][0] if n in newer else None,
                integrated=integrated,
            )
        )
    return found


def _merge_ref(repo: GitRepo, claim: Claim | None, done: str | None) -> str:
    if claim is None or done is None:
        return ""
    if claim.branch and repo.read_ref(f"refs/heads/{claim.branch}") == done:
        return claim.branch
    return done


def _verdict(ctx: Context, key: TaskKey, head: str | None) -> VerdictStatus | None:
    """The newest verdict on the task's HEAD (or a commit with its tree) and whether it opens
    the gate there, as the pre-push hook would judge it."""
    if head is None:
        return None
    from ..gate.judge import judge_head

    try:
        finding = judge_head(ctx.repo, head, str(key), ctx.gate_config())
    except BadInput as exc:  # the gate's config fails closed: say so, do not guess
        return VerdictStatus(head, False, error=str(exc))
    seen: list[tuple[Verdict, str | None]] = [(finding.opening, None)] if finding.opening else []
    seen += [(r.verdict, r.why) for r in finding.rejected]
    if not seen:
        return None
    verdict, why = max(seen, key=lambda pair: pair[0].recorded_at)
    return VerdictStatus(
        head,
        finding.opening is not None,
        verdict=verdict.verdict,
        scope=verdict.scope,
        recorded_on=verdict.head,
        recorded_at=verdict.recorded_at,
        recorded_by=verdict.recorded_by,
        why=why,
    )


def _published_verdict(ctx: Context, key: TaskKey, status: TaskStatus) -> VerdictStatus | None:
    """:attr:`TaskStatus.published_verdict`, judged as the HEAD's is. A fetch that brought
    the published ref brought its commit (and ``sync`` the notes with it)."""
    branch = status.branch
    if branch is None or branch.remote is None or branch.remote == status.task_head:
        return None
    if not ctx.repo.has_commit(branch.remote):
        return None  # a damaged or shallow clone: nothing to judge it against
    return _verdict(ctx, key, branch.remote)


def _situation(ctx: Context, status: TaskStatus, reasons: tuple[str, ...]) -> Situation:
    from ..git.worktrees import merge_in_progress, worktree_head

    repo = ctx.repo
    task = status.state.task
    key = status.state.key
    clone = ctx.clone_dir
    stale = next((lag.remote for lag in status.lag if lag.stale), None)
    running = None
    run_report = ""
    impl_seq = ""
    running_by = running_clone = ""
    running_stage = None
    if task.latest_run is not None and task.latest_run.status == "running":
        running = (task.latest_run.task_type, task.latest_run.seq)
        kind = "data" if running[0] == FINAL_VERIFICATION else "report"
        run_report = os.path.join(clone, run_paths(key, *running)[kind])
        running_by, running_clone, running_stage = _running_run(ctx, status.state, *running)
    views = []
    for s in status.stages:
        c = s.claim
        worktree = c.worktree_path if c is not None else ""
        here = True
        if s.mine and worktree:
            here = worktree_head(worktree, repo) is not None
        seq = c.run_id.removeprefix("implementation-") if c is not None else impl_seq
        views.append(
            StageView(
                number=s.number,
                state=s.state,
                mine=s.mine,
                who=c.who if c is not None else "",
                merged=s.merged,
                merge_ref=s.merge_ref,
                worktree=worktree,
                worktree_here=here,
                run_id=c.run_id if c is not None else "",
                report=os.path.join(clone, stage_report_path(key, seq, s.number)) if seq else "",
                integrated=s.integrated,
            )
        )
    verdict = status.verdict
    if status.remote is None:
        branch_state = "local"
    elif status.branch is None:
        branch_state = "none"
    elif status.branch.state == "ahead" and status.branch.remote is None:
        branch_state = "unpublished"
    else:
        branch_state = status.branch.state
    merging = merge_in_progress(status.task_worktree, ctx.repo) if status.task_worktree else None
    opens = verdict is not None and verdict.opens_gate
    push, moved = _main_push(ctx, status) if opens else (None, "")
    latest = task.latest_report_path or ""
    clarify_open, clarify_phase = (
        _open_clarifications(os.path.join(clone, latest), task) if latest else (0, "")
    )
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
        unpublished_on=status.home,
        remote=stale or status.remote,
        plan_submitted=task.latest_plan is not None,
        plan_path=os.path.join(clone, task.latest_plan.path) if task.latest_plan else "",
        approval_reasons=reasons,
        latest_report=os.path.join(clone, latest) if latest else "",
        stages=tuple(views),
        task_worktree=status.task_worktree,
        task_branch=branch_state,
        merging=merging,
        verdict_opens=opens,
        verdict=verdict.verdict if verdict is not None and verdict.error is None else None,
        verdict_unpublished="refs/notes/okstra/verdicts" in status.unpublished,
        main_push=push,
        main_moved=moved,
        clone_dir=clone,
        running_by=running_by,
        running_clone=running_clone,
        running_stage=running_stage,
        clarify_open=clarify_open,
        clarify_phase=clarify_phase,
        start_missing=(
            _start_missing(ctx, key)
            if status.task_head is None and any(v.state == "ready" for v in views)
            else None
        ),
    )


def _start_missing(ctx: Context, key: TaskKey) -> tuple[str, ...] | None:
    """:attr:`Situation.start_missing`: where this clone's task worktree would start, asked
    as a claim asks (``worktrees.task_start``) — only of a clone with no commit yet: any other
    starts from its own HEAD at worst."""
    from .layout import layout
    from .worktrees import NothingToStartFrom, task_start

    workdir, head = ctx.repo.main_checkout()
    if workdir is None or head is not None:
        return None
    try:
        task_start(ctx, layout(ctx, key))
    except NothingToStartFrom as exc:
        return exc.argv
    except OkstraError:
        return None  # anything else is the claim's to say
    return None


def _open_clarifications(report: str, task: Task) -> tuple[int, str]:
    """How many §5 rows of the latest report (Markdown, in this clone) are open or answered,
    and the phase of that report; (0, "") when there is none to read here."""
    if not report.endswith(".md") or not os.path.isfile(report):
        return 0, ""
    from ..core.errors import OkstraError
    from ..logic.clarify import UNRESOLVED, parse_clarification_items
    from ..logic.planfile import read_plan_file

    try:
        items = parse_clarification_items(read_plan_file(report, "report").text).items
    except OkstraError:
        return 0, ""
    count = sum(item.status in UNRESOLVED for item in items)
    latest = task.latest_run
    return count, latest.task_type if count and latest is not None else ""


def _running_run(
    ctx: Context, state: TaskState, task_type: str, seq: str
) -> tuple[str, str, int | None]:
    """Who started the running run and in which clone, when another clone did (empty: this
    clone, or a run from before clones had ids), and the one stage it verifies (a
    single-stage final verification; else None). Implementation runs belong to their
    claims, judged per stage."""
    if task_type == "implementation":
        return "", "", None
    from ..records.run import load_run
    from .identity import clone_id

    record = load_run(ctx.repo, state, task_type, seq)
    if record is None:
        return "", "", None
    stage = record.setup.stage if record.setup is not None else None
    if record.clone is None or record.clone == clone_id(ctx.repo):
        return "", "", stage
    return record.started_by, record.clone, stage


def _main_push(ctx: Context, status: TaskStatus) -> tuple[tuple[str, ...] | None, str]:
    """How the verified task HEAD lands on the protected branch the main worktree has checked
    out, judged against that branch on the remote as last fetched (``refs/remotes/R/B``):
    ``(git push R HEAD:B, "")`` when the push is a fast-forward there; ``(None, tracking ref)``
    when the remote's branch has commits HEAD lacks (the push would be rejected as
    non-fast-forward); ``(None, "")`` when there is nothing to push — the remote's branch holds
    HEAD, or a commit with HEAD's very tree (the task landed through a rebase that changed
    nothing) — or no protected branch, no remote."""
    head = status.task_head
    remote = status.remote
    branch = ctx.repo.main_branch()
    if head is None or remote is None or branch is None:
        return None, ""
    if not ctx.gate_config().protecting_glob(branch):
        return None, ""
    name = branch.removeprefix("refs/heads/")
    tracking = f"refs/remotes/{remote}/{name}"
    there = ctx.repo.read_ref(tracking)
    push = ("git", "push", remote, f"{head}:{branch}")
    if there is None or not ctx.repo.has_commit(there):
        return push, ""
    repo = ctx.repo
    if repo.contains(there, head) or repo.tree_id(there) == repo.tree_id(head):
        return None, ""
    if repo.contains(head, there):
        return push, ""
    return None, tracking
