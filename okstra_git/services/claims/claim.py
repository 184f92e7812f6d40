"""Stage claims (docs/workflow.md): select a batch, claim it atomically, provision its worktrees,
then finish, release and list.

How a claim is ordered, and why:

1. The approval gate, then a first look at the claims: refuse early when nothing is ready.
2. The task worktree is made if missing. Its HEAD is every new stage's base, and it belongs to
   the task rather than to a claim, so a claim that then loses the race leaves it for the next.
   Racing first claims all make it; they queue on the branch's lock in ``add_worktree``.
3. ONE ref transaction lands every claim of the batch together with the task event that
   allocates the implementation run (``runs/implementation/<seq>.json``, the run id inside each
   claim) and records the implementation base: the run exists exactly when its claims do.
   Allocating the run first (``start_run``) would leave a ``running`` run behind whenever the
   claim loses (7 of 8 racers do) or the process dies before the claim lands; allocating it
   after the claim lands is impossible, since every claim names its run. The transaction
   locks the task ref first and decides under that lock (``update_refs_guarded``), so racers
   for one task queue there instead of each building a batch only to lose; every claim ref is
   still compare-and-swapped against the value read.
4. Stage worktrees are made only after the claim landed. The claim is the arbiter: only its
   owner ever touches the stage's worktree path and branch, which are fixed by name, so racers
   never fight over folders. If provisioning fails, what this call made is removed, the claims
   are put back in one transaction and the run is finished ``error``. A process killed between
   3 and 4 leaves the batch fully claimed and no stage worktree;
   ``stage claim KEY --resume RUN`` makes them (idempotent) and prints the directive again.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ...core.errors import Refused
from ...core.keys import TaskKey
from ...core.machine import hostname
from ...core.shell import okstra as shell_okstra
from ...core.values import Value
from ...git.repo import RefMoved, RefUpdate, cas_retry, crash_point
from ...git.worktrees import dirty_paths, worktree_head
from ...logic import batch as batching
from ...logic.stagemap import Stage
from ...logic.workspace import run_paths
from ...records.approval import APPROVALS_REF
from ...records.claim import (
    CLAIMS_PREFIX,
    Claim,
    ClaimState,
    claim_commit,
    claim_holder,
    claim_ref,
    load_claims,
)
from ...records.run import RunRecord, load_run, next_seq
from ...records.task import TaskState, event_commit, require_task, task_ref
from .. import worktrees as wt
from ..claimview import select
from ..context import Context
from ..identity import ensure_clone_id
from ..layout import Layout, layout
from ..ownership import is_ours
from ..plans import approve_in_claim, check_approved
from ..planshow import StageBrief
from ..runs import finish_run, make_workspace, open_run, write_run_files
from ..snapshots import load_stage_map
from .common import RUN_TYPE, iso_seconds, release_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .handover import ConcurrentStage, DoneDependency

# ---------------------------------------------------------------------------------------------
# Results


class Placement(Value):
    """One claimed stage: where its work happens."""

    stage: int
    """Stage Map number."""
    title: str
    """Stage Map title."""
    worktree_path: str
    """The stage worktree (empty with ``--no-worktree``)."""
    branch: str
    """The stage branch (empty with ``--no-worktree``)."""
    base_commit: str
    """What the stage starts from (docs/workflow.md base rules)."""
    started_head_commit: str
    """The stage branch head at the claim (the base, unless an earlier claim left commits)."""
    stacked_on: int | None
    """The dependency whose done head is the base, when stacked."""
    take_over_of: str | None
    """The run whose expired claim this replaced."""
    lease_expires_at: str | None
    """When the claim's lease runs out."""
    left_uncommitted: tuple[str, ...] = ()
    """Uncommitted paths found in a worktree the claim reused: an earlier run's unfinished
    edits, which the new run must see before it starts (``stage done`` refuses them)."""
    brief: StageBrief | None = None
    """The stage's part of the approved plan: steps and Stage Exit Contract; None when the
    plan could not be read."""
    dependencies: tuple[DoneDependency, ...] = ()
    """Each done dependency's hand-over: done commit, report and carry (``handover``)."""

    @classmethod
    def of(cls, c: Claim, title: str) -> Placement:
        return cls(
            stage=c.stage,
            title=title,
            worktree_path=c.worktree_path,
            branch=c.branch,
            base_commit=c.base_commit,
            started_head_commit=c.started_head_commit,
            stacked_on=c.stacked_on,
            take_over_of=c.take_over_of,
            lease_expires_at=c.lease_expires_at,
        )


class ClaimResult(Value):
    """A landed claim (or a resumed one): the run, its stages and where to work."""

    key: TaskKey
    """The task."""
    run_id: str
    """``implementation-<seq>``."""
    stages: list[Placement]
    """The batch, in stage order."""
    task_worktree: str
    """The task worktree, where finished stages are merged (empty with ``--no-worktree``)."""
    task_branch: str
    """The task branch."""
    implementation_base: str
    """The task's implementation base commit."""
    plan_path: str | None
    """The approved plan (None if the task has lost track of it)."""
    plan_blob: str | None
    """The approved plan's blob id the claim was made against."""
    resumed: bool = False
    """True for ``--resume``: no new claim, worktrees (re)made."""
    notices: tuple[str, ...] = ()
    """Things the claimer should know that did not stop the claim (a stale plan checkout)."""
    concurrent: tuple[ConcurrentStage, ...] = ()
    """The stages other runs hold now (the seed's ``CONCURRENT_RUN_STAGES``)."""
    clone_dir: str = ""
    """This clone's main worktree (absolute), where the directive's commands run and its
    stage reports are written."""

    @property
    def csv(self) -> str:
        return ",".join(str(p.stage) for p in self.stages)

    def report_path(self, stage: int) -> str:
        """Where this clone writes ``stage``'s report (absolute; ``task status`` names the
        same file), empty when the clone is not known."""
        if not self.clone_dir:
            return ""
        from ...logic.workspace import stage_report_path

        seq = self.run_id.removeprefix(f"{RUN_TYPE}-")
        return os.path.join(self.clone_dir, stage_report_path(self.key, seq, stage))

    def with_handover(self, ctx: Context, claims: dict[int, ClaimState]) -> ClaimResult:
        """This result with the run's hand-over (``handover``): each stage's steps and Stage
        Exit Contract, its dependencies' done commits, reports and carries, and the stages
        other runs hold, as ``claims`` (the task's claims as the claim read them) say."""
        from .handover import handover

        batch = [p.stage for p in self.stages]
        found = handover(
            ctx, self.key, self.plan_blob, self.plan_path, batch, claims, self.run_id,
            datetime.now(UTC),
        )  # fmt: skip
        stages = [
            p.replace(
                brief=found.briefs.get(p.stage),
                dependencies=tuple(found.dependencies.get(p.stage, ())),
            )
            for p in self.stages
        ]
        return self.replace(stages=stages, concurrent=tuple(found.concurrent))


# ---------------------------------------------------------------------------------------------
# Claiming


class NothingReady(Refused):
    """No stage of the task is ready to claim (all done, held, or waiting on others)."""


def ready_here(ctx: Context, key: TaskKey) -> list[int]:
    """The stages this clone's records show ready now (no fetch): what ``next`` offered; none
    when the task or its approved plan is not here yet."""
    try:
        plan = check_approved(ctx, key)
    except Refused:
        return []
    found = select(plan.stage_map.stages, load_claims(ctx.repo, key), datetime.now(UTC), None)
    return sorted(found.ready)


def _nothing_ready(
    ctx: Context,
    lay: Layout,
    stages: dict[int, Stage],
    selection: batching.Selection,
    claims: dict[int, ClaimState],
) -> Refused:
    key = lay.key
    if all(n in claims and claims[n].claim.status == "done" for n in stages):
        return NothingReady(f"every stage of {key} is done; nothing left to claim")
    lines = [f"  - stage {n}: {why}" for n, why in sorted(selection.blocked.items())]
    missing = sorted(
        {
            s.claim.run_id
            for s in claims.values()
            if s.claim.status == "started"
            and s.claim.worktree_path
            and is_ours(ctx, lay, s.claim)
            and worktree_head(s.claim.worktree_path, ctx.repo) is None
        }
    )
    resumes = {run: shell_okstra("stage", "claim", key, "--resume", run) for run in missing}
    hint = "".join(
        f"\nrun {run} of this clone holds stages whose worktrees are missing (an interrupted "
        f"claim?); make them with: {resume}"
        for run, resume in resumes.items()
    )
    # Only this clone's runs: another clone's claim is that clone's to resume or release (the
    # blocked lines name its holder and lease).
    held = sorted(
        (s.claim.run_id, n)
        for n, s in claims.items()
        if s.claim.status == "started"
        and s.claim.run_id not in resumes
        and is_ours(ctx, lay, s.claim)
    )
    hint += "".join(
        f"\nif run {run} was interrupted (its agent is gone), release stage {n} so it can be "
        f"claimed again: {release_command(key, n, run)}"
        for run, n in held
    )
    return NothingReady(
        f"no stage of {key} is ready to claim:\n" + "\n".join(lines) + hint,
        hint=next(iter(resumes.values())) if len(resumes) == 1 else None,
    )


def _base(
    ctx: Context,
    stage: Stage,
    claims: dict[int, ClaimState],
    head: str,
    since: str | None,
    lay: Layout,
    task_path: Path | None,
    remote: str | None,
) -> tuple[str, int | None]:
    """docs/workflow.md: the task worktree HEAD must contain every dependency's done head (the claim
    integrated them first, :func:`_integrate_dependencies`); otherwise refuse naming the
    integrate. Stacking on one dependency's head is gone: that head lacks the other
    dependencies the task branch has, and a stage based on it could lose one. A done head this
    clone does not have is named at once: no ancestry question can be answered without it,
    and waiting never brings it."""
    heads = {d: claims[d].claim.head_commit for d in stage.depends_on}
    for dep, done_head in sorted(heads.items()):
        if done_head and not ctx.repo.has_object(done_head):
            raise _missing_commit(ctx, lay.key, stage.number, claims[dep].claim, remote)
    missing = ctx.repo.not_contained(head, [h for h in heads.values() if h], since)
    unmerged = sorted(d for d, h in heads.items() if h in missing)
    if not unmerged:
        return head, None
    from ...logic.nextstep import line, okstra_argv  # only to refuse

    fix = line(
        okstra_argv("integrate", lay.key, *(("--remote", remote) if remote else ())), ctx.clone_dir
    )
    raise Refused(
        f"stage {stage.number} of {lay.key} depends on stages "
        f"{', '.join(str(d) for d in unmerged)}, whose done commits are not in the task branch "
        f"HEAD {head[:12]} (they were done meanwhile); integrate them first ({fix}), then "
        "claim again",
        hint=fix,
    )


def _integrate_dependencies(
    ctx: Context,
    lay: Layout,
    stages: dict[int, Stage],
    batch: list[int],
    claims: dict[int, ClaimState],
    remote: str | None,
) -> None:
    """Integrate the done dependencies of ``batch`` the task branch lacks, so every stage's base
    contains every dependency. A merge that would conflict is given up again (the task worktree
    is left as it was before it) and the claim refused with the integrate command, for a
    person to resolve there."""
    deps = {d: n for n in batch for d in stages[n].depends_on if d in claims}
    heads = []
    for dep, stage in sorted(deps.items()):
        done_head = claims[dep].claim.head_commit
        if done_head and not ctx.repo.has_object(done_head):
            raise _missing_commit(ctx, lay.key, stage, claims[dep].claim, remote)
        if done_head:
            heads.append(done_head)
    head = wt.task_head(ctx, lay)
    since = require_task(ctx.repo, lay.key).task.implementation_base_commit
    if not ctx.repo.not_contained(head, heads, since):
        return
    from ...logic.nextstep import line, okstra_argv
    from ..integrate import MergeConflict, abort_merge, integrate

    fix = line(
        okstra_argv("integrate", lay.key, *(("--remote", remote) if remote else ())), ctx.clone_dir
    )
    try:
        integrate(ctx, lay.key, remote)
    except MergeConflict as exc:
        abort_merge(exc.path)
        numbers = ", ".join(str(n) for n in batch)
        raise Refused(
            f"stage {numbers} of {lay.key} needs its done dependencies in the task branch "
            f"first, and merging them there conflicts; integrate them and resolve it in the "
            f"task worktree: {fix}, then claim again",
            hint=fix,
        ) from exc


def _missing_commit(
    ctx: Context, key: TaskKey, stage: int, dep: Claim, remote: str | None
) -> Refused:
    """A dependency's done commit is not in this clone. After ``claim --remote`` fetched, the
    remote lacks it too: only the clone that finished the stage can publish it."""
    assert dep.head_commit is not None
    done = f"stage {dep.stage} ({dep.run_id}, {dep.who})"
    what = f"stage {stage} of {key} depends on {done}, whose done commit {dep.head_commit}"
    if remote is not None:
        return Refused(
            f"{what} is neither in this clone nor on {remote} (fetched just now): its stage "
            f"branch was never published. On {dep.host}, {dep.user} publishes it with: "
            f"{shell_okstra('sync', remote)}; then claim again",
            hint=shell_okstra("sync", remote),
        )
    from ..sync.transport import remote_or_placeholder  # sync is loaded only when a claim needs it

    where = remote_or_placeholder(ctx.repo)
    return Refused(
        f"{what} is not in this clone: commit {dep.head_commit[:12]} of stage {dep.stage} is "
        f"missing here; fetch it with: {shell_okstra('sync', where)}, then claim again",
        hint=shell_okstra("sync", where),
    )


class _Landed(Value):
    """What one claim transaction wrote, for provisioning and roll-back."""

    result: ClaimResult
    """The claim as the directive shows it (stage worktrees not made yet)."""
    seq: str
    """The implementation run's number."""
    updates: list[RefUpdate]
    """The transaction as it landed: the claim refs and the task ref."""
    claims: dict[int, ClaimState]
    """The task's claims as the transaction read them (before its own)."""
    run: RunRecord
    """The implementation run the claim started."""
    state: TaskState
    """The task as the claim's event left it."""


def claim(
    ctx: Context,
    key: TaskKey,
    stage: int | None = None,
    lease: timedelta | None = None,
    take_over_expired: bool = False,
    worktrees: bool = True,
    publish: Callable[[list[RefUpdate]], None] | None = None,
    remote: str | None = None,
) -> ClaimResult:
    """Claim the batch (or ``stage``) for a new implementation run: all stages or none.

    ``publish`` (``--remote``, see ``sync.claim_via_remote``) runs once the claim landed
    locally and before any worktree is made: it pushes the claim to the shared remote, or puts
    the refs back and raises. ``remote`` is that remote, just fetched, for messages.
    """
    plan = check_approved(ctx, key)  # a first look; the transaction decides (and records)
    stages = {s.number: s for s in plan.stage_map.stages}
    lay = layout(ctx, key)
    first = load_claims(ctx.repo, key)
    now = datetime.now(UTC)
    preview = select(plan.stage_map.stages, first, now, stage, take_over_expired)
    if not preview.batch:
        raise _nothing_ready(ctx, lay, stages, preview, first)
    _integrate_dependencies(ctx, lay, stages, list(preview.batch), first, remote)
    task_path = wt.ensure_task_worktree(ctx, lay) if worktrees else None
    host, user, clone = hostname(), ctx.repo.identity(), ensure_clone_id(ctx.repo)
    tref = task_ref(key)

    def build() -> tuple[list[RefUpdate], _Landed]:
        # Runs holding the task ref's lock: every claim of this task moves the task ref, so
        # racers wait here rather than build a batch's objects only to lose the transaction.
        now = datetime.now(UTC)
        read = require_task(ctx.repo, key)
        # A hand approval is recorded (and the approved plan followed) by this transaction:
        # a claim that does not land leaves no approval event behind, one that lands carries it.
        plan, state, gate_updates = approve_in_claim(ctx, read)
        stages = {s.number: s for s in plan.stage_map.stages}
        claims = load_claims(ctx.repo, key)
        selection = select(plan.stage_map.stages, claims, now, stage, take_over_expired)
        if not selection.batch:
            raise _nothing_ready(ctx, lay, stages, selection, claims)
        if worktrees:
            # Here, against the claims read under the lock, not the preview: a stage another
            # run claimed meanwhile has its worktree half-made by that run, which is not
            # something in the way.
            for number in selection.batch:
                wt.check_stage_slot(ctx, lay, number)
        head = wt.task_head(ctx, lay)
        since = state.task.implementation_base_commit
        seq = next_seq(ctx.repo, state.head, RUN_TYPE)
        run_id = f"{RUN_TYPE}-{seq}"
        expires = iso_seconds(now + lease) if lease is not None else None
        placements: list[Placement] = []
        updates: list[RefUpdate] = []
        for number in selection.batch:
            prev = claims.get(number)
            base, stacked = _base(ctx, stages[number], claims, head, since, lay, task_path, remote)
            started_head = base
            path = branch = ""
            if worktrees:
                path, branch = str(lay.stage_path(number)), lay.stage_branch(number)
                left = ctx.repo.read_ref(f"refs/heads/{branch}")
                if left is not None:  # an earlier claim's branch: its work continues here
                    started_head = left
                    if prev is not None:
                        base, stacked = prev.claim.base_commit, prev.claim.stacked_on
            taking = prev is not None and prev.claim.status == "started"
            record = Claim(
                task_key=str(key),
                stage=number,
                run_id=run_id,
                status="started",
                started_at=iso_seconds(now),
                host=host,
                user=user,
                clone=clone,
                base_commit=base,
                started_head_commit=started_head,
                worktree_path=path,
                branch=branch,
                batch=list(selection.batch),
                plan_blob=plan.blob,
                stacked_on=stacked,
                lease_expires_at=expires,
                lease_seconds=int(lease.total_seconds()) if lease is not None else None,
                take_over_of=prev.claim.run_id if taking and prev else None,
                history=[*prev.claim.history, prev.claim.run_id] if prev else [],
            )
            verb = (
                f"take over stage {number} from {record.take_over_of}"
                if taking
                else f"claim stage {number}"
            )
            old = prev.head if prev else None
            commit = claim_commit(ctx.repo, key, record, old, f"{verb} for {run_id}")
            updates.append(RefUpdate(claim_ref(key, number), commit, old))
            placements.append(Placement.of(record, stages[number].title))
        # The task event of the claim: the run bookkeeping of ``run start`` (which cannot share
        # this transaction) plus the implementation base on the first claim.
        task = state.task
        run, files = open_run(task, key, RUN_TYPE, seq, user, clone=clone)
        if task.implementation_base_commit is None:
            task.implementation_base_commit = head
        csv = ",".join(str(n) for n in selection.batch)
        event = f"run start {RUN_TYPE} {seq}: claim stage(s) {csv}"
        task_commit = event_commit(ctx.repo, key, task, state.head, files, event)
        updates.append(RefUpdate(tref, task_commit, read.head))
        updates.extend(gate_updates)
        result = ClaimResult(
            key=key,
            run_id=run_id,
            stages=placements,
            task_worktree=str(task_path) if task_path else "",
            task_branch=lay.task_branch if worktrees else "",
            implementation_base=task.implementation_base_commit or head,
            plan_path=plan.path,
            plan_blob=plan.blob,
            notices=tuple(n for n in (plan.stale_checkout,) if n),
            clone_dir=ctx.clone_dir,
        )
        landed = TaskState(key, task, task_commit)
        return updates, _Landed(result, seq, updates, claims, run, landed)

    def attempt() -> _Landed:
        return ctx.repo.update_refs_guarded(tref, build, f"okstra: claim for {key}")

    # The hint names every ref a stale lock could block: all of the plan's claims and the task.
    refnames = [claim_ref(key, n) for n in sorted(stages)] + [tref, APPROVALS_REF]
    landed = cas_retry(ctx.repo, attempt, refnames)
    crash_point("after-refs")
    if publish is not None:
        publish(landed.updates)
    result = landed.result
    if worktrees:
        result = result.replace(stages=_provision_or_roll_back(ctx, key, lay, landed))
    result = result.with_handover(ctx, landed.claims)
    # The run's files, as run start writes them (issue 21): its manifest and state file.
    write_run_files(ctx, landed.state, landed.run)
    return result


def _provision(ctx: Context, lay: Layout, place: Placement) -> tuple[Placement, bool, bool]:
    """Make (or reuse) the stage worktree and branch; says which of the two this call made.
    A reused worktree's uncommitted files go into the placement, so the directive names them."""
    path = Path(place.worktree_path)
    made_tree, made_branch = wt.provision_stage(
        ctx, lay, place.stage, path, place.started_head_commit
    )
    if not made_tree:
        place = place.replace(left_uncommitted=tuple(dirty_paths(path)))
    return place, made_tree, made_branch


def _provision_or_roll_back(
    ctx: Context, key: TaskKey, lay: Layout, landed: _Landed
) -> list[Placement]:
    made: list[tuple[Placement, bool, bool]] = []
    try:
        for place in landed.result.stages:
            made.append(_provision(ctx, lay, place))
    except Exception as exc:
        for place, made_tree, made_branch in made:
            if made_tree:
                # A branch someone already committed on is kept: that is work.
                branch_head = place.started_head_commit if made_branch else None
                with contextlib.suppress(RefMoved):
                    wt.remove_stage(ctx, Path(place.worktree_path), place.branch, branch_head)
        # Only the claims are put back. The task ref stays (the run it allocated is finished
        # ``error`` below, on the record), and so does an approval the claim recorded with it.
        undo = [
            RefUpdate(u.name, u.expected, u.new)
            for u in landed.updates
            if u.name.startswith(CLAIMS_PREFIX)
        ]
        try:
            ctx.repo.update_refs(undo, f"okstra: roll back claim of {landed.result.run_id}")
        except RefMoved as moved:
            run = landed.result.run_id
            reason = ("--reason", "provisioning failed")
            release = shell_okstra("stage", "release", key, "--stage", "N", "--run", run, *reason)
            raise Refused(
                f"making the worktrees of {landed.result.run_id} failed ({exc}) and its claims "
                f"could not be put back ({moved}); release them: {release}",
                hint=release,
            ) from exc
        finish_run(ctx, key, RUN_TYPE, landed.seq, "error", None)
        raise
    return [place for place, _, _ in made]


def resume(ctx: Context, key: TaskKey, run_id: str) -> ClaimResult:
    """Make the worktrees of ``run_id``'s started claims (after an interrupted claim) and give
    its directive again. Idempotent; never claims anything."""
    mine = [
        s.claim
        for _, s in sorted(load_claims(ctx.repo, key).items())
        if s.claim.run_id == run_id and s.claim.status == "started"
    ]
    if not mine:
        listing = shell_okstra("stage", "list", key)
        raise Refused(f"run {run_id} holds no started claim of {key}", hint=listing)
    lay = layout(ctx, key)
    theirs = [c for c in mine if c.worktree_path and not is_ours(ctx, lay, c)]
    if theirs:
        c = theirs[0]
        raise Refused(
            f"run {run_id} is not this clone's: it holds stage(s) "
            f"{', '.join(str(t.stage) for t in theirs)} of {key} for {c.who}, with "
            f"worktrees at {c.worktree_path} there "
            f"({claim_holder(c, datetime.now(UTC)).held_by}); only that clone can resume "
            "it. To claim what is ready instead: " + shell_okstra("stage", "claim", key)
        )
    state = require_task(ctx.repo, key)
    with_worktrees = any(c.worktree_path for c in mine)  # one batch: all or none have one
    task_path = str(wt.ensure_task_worktree(ctx, lay)) if with_worktrees else ""
    titles = _titles(ctx, key)
    placements = []
    for c in mine:
        place = Placement.of(c, titles.get(c.stage, ""))
        if c.worktree_path:
            place, _, _ = _provision(ctx, lay, place)
        placements.append(place)
    seq = run_id.removeprefix(f"{RUN_TYPE}-")
    paths = run_paths(key, RUN_TYPE, seq)
    record = load_run(ctx.repo, state, RUN_TYPE, seq)
    if (
        record is not None
        and ctx.workdir is not None
        and not (ctx.workdir / paths["manifest"]).exists()
    ):
        write_run_files(ctx, state, record)  # an interrupted claim: its files were never written
    else:
        make_workspace(ctx, paths)
    found = ClaimResult(
        key=key,
        run_id=run_id,
        stages=placements,
        task_worktree=task_path,
        task_branch=lay.task_branch if task_path else "",
        implementation_base=state.task.implementation_base_commit or mine[0].base_commit,
        plan_path=state.task.latest_plan.path if state.task.latest_plan else None,
        plan_blob=mine[0].plan_blob,
        resumed=True,
        clone_dir=ctx.clone_dir,
    )
    return found.with_handover(ctx, load_claims(ctx.repo, key))


def _titles(ctx: Context, key: TaskKey) -> dict[int, str]:
    try:
        return {s.number: s.title for s in load_stage_map(ctx, key).stages}
    except Refused:
        return {}


# ---------------------------------------------------------------------------------------------
# Finishing: done, release
