"""Sharing okstra's refs and notes through a remote (docs/storage.md, docs/concurrency-and-sync.md).

Fetch lands in remote-tracking namespaces only — ``refs/okstra-remotes/<R>/*`` for task and
claim refs, ``refs/notes/okstra-remotes/<R>/*`` for notes — so a fetch never clobbers local
state. Then ``reconcile`` brings local refs in step (adopting checked remote records,
replaying local-only task events on the remote's chain, merging notes) in one local
transaction, and one ``--atomic`` push publishes what is ahead here. Every pushed ref is a
fast-forward of the remote's value, pushed without force: a remote that moved meanwhile
rejects it (compare-and-swap by the fast-forward rule), nothing lands, and sync starts over
from a fresh fetch. The refs to push go through a staging namespace and two glob refspecs, so
the command line never grows with the number of tasks.

Network work uses the ``git`` CLI (the user's credentials and transports); object and ref
work uses the git layer. This module is imported by ``ci check --fetch``: stdlib and the git
layer only.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...core.errors import Conflict, Refused
from ...core.shell import okstra
from ...core.tracking import LOCAL_REFS, tracking_refs
from ...core.values import Record, field
from ...git.repo import OLD_LOCK_SECONDS, RefUpdate
from ..context import Context
from .reconcile import reconcile
from .state import Choice, Reconciled, RefState, TaskConflict, Unadopted
from .transport import (
    PUSH_ATTEMPTS,
    check_remote,
    default_remote,
    fetch_if_moved,
    push_all,
    remote_locks,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..branches import BranchState


class SyncReport(Record):
    """What ``git okstra sync`` saw and did."""

    remote: str
    """The remote synced with."""
    fetched: bool = False
    """Whether this sync fetched (not with ``--push-only``)."""
    refs: list[RefState] = field(default_factory=list)
    """Every okstra ref and notes ref, here or on the remote, after the last attempt, except
    those already in step (counted in ``unchanged``)."""
    unchanged: int = 0
    """Refs already in step with the remote's: nothing to do."""
    pushed: list[str] = field(default_factory=list)
    """The refs the (atomic) push landed."""
    attempts: int = 0
    """Fetch-reconcile-push rounds; more than one when the remote moved meanwhile."""
    conflicts: list[TaskConflict] = field(default_factory=list)
    """True conflicts, one per task: nothing of those tasks was pushed or rewritten."""
    invalid: list[Unadopted] = field(default_factory=list)
    """Problems with remote records that were not adopted."""
    kept: list[str] = field(default_factory=list)
    """Refs keeping the local tips a ``--take-theirs`` replaced."""
    renumbered: dict[str, str] = field(default_factory=dict)
    """What a ``--renumber`` moved: old run id (or plan) → new."""
    branches: list[BranchState] = field(default_factory=list)
    """The task and stage branches this clone publishes (``branches.py``), after the last
    attempt."""

    @property
    def diverged(self) -> list[RefState]:
        """Refs left as they were by a conflict."""
        return [r for r in self.refs if r.state == "conflict"]

    def blocking(self, refs_prefixes: Iterable[str]) -> list[str]:
        """Why refs under any of ``refs_prefixes`` could not be brought in step (a conflict, a
        remote record failing its checks): what a claim through the remote must not ignore."""
        prefixes = tuple(refs_prefixes)
        return [
            f"{r.ref} ({r.state})"
            for r in self.refs
            if r.state in ("conflict", "invalid") and r.ref.startswith(prefixes)
        ]


# -- the whole sync -------------------------------------------------------------------------


def _branches_to_publish(
    ctx: Context, remote: str, pushes: list[RefUpdate], done: Reconciled
) -> list[BranchState]:
    """The task branches, and the branches of done stages, that go with this push: code
    travels with the claims that name it. Claim and tracking refs are read from the listing
    reconcile worked from, with its own changes: one lookup per ref costs at 1,000 stages."""
    from ...records.claim import CLAIMS_PREFIX
    from ..branches import branch_states

    claims = [u.name for u in pushes if u.name.startswith(CLAIMS_PREFIX)]
    here = {**done.listing.here, **{u.name: u.new for u in done.updates}}
    tracked = tracking_refs(remote)

    def read(ref: str) -> str | None:
        if ref.startswith(tracked):
            return done.listing.there.get(LOCAL_REFS + ref[len(tracked) :])
        return here.get(ref)

    return branch_states(ctx, remote, claims, read)


def pull(ctx: Context, remote: str) -> SyncReport:
    """Fetch and reconcile, pushing nothing (what ``sync --fetch-only`` does)."""
    return sync(ctx, remote, do_push=False)


def sync(
    ctx: Context,
    remote: str | None = None,
    do_fetch: bool = True,
    do_push: bool = True,
    choice: Choice | None = None,
) -> SyncReport:
    """Fetch, reconcile and push okstra's refs and notes; retried when the remote moves.

    ``choice`` settles one task's true conflict (reported by an earlier sync) as the person
    chose; it applies to the first round only, which rewrites the local side for good.
    """
    repo = ctx.repo
    remote = remote or default_remote(repo)
    check_remote(repo, remote)
    report = SyncReport(remote)
    for attempt in range(1, PUSH_ATTEMPTS + 1):
        report.attempts = attempt
        listing = None
        if do_fetch:
            listing = fetch_if_moved(repo, remote)
            report.fetched = True
        done = reconcile(repo, remote, choice if attempt == 1 else None, listing)
        report.refs, report.conflicts, report.invalid = done.states, done.conflicts, done.invalid
        report.unchanged = done.unchanged
        report.kept += done.kept
        report.renumbered.update(done.renumbered)
        if not do_push:
            return report
        pushes = done.to_push
        report.branches = _branches_to_publish(ctx, remote, pushes, done)
        pushes += [b.push for b in report.branches if b.push is not None]
        outcome = push_all(repo, remote, pushes)
        if outcome.ok:
            report.pushed = [u.name for u in pushes]
            return report
        if not outcome.lost_race:
            raise Refused(f"git push {remote} refused okstra's refs: {outcome.detail}")
        old = OLD_LOCK_SECONDS if attempt < PUSH_ATTEMPTS else 0.0
        found = remote_locks(repo, remote, [u.name for u in pushes], old)
        if found is not None:
            raise Conflict(found.text, hint=found.command)
        if not do_fetch:
            raise Conflict(
                f"{remote} changed since the last fetch, so the push landed nothing "
                f"({outcome.detail}); run `{okstra('sync', remote)}` without --push-only",
                hint=okstra("sync", remote),
            )
    raise Conflict(
        f"{remote} kept changing during {PUSH_ATTEMPTS} sync attempts (another clone is "
        "pushing okstra refs to it right now); rerun `git okstra sync`"
    )
