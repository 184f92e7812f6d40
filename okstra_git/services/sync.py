"""Sharing okstra's refs and notes through a remote (SPEC §2, §14).

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

import contextlib
import os
import random
import secrets
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..core.crashpoints import crash_point
from ..core.errors import BadInput, Conflict, Refused
from ..core.shell import okstra
from ..core.tracking import (
    LOCAL_NOTES,
    LOCAL_REFS,
    fetch_refspecs,
    tracking_name,
    tracking_notes,
    tracking_refs,
)
from ..git.reflocks import LockReport, held_locks, report
from ..git.repo import BULK_REFS, OLD_LOCK_SECONDS, GitRepo, RefMoved, RefUpdate
from ..records.claim import claims_prefix
from ..records.task import task_ref
from .context import Context
from .reconcile import Choice, Listing, Reconciled, RefState, TaskConflict, list_refs, reconcile

if TYPE_CHECKING:
    from datetime import timedelta

    from ..core.keys import TaskKey
    from ..records.claim import Claim
    from .branches import BranchState
    from .claims import ClaimResult, DoneResult

STAGING = "refs/okstra-outgoing/"
"""Where one sync lists the refs it pushes (``<pid>-<random>/okstra/…``, ``…/notes/…``): two
glob refspecs then push exactly them. Deleted after the push; a killed sync's are deleted by
the next sync (:func:`_sweep_outgoing`)."""
PUSH_ATTEMPTS = 5
PROBE_FROM = 1000
"""From this many okstra refs on (here and fetched), sync first asks the remote for its ref
list (``git ls-remote``) and skips the fetch when it is exactly what was fetched last: a fetch
with nothing to bring still reads every local ref twice, which a sync in step would pay for."""
TRANSACTION_REFS = 1000
"""The most tracking refs moved in one ref transaction."""
CLAIM_ATTEMPTS = 12
# What git prints for a push that lost to another writer, as opposed to a refusal by policy.
_RACE_REASONS = (
    "stale info",
    "fetch first",
    "non-fast-forward",
    "atomic push failed",
    "atomic transaction failed",
    "failed to update ref",
    "cannot lock ref",
    "failed to lock",
    "already exists",
    "but expected",
    "incorrect old value",
)


@dataclass
class SyncReport:
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
    invalid: list[str] = field(default_factory=list)
    """Problems with remote records that were not adopted (ref and field named)."""
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

    def to_data(self) -> dict[str, object]:
        return {
            "remote": self.remote,
            "fetched": self.fetched,
            "refs": [r.to_data() for r in self.refs if r.state != "same"],
            "unchanged": self.unchanged,
            "pushed": self.pushed,
            "diverged": [r.ref for r in self.diverged],
            "conflicts": [c.to_data() for c in self.conflicts],
            "invalid": self.invalid,
            "kept": self.kept,
            "renumbered": self.renumbered,
            "attempts": self.attempts,
            "branches": [b.to_data() for b in self.branches if b.state != "same"],
        }


# -- remotes and the git CLI ----------------------------------------------------------------


def default_remote(repo: GitRepo) -> str:
    """The current branch's remote, else ``origin``, else the only remote."""
    head = repo.repo.references.get("HEAD")
    branch = head.target if head is not None and isinstance(head.target, str) else ""
    if branch.startswith("refs/heads/"):
        upstream = repo.config_get(f"branch.{branch[len('refs/heads/') :]}.remote")
        if upstream and upstream != ".":
            return upstream
    names = list(repo.repo.remotes.names())
    if "origin" in names:
        return "origin"
    if len(names) == 1:
        return names[0]
    raise BadInput(
        "no remote given and none to pick ("
        + (", ".join(names) or "this repository has no remote")
        + "); name one: git okstra sync REMOTE"
    )


def remote_or_placeholder(repo: GitRepo) -> str:
    """The remote a printed ``git okstra sync`` names: :func:`default_remote`, or ``REMOTE``
    for the user to fill in when there is none to pick."""
    try:
        return default_remote(repo)
    except BadInput:
        return "REMOTE"


def check_remote(repo: GitRepo, remote: str) -> None:
    if repo.config_get(f"remote.{remote}.url") is None:
        raise BadInput(f"remote {remote!r} is not configured here (see git remote -v)")
    bad = any(part in remote for part in ("..", ":", " ", "*", "?", "[", "\\", "~", "^")) or (
        remote.startswith(("-", "/")) or remote.endswith(("/", ".lock"))
    )
    if bad:
        raise BadInput(f"remote name {remote!r} cannot name a tracking namespace; rename it")


def _git(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=repo.workdir or repo.git_dir,
        text=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )


class FetchFailed(Refused):
    """``git fetch`` of the remote failed (unreachable, no access): nothing was fetched."""


def _fetch(repo: GitRepo, remote: str, refspecs: list[str]) -> None:
    proc = _git(repo, "fetch", "--no-tags", "--prune", "--quiet", remote, *refspecs)
    if proc.returncode != 0:
        raise FetchFailed(
            f"git fetch {remote} failed (exit {proc.returncode}): {proc.stderr.strip()}; "
            "check the remote and your access to it"
        )


def fetch_notes(repo: GitRepo, remote: str) -> None:
    """Fetch the remote's okstra notes into ``refs/notes/okstra-remotes/<remote>/``."""
    check_remote(repo, remote)
    _fetch(repo, remote, [f"+{LOCAL_NOTES}*:{tracking_notes(remote)}*"])


def fetch(repo: GitRepo, remote: str) -> None:
    """Fetch the remote's okstra refs and notes into the tracking namespaces."""
    _fetch(repo, remote, fetch_refspecs(remote))


def fetch_if_moved(repo: GitRepo, remote: str) -> Listing | None:
    """Fetch like :func:`fetch`, unless the remote holds exactly what was fetched last: with
    :data:`PROBE_FROM` okstra refs or more, here and fetched, ask it first (``git ls-remote``).
    Returns the refs read to tell, for the caller to reuse, when no fetch was needed."""
    listing = list_refs(repo, remote)
    if (
        len(listing.here) + len(listing.there) < PROBE_FROM
        or _advertised(repo, remote) != listing.there
    ):
        fetch(repo, remote)
        return None
    return listing


def _advertised(repo: GitRepo, remote: str) -> dict[str, str]:
    """The remote's okstra refs and notes refs (local names → id), from ``git ls-remote``. Its
    names are only compared with the tracking refs', never acted on."""
    proc = _git(repo, "ls-remote", "--refs", remote, f"{LOCAL_REFS}*", f"{LOCAL_NOTES}*")
    if proc.returncode != 0:
        raise FetchFailed(
            f"git ls-remote {remote} failed (exit {proc.returncode}): {proc.stderr.strip()}; "
            "check the remote and your access to it"
        )
    found = {}
    for line in proc.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name.startswith((LOCAL_REFS, LOCAL_NOTES)):  # patterns match name tails too
            found[name] = oid
    return found


# -- pushing with leases --------------------------------------------------------------------


@dataclass(frozen=True)
class PushOutcome:
    """The result of one atomic leased push."""

    ok: bool
    """Everything landed."""
    lost_race: bool
    """Nothing landed because the remote moved (a lease or the remote's own check failed)."""
    detail: str
    """git's own words, for a message."""


def push_leased(repo: GitRepo, remote: str, updates: Iterable[RefUpdate]) -> PushOutcome:
    """One ``git push --atomic`` of ``updates``, each leased on ``expected``.

    ``expected`` is the value the REMOTE must hold (``None``: the ref must not exist there);
    ``new`` ``None`` deletes. After a success the tracking refs are set to what was pushed.
    ``remote`` was checked by the caller (:func:`check_remote`).
    """
    updates = list(updates)
    if not updates:
        return PushOutcome(True, False, "nothing to push")
    _check_publishable(repo, remote, updates)
    leases = [f"--force-with-lease={u.name}:{u.expected or ''}" for u in updates]
    return _push(repo, remote, updates, leases + [f"{u.new or ''}:{u.name}" for u in updates])


def _check_publishable(repo: GitRepo, remote: str, updates: list[RefUpdate]) -> None:
    """Never hand a remote a commit git fsck would reject (BadInput naming the ref). Every
    update's ``expected`` is the remote's value as fetched: what it holds is not walked."""
    heads = [u for u in updates if u.new is not None]
    known = [u.expected for u in updates if u.expected is not None]
    if len(heads) > 1 and repo.history_readable([u.new for u in heads if u.new], known):
        return  # one walk for all; a damaged one is named below
    for update in heads:
        assert update.new is not None
        repo.check_history(update.new, [update.expected] if update.expected else [], update.name)


def push_all(repo: GitRepo, remote: str, updates: list[RefUpdate]) -> PushOutcome:
    """One ``git push --atomic`` of ``updates`` (each a fast-forward of the remote's value, or
    a ref it lacks), without force: the remote's fast-forward rule is the compare-and-swap.

    The command line never grows with the number of refs: when ``updates`` are exactly the
    local okstra refs that differ from the remote's (the usual case), two glob refspecs push
    them; otherwise (a conflict or a refused remote record held some back) they are listed
    under a staging namespace of this process first, and the globs push that.
    """
    _sweep_outgoing(repo)
    if not updates:
        return PushOutcome(True, False, "nothing to push")
    _check_publishable(repo, remote, updates)
    kinds = {LOCAL_REFS: "okstra/", LOCAL_NOTES: "notes/"}
    present = [local for local in kinds if any(u.name.startswith(local) for u in updates)]
    if _exactly_what_differs(repo, remote, updates):
        return _push(repo, remote, updates, [f"{local}*:{local}*" for local in present])
    staging = f"{STAGING}{os.getpid()}-{secrets.token_hex(4)}/"
    staged = []
    for update in updates:
        local = LOCAL_NOTES if update.name.startswith(LOCAL_NOTES) else LOCAL_REFS
        name = staging + kinds[local] + update.name[len(local) :]
        staged.append(RefUpdate(name, update.new, None))
    repo.update_refs(staged, "okstra sync: refs to push")
    try:
        refspecs = [f"{staging}{kinds[local]}*:{local}*" for local in present]
        return _push(repo, remote, updates, refspecs)
    finally:
        repo.update_refs([RefUpdate(u.name, None, u.new) for u in staged], "okstra sync: pushed")


def _sweep_outgoing(repo: GitRepo) -> None:
    """Delete the staging refs of syncs killed before they cleaned up (their pid is gone):
    they only listed what was being pushed, but would pin its objects and clutter
    ``git for-each-ref`` for good. A live sync's, or one whose pid this user cannot see, stay."""
    from ..core.userfiles import process_gone

    left = repo.list_refs(STAGING)
    dead = {name for name in left if process_gone(name[len(STAGING) :].split("-", 1)[0])}
    if dead:
        with contextlib.suppress(RefMoved):  # another sync swept them first
            repo.update_refs(
                [RefUpdate(name, None, left[name]) for name in sorted(dead)],
                "okstra sync: staging refs of a killed sync",
            )


def _exactly_what_differs(repo: GitRepo, remote: str, updates: list[RefUpdate]) -> bool:
    """Whether ``updates`` are every local okstra ref (and notes ref) whose value differs from
    the remote's as fetched, at their local values: then a glob push sends nothing else."""
    wanted = {u.name: u.new for u in updates}
    refs = list_refs(repo, remote)
    for ref, value in refs.here.items():
        if refs.there.get(ref) != value and wanted.get(ref) != value:
            return False
    return all(refs.here.get(name) == new for name, new in wanted.items())


def _push(repo: GitRepo, remote: str, updates: list[RefUpdate], refspecs: list[str]) -> PushOutcome:
    """``git push --atomic`` of ``refspecs`` (which push ``updates``); on success the tracking
    refs are moved to what was pushed, in one transaction (git's own tracking update costs
    ~1 ms a ref; a libgit2 transaction a fifth of that)."""
    proc = _git(repo, "push", "--atomic", "--porcelain", remote, *refspecs)
    if proc.returncode == 0:
        crash_point("sync-pushed")  # kill -9 tests: the remote has it, the tracking refs not yet
        _track_pushed(repo, remote, updates)
        return PushOutcome(True, False, proc.stdout.strip())
    rejected = [line for line in proc.stdout.splitlines() if line.startswith("!") and "\t" in line]
    detail = "\n".join(rejected) or proc.stderr.strip() or f"exit {proc.returncode}"
    if rejected and all(any(r in line for r in _RACE_REASONS) for line in rejected):
        return PushOutcome(False, True, detail)
    return PushOutcome(False, False, detail + ("\n" + proc.stderr.strip() if rejected else ""))


def _track_pushed(repo: GitRepo, remote: str, updates: list[RefUpdate]) -> None:
    """Record what the remote now holds, as a fetch would have: each tracking ref moves from
    the remote's value it was leased or fast-forwarded on (``expected``). Many at once go
    into ``packed-refs`` in one write (a loose file each costs as much as the push did);
    the rest in ref transactions of a bounded size (libgit2 keeps each locked ref's file
    open). Tracking refs only mirror the remote: one a concurrent fetch moved is as good."""
    moves = [RefUpdate(tracking_name(remote, u.name), u.new, u.expected) for u in updates]
    if len(moves) >= BULK_REFS:
        bulk = tracking_refs(remote)
        with contextlib.suppress(RefMoved):
            held = repo.update_packed([m for m in moves if m.name.startswith(bulk)])
            moves = held + [m for m in moves if not m.name.startswith(bulk)]
    for start in range(0, len(moves), TRANSACTION_REFS):
        with contextlib.suppress(RefMoved):
            repo.update_refs(
                moves[start : start + TRANSACTION_REFS], f"okstra sync: pushed to {remote}"
            )


def _local_remote_dir(repo: GitRepo, remote: str) -> Path | None:
    """The git dir of ``remote`` when it is a repository on this machine (a path or a
    ``file://`` URL), else None."""
    url = repo.config_get(f"remote.{remote}.url") or ""
    if url.startswith("file://"):
        url = url[len("file://") :]
    elif "://" in url or (":" in url and "/" not in url.split(":", 1)[0] and url[:1] != "/"):
        return None  # a network URL, or scp-like host:path
    path = Path(url).expanduser()
    if not path.is_absolute():
        path = (repo.workdir or repo.git_dir) / path
    return path / ".git" if (path / ".git").is_dir() else path


def remote_locks(
    repo: GitRepo,
    remote: str,
    refnames: Iterable[str],
    older_than: float = 0.0,
    under: str | None = None,
) -> LockReport | None:
    """When ``remote`` is a repository on this machine, name the lock files (at least
    ``older_than`` seconds old) in it that block pushing ``refnames`` or any ref ``under`` a
    prefix: a push killed there leaves them, and no other machine is involved."""
    folder = _local_remote_dir(repo, remote)
    if folder is None:
        return None
    names = list(refnames)
    if under is not None:
        base = str(folder) + os.sep
        names += [str(p)[len(base) : -len(".lock")] for p in (folder / under).glob("*.lock")]
    locks = [h for h in held_locks(folder, names) if h.age >= older_than]
    if not locks:
        return None
    found = report(locks)
    where = f"git push {remote} ({folder}, a repository on this machine) is blocked: "
    return LockReport(where + found.text, found.command)


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
    from ..records.approval import APPROVALS_REF

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
) -> ClaimResult:
    """``stage claim --remote``: claim locally, publish atomically, or undo and choose again.

    Each round fetches and fast-forwards the task and its claims, claims locally (the batch
    is selected from what the remote holds), and pushes the claim refs and the task ref in one
    leased atomic push before any worktree is made. When the remote has moved, the local
    claim is put back exactly as it was and the round starts over from a fresh fetch — so two
    machines sharing the remote never both hold a stage.
    """
    from . import claims

    def publish(updates: list[RefUpdate]) -> None:
        # The approval the claim relies on travels with it: a clone that takes the next claim
        # must find the plan approved by whoever approved it, not record a hand approval itself.
        if push_claims_atomically(ctx, remote, updates + _notes_to_publish(ctx, remote, updates)):
            return
        _undo_lost(ctx, remote, key, updates, "the claim")

    for _ in range(CLAIM_ATTEMPTS):
        pulled = pull(ctx, remote)  # checks the remote first
        blocked = pulled.blocking((task_ref(key), claims_prefix(key)))
        if blocked:
            raise Refused(
                f"{', '.join(blocked)} could not be brought in step with {remote}, so a claim "
                f"cannot be published safely; see why and settle it: {okstra('sync', remote)}",
                hint=okstra("sync", remote),
            )
        try:
            return claims.claim(
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
            # A progress note, like git's own: the command goes on and may still succeed.
            sys.stderr.write(f"okstra: another clone claimed first on {remote}; choosing again\n")
            time.sleep(0.05 + random.random() * 0.2)  # let the winner's push settle
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
    from ..records.claim import claim_ref
    from ..records.task import task_ref
    from . import claims
    from .branches import stage_shared_ref

    ref, task = claim_ref(key, stage), task_ref(key)
    asked = remote is not None
    remote = remote or shared_through(ctx.repo, ref)
    if remote is None:
        return claims.done(ctx, key, stage, report, carry, head)
    check_remote(ctx.repo, remote)
    branch = stage_shared_ref(key, stage)
    sync_hint = okstra("sync", remote)

    def publish(changed: list[RefUpdate], claim: Claim) -> str | None:
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
            return (
                f"the task's latest events are recorded here but not on {remote} (its task "
                f"ref moved there); publish them with: {sync_hint}"
                if behind
                else None
            )
        if not outcome.lost_race:
            raise Refused(
                f"stage {stage} of {key} is done here, but {remote} refused the push "
                f"({outcome.detail}); it stays here until it can be published: {sync_hint}",
                hint=sync_hint,
            )
        _undo_lost(ctx, remote, key, changed, f"the done of stage {stage}")

    for _ in range(CLAIM_ATTEMPTS):
        try:
            pulled = pull(ctx, remote)
        except FetchFailed as exc:
            if asked:
                raise
            # Offline work goes on: the done is recorded here and says how to publish it.
            result = claims.done(ctx, key, stage, report, carry, head)
            note = f"not published: {exc} — publish it with: {sync_hint}"
            return replace(result, publish_note=note)
        blocked = pulled.blocking((ref,))
        if blocked:
            raise Refused(
                f"{', '.join(blocked)} could not be brought in step with {remote}, so the done "
                f"cannot be published; see why and settle it: {sync_hint}",
                hint=sync_hint,
            )
        try:
            result = claims.done(ctx, key, stage, report, carry, head, publish=publish)
        except RemoteRaceLost:
            time.sleep(0.05 + random.random() * 0.2)  # let the other clone's push settle
            continue
        return replace(result, published=remote)
    raise Conflict(
        f"the claim of stage {stage} of {key} or its task kept moving on {remote} during "
        f"{CLAIM_ATTEMPTS} tries; see {okstra('stage', 'list', key)}"
    )


def _descends(ctx: Context, update: RefUpdate) -> bool:
    """Whether pushing ``update`` moves the remote's ref forward (or creates it)."""
    assert update.new is not None
    return update.expected is None or ctx.repo.contains(update.new, update.expected)


# -- the whole sync -------------------------------------------------------------------------


def _branches_to_publish(
    ctx: Context, remote: str, pushes: list[RefUpdate], done: Reconciled
) -> list[BranchState]:
    """The task branches, and the branches of done stages, that go with this push: code
    travels with the claims that name it. Claim and tracking refs are read from the listing
    reconcile worked from, with its own changes: one lookup per ref costs at 1,000 stages."""
    from ..records.claim import CLAIMS_PREFIX
    from .branches import branch_states

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
