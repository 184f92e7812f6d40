"""Claims shared through a remote: ``stage claim --remote`` and ``stage done`` of a published
claim, each one atomic leased push; a lost race is undone here and chosen again."""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ...core.errors import Conflict, Refused
from ...core.shell import okstra
from ...core.tracking import BRANCHES, LOCAL_NOTES, tracking_name
from ...git.repo import OLD_LOCK_SECONDS, GitRepo, RefMoved, RefUpdate
from ...records.claim import claims_prefix
from ...records.task import task_ref
from ..context import Context
from ..sync.transport import FetchFailed, check_remote, in_step, push_leased, remote_locks
from .claim import claim
from .common import Unpublished
from .done import done
from .release import ReleaseResult, release

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import timedelta
    from typing import NoReturn

    from ...core.keys import TaskKey
    from ...records.claim import Claim
    from ..sync.engine import SyncReport
    from .claim import ClaimResult
    from .done import DoneResult


CLAIM_ATTEMPTS = 12
TURN_WAIT = 120.0
"""Seconds a remote claim, done or release waits for another one of the same task in this
clone (each holds its turn for one fetch, local write and push)."""


@contextmanager
def turn(ctx: Context, key: TaskKey) -> Iterator[None]:
    """This clone's remote claims, dones, releases and renewals (claims/leases.py) of one task
    take turns, each round from its fetch to its push (and the undo of a lost push) one step.

    Without turns, a local racer could move the task ref between another's local write and its
    undo: that undo's compare-and-swap then fails and the clone keeps a claim the remote gave
    to another clone, or its fetch finds the other racer's unpublished claim in the way. The
    kernel frees a killed holder's turn."""
    from ...git.reflocks import QUEUE_DIR, flock_within

    folder = ctx.repo.common_dir / QUEUE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    bucket = zlib.crc32(str(key).encode("utf-8", "surrogateescape")) % 64
    fd = os.open(folder / f"remote-{bucket:02d}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not flock_within(fd, TURN_WAIT)[0]:
            raise Conflict(
                f"another claim, done or release of {key} through a remote in this clone has "
                f"held its turn for {TURN_WAIT:.0f}s (a fetch or push that hangs?); retry"
            )
        yield
    finally:
        os.close(fd)  # drops the flock


def pull_unless_in_step(ctx: Context, remote: str, key: TaskKey) -> SyncReport | None:
    """What a claim, done or release of ``key`` through ``remote`` fetches first: nothing when
    the task's refs, its claims and branches and the notes are here exactly as the remote
    holds them now (:func:`~okstra_git.services.sync.transport.in_step`: its own refs alone
    are read, and the sync engine is not loaded); else the whole fetch and reconcile of
    ``sync --fetch-only`` (every task is brought in step), its report returned. Every push
    after it is leased on the remote's values, so a remote that moves meanwhile still loses
    the race for the claim and the next round fetches."""
    check_remote(ctx.repo, remote)
    records = [task_ref(key), claims_prefix(key), LOCAL_NOTES]
    try:
        if in_step(ctx.repo, remote, records, [BRANCHES + key.ref_suffix]):
            return None
    except FetchFailed:
        pass  # unreachable: the fetch says so, as it would have without the probe
    return pull(ctx, remote)


def pull(ctx: Context, remote: str) -> SyncReport:
    """The sync engine's :func:`~okstra_git.services.sync.engine.pull`, loaded when first
    needed: a claim in step with its task never loads the engine."""
    from ..sync import engine

    return engine.pull(ctx, remote)


def push_claims_atomically(ctx: Context, remote: str, updates: list[RefUpdate]) -> bool:
    """Publish a claim's ref changes all-or-nothing; False when another machine got there first.

    ``updates`` are the changes as they landed locally (claim refs and the task ref). Each is
    leased on the remote-tracking value — what the remote held at the last fetch, empty when
    it did not have the ref — so the push lands only if nobody pushed since. A refusal for
    any other reason (a hook, permissions) is raised.
    """
    leased = [
        RefUpdate(u.name, u.new, ctx.repo.read_ref(tracking_name(remote, u.name))) for u in updates
    ]
    outcome = push_leased(ctx.repo, remote, leased)
    if outcome.ok:
        return True
    if outcome.lost_race:
        names = [u.name for u in updates]
        found = remote_locks(ctx.repo, remote, names, OLD_LOCK_SECONDS)
        if found is not None:
            raise Conflict(found.text, hint=found.command)
        return False
    raise Refused(f"git push {remote} refused the claim: {outcome.detail}")


def _notes_to_publish(ctx: Context, remote: str, updates: list[RefUpdate]) -> list[RefUpdate]:
    """The approvals notes ref, when this clone's is ahead of the remote's and ``updates`` do
    not move it already (leased like the claim refs, by ``push_claims_atomically``)."""
    from ...records.approval import APPROVALS_REF

    if any(u.name == APPROVALS_REF for u in updates):
        return []
    mine = ctx.repo.read_ref(APPROVALS_REF)
    theirs = ctx.repo.read_ref(tracking_name(remote, APPROVALS_REF))
    if (
        mine is None
        or mine == theirs
        or (theirs is not None and not ctx.repo.contains(mine, theirs))
    ):
        return []
    return [RefUpdate(APPROVALS_REF, mine, theirs)]


class RemoteRaceLost(Conflict):
    """Another machine's claim reached the shared remote first; ours was undone locally."""


def _undo_lost(
    ctx: Context, remote: str, key: TaskKey, landed: list[RefUpdate], what: str
) -> NoReturn:
    """Put back what ``landed`` here when its push lost on ``remote``, then raise
    :class:`RemoteRaceLost` so the caller starts over from a fresh fetch."""
    undo = [RefUpdate(u.name, u.expected, u.new) for u in landed]
    try:
        ctx.repo.update_refs(undo, f"okstra: undo {what}, which {remote} did not take")
    except RefMoved as exc:
        raise Refused(
            f"{what} lost the race on {remote} and could not be undone here ({exc}); run "
            f"{okstra('sync', remote)} and check {okstra('stage', 'list', key)}",
            hint=okstra("sync", remote),
        ) from exc
    raise RemoteRaceLost(f"{what} lost the race on {remote}")


def claim_via_remote(
    ctx: Context,
    remote: str,
    key: TaskKey,
    stage: int | None = None,
    lease: timedelta | None = None,
    take_over_expired: bool = False,
    worktrees: bool = True,
    race_lost: Callable[[str], None] | None = None,
) -> ClaimResult:
    """``stage claim --remote``: claim locally, publish atomically, or undo and choose again.

    Each round fetches and fast-forwards the task and its claims, claims locally (the batch
    is selected from what the remote holds), and pushes the claim refs and the task ref in one
    leased atomic push before any worktree is made. When the remote has moved, the local
    claim is put back exactly as it was and the round starts over from a fresh fetch — so two
    machines sharing the remote never both hold a stage. ``race_lost`` (the view's
    ``views.stage.race_lost``: a service never imports a view) is told the remote each time a
    round is lost and starts over.
    """

    def publish(updates: list[RefUpdate]) -> None:
        # The approval the claim relies on travels with it: a clone that takes the next claim
        # must find the plan approved by whoever approved it, not record a hand approval itself.
        if push_claims_atomically(ctx, remote, updates + _notes_to_publish(ctx, remote, updates)):
            return
        _undo_lost(ctx, remote, key, updates, "the claim")

    for _ in range(CLAIM_ATTEMPTS):
        try:
            with turn(ctx, key):
                pulled = pull_unless_in_step(ctx, remote, key)  # checks the remote first
                blocked = pulled.blocking((task_ref(key), claims_prefix(key))) if pulled else []
                if blocked:
                    raise Refused(
                        f"{', '.join(blocked)} could not be brought in step with {remote}, so a "
                        "claim cannot be published safely; see why and settle it: "
                        + okstra("sync", remote),
                        hint=okstra("sync", remote),
                    )
                return claim(
                    ctx,
                    key,
                    stage,
                    lease,
                    take_over_expired,
                    worktrees=worktrees,
                    publish=publish,
                    remote=remote,
                )
        except RemoteRaceLost:
            if race_lost is not None:
                race_lost(remote)
            _settle()
    found = remote_locks(ctx.repo, remote, [task_ref(key)], under=claims_prefix(key))
    if found is not None:
        raise Conflict(found.text, hint=found.command)
    raise Conflict(
        f"lost the race to claim on {remote} {CLAIM_ATTEMPTS} times (other clones keep "
        "claiming this task); retry"
    )


def shared_through(repo: GitRepo, ref: str) -> str | None:
    """The remote holding ``ref`` exactly as this clone does (a claim taken with ``--remote``,
    or synced since), when there is one such remote: ``stage done`` publishes there."""
    value = repo.read_ref(ref)
    found = [r for r in repo.remote_names() if repo.read_ref(tracking_name(r, ref)) == value]
    return found[0] if value is not None and len(found) == 1 else None


def done_via_remote(
    ctx: Context,
    remote: str | None,
    key: TaskKey,
    stage: int,
    report: str | None = None,
    carry: str | None = None,
    head: str | None = None,
) -> DoneResult:
    """``stage done`` of a claim shared through a remote (``--remote R``, or the one remote
    holding the claim as this clone does): the claim update, the stage branch at its done head
    and — when this done finished the run — the task ref travel in ONE atomic push, each leased
    on what the remote held at the last fetch.

    The claim and task refs are fetched first. When the push loses (the claim was taken over
    or released there, or another clone moved the task), what this done wrote is put back and
    the round starts over from a fresh fetch; a claim that changed hands then refuses the done,
    naming who holds it now. A task ref that diverged from the remote's stays out of the push
    (the output names the sync that reconciles it); the claim and the code still travel.
    """
    from ...records.claim import claim_ref
    from ...records.task import task_ref
    from ..branches import stage_shared_ref

    if report is not None:  # refused before any fetch, as done() would after it
        from .done import require_report_file

        require_report_file(ctx, key, stage, report)
    ref, task = claim_ref(key, stage), task_ref(key)
    asked = remote is not None
    remote = remote or shared_through(ctx.repo, ref)
    if remote is None:
        return done(ctx, key, stage, report, carry, head)
    check_remote(ctx.repo, remote)
    branch = stage_shared_ref(key, stage)
    sync_hint = okstra("sync", remote)

    def publish(changed: list[RefUpdate], claim: Claim) -> Unpublished | None:
        wanted = [(u.name, u.new) for u in changed]
        if claim.head_commit:
            wanted.append((branch, claim.head_commit))
        if all(u.name != task for u in changed):  # the run the claim names goes along
            wanted.append((task, ctx.repo.read_ref(task)))
        leased = [RefUpdate(n, v, ctx.repo.read_ref(tracking_name(remote, n))) for n, v in wanted]
        # A task ref that does not descend from the remote's would need a merge: sync does it.
        behind = [u for u in leased if u.name == task and not _descends(ctx, u)]
        pushes = [u for u in leased if u not in behind and u.new != u.expected]
        outcome = push_leased(ctx.repo, remote, pushes)
        if outcome.ok:
            return Unpublished(remote, sync_hint) if behind else None
        if not outcome.lost_race:
            raise Refused(
                f"stage {stage} of {key} is done here, but {remote} refused the push "
                f"({outcome.detail}); it stays here until it can be published: {sync_hint}",
                hint=sync_hint,
            )
        _undo_lost(ctx, remote, key, changed, f"the done of stage {stage}")

    for _ in range(CLAIM_ATTEMPTS):
        try:
            with turn(ctx, key):
                try:
                    pulled = pull_unless_in_step(ctx, remote, key)
                except FetchFailed as exc:
                    if asked:
                        raise
                    # Offline work goes on: the done is recorded here and says how to publish it.
                    result = done(ctx, key, stage, report, carry, head)
                    unpublished = Unpublished(remote, sync_hint, str(exc))
                    return result.replace(publish_note=unpublished)
                blocked = pulled.blocking((ref,)) if pulled is not None else []
                if blocked:
                    raise Refused(
                        f"{', '.join(blocked)} could not be brought in step with {remote}, so "
                        f"the done cannot be published; see why and settle it: {sync_hint}",
                        hint=sync_hint,
                    )
                result = done(ctx, key, stage, report, carry, head, publish=publish)
        except RemoteRaceLost:
            _settle()
            continue
        return result.replace(published=remote)
    raise Conflict(
        f"the claim of stage {stage} of {key} or its task kept moving on {remote} during "
        f"{CLAIM_ATTEMPTS} tries; see {okstra('stage', 'list', key)}"
    )


def release_via_remote(
    ctx: Context,
    remote: str | None,
    key: TaskKey,
    stage: int,
    reason: str,
    run: str | None = None,
    force: bool = False,
) -> ReleaseResult:
    """``stage release`` of a claim shared through a remote (``--remote R``, or the one remote
    holding the claim as this clone does): fetched first, released here, and the claim pushed
    leased on what the remote held, so another clone sees the stage free at once. When the
    push loses (the claim was taken over there), the release is put back and the round starts
    over from a fresh fetch, which then names who holds the stage."""
    from ...records.claim import claim_ref

    ref = claim_ref(key, stage)
    remote = remote or shared_through(ctx.repo, ref)
    if remote is None:
        return release(ctx, key, stage, reason, run, force)
    check_remote(ctx.repo, remote)

    def publish(updates: list[RefUpdate]) -> None:
        if push_claims_atomically(ctx, remote, updates):
            return
        _undo_lost(ctx, remote, key, updates, f"the release of stage {stage}")

    for _ in range(CLAIM_ATTEMPTS):
        try:
            with turn(ctx, key):
                pulled = pull_unless_in_step(ctx, remote, key)
                blocked = pulled.blocking((ref,)) if pulled is not None else []
                if blocked:
                    sync = okstra("sync", remote)
                    raise Refused(
                        f"{', '.join(blocked)} could not be brought in step with {remote}, so "
                        f"the release cannot be published; see why and settle it: {sync}",
                        hint=sync,
                    )
                return release(ctx, key, stage, reason, run, force, publish=publish)
        except RemoteRaceLost:
            _settle()
    raise Conflict(
        f"the claim of stage {stage} of {key} kept moving on {remote} during {CLAIM_ATTEMPTS} "
        f"tries to release it; see {okstra('stage', 'list', key)}"
    )


def _descends(ctx: Context, update: RefUpdate) -> bool:
    """Whether pushing ``update`` moves the remote's ref forward (or creates it)."""
    assert update.new is not None
    return update.expected is None or ctx.repo.contains(update.new, update.expected)


def _settle() -> None:
    """Wait a moment after a lost race: the winner's push settles (jittered, so the losers
    do not all come back at once)."""
    import random  # only after a lost race: a claim that wins never loads it

    time.sleep(0.05 + random.random() * 0.2)
