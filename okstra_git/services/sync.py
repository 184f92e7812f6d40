"""Sharing okstra's refs and notes through a remote (SPEC §2).

Fetch lands in remote-tracking namespaces only — ``refs/okstra-remotes/<R>/*`` for task and
claim refs, ``refs/notes/okstra-remotes/<R>/*`` for notes — so a fetch never clobbers local
state. Then, locally: task and claim refs fast-forward (a divergence is reported, never
overwritten); notes merge by union of sorted unique lines per annotated object (what
``git notes merge -s cat_sort_uniq`` gives for JSON-Lines notes). Push is one ``--atomic``
push with ``--force-with-lease=<ref>:<expected>`` for every ref, so a shared remote (any git
server) arbitrates between machines: a push based on stale information lands nothing.

Network work uses the ``git`` CLI (the user's credentials and transports); object and ref
work uses the git layer. This module is imported by ``ci check --fetch``: stdlib and the git
layer only.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BadInput, Conflict, Refused
from ..gate import REMOTE_NOTES_PREFIX
from ..gitlayer import OLD_LOCK_SECONDS, GitRepo, RefMoved, RefUpdate, cas_retry
from ..reflocks import LockReport, held_locks, report
from ..shell import okstra
from .context import Context

if TYPE_CHECKING:
    from datetime import timedelta

    from ..keys import TaskKey
    from .claims import ClaimResult

LOCAL_REFS = "refs/okstra/"
LOCAL_NOTES = "refs/notes/okstra/"
PUSH_ATTEMPTS = 5
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


def tracking_refs(remote: str) -> str:
    """Where the remote's ``refs/okstra/*`` are kept locally."""
    return f"refs/okstra-remotes/{remote}/"


def tracking_notes(remote: str) -> str:
    """Where the remote's ``refs/notes/okstra/*`` are kept locally (the gate reads them)."""
    return f"{REMOTE_NOTES_PREFIX}{remote}/"


def tracking_name(remote: str, ref: str) -> str:
    """Where the remote's copy of ``ref`` (an okstra ref or notes ref) is kept locally."""
    if ref.startswith(LOCAL_NOTES):
        return tracking_notes(remote) + ref[len(LOCAL_NOTES) :]
    return tracking_refs(remote) + ref[len(LOCAL_REFS) :]


def fetch_refspecs(remote: str) -> list[str]:
    """What a fetch of okstra data from ``remote`` brings, and where: the tracking namespaces
    only, so a fetch (ours, or a plain ``git fetch`` after ``init --remote``) never clobbers a
    local claim or note."""
    return [
        f"+{LOCAL_REFS}*:{tracking_refs(remote)}*",
        f"+{LOCAL_NOTES}*:{tracking_notes(remote)}*",
    ]


@dataclass(frozen=True)
class RefState:
    """One local ref against its remote-tracking copy, and what sync did about it."""

    ref: str
    """The local ref (``refs/okstra/…`` or ``refs/notes/okstra/…``)."""
    local: str | None
    """Its value before sync touched it."""
    remote: str | None
    """The remote's value, as last fetched."""
    state: str
    """``same``, ``fetched`` (new here), ``fast-forwarded``, ``merged`` (notes), ``ahead``,
    ``local-only`` or ``diverged``."""
    new: str | None = None
    """The local value after sync, when it changed or is to be pushed."""

    def to_data(self) -> dict[str, str | None]:
        return {
            "ref": self.ref,
            "local": self.local,
            "remote": self.remote,
            "state": self.state,
            "new": self.new,
        }


@dataclass
class SyncReport:
    """What ``git okstra sync`` saw and did."""

    remote: str
    """The remote synced with."""
    fetched: bool = False
    """Whether this sync fetched (not with ``--push-only``)."""
    refs: list[RefState] = field(default_factory=list)
    """Every okstra ref and notes ref, here or on the remote, after the last attempt."""
    pushed: list[str] = field(default_factory=list)
    """The refs the (atomic) push landed."""
    attempts: int = 0
    """Fetch-reconcile-push rounds; more than one when the remote moved meanwhile."""

    @property
    def diverged(self) -> list[RefState]:
        return [r for r in self.refs if r.state == "diverged"]

    def to_data(self) -> dict[str, object]:
        return {
            "remote": self.remote,
            "fetched": self.fetched,
            "refs": [r.to_data() for r in self.refs if r.state != "same"],
            "unchanged": sum(1 for r in self.refs if r.state == "same"),
            "pushed": self.pushed,
            "diverged": [r.ref for r in self.diverged],
            "attempts": self.attempts,
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


def _fetch(repo: GitRepo, remote: str, refspecs: list[str]) -> None:
    proc = _git(repo, "fetch", "--no-tags", "--prune", "--quiet", remote, *refspecs)
    if proc.returncode != 0:
        raise Refused(
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


# -- reconciling local refs with the fetched ones -------------------------------------------


def _remote_values(repo: GitRepo, local_prefix: str, track_prefix: str) -> dict[str, str | None]:
    """Every ref under ``local_prefix`` here or on the remote → the remote's value (``None``:
    the remote lacks it)."""
    tracked = {
        local_prefix + name[len(track_prefix) :]: sha
        for name, sha in repo.list_refs(track_prefix).items()
    }
    here = repo.list_refs(local_prefix)
    return {ref: tracked.get(ref) for ref in sorted(here.keys() | tracked.keys())}


def _reconcile_ref(repo: GitRepo, ref: str, remote_value: str | None, notes: bool) -> RefState:
    """Bring one local ref up to its fetched value where that loses nothing.

    Conditional on the local value read, retried on a lost race (a local writer moved it).
    """

    def attempt() -> RefState:
        local = repo.read_ref(ref)
        # Ancestry needs readable commits: a forged or damaged value is named, not walked.
        if local is not None:
            repo.commit_at(local, ref)
        if remote_value is not None:
            repo.commit_at(remote_value, f"{ref} as fetched")
            if local is not None and local != remote_value:
                repo.check_history(local, [remote_value], ref)
                repo.check_history(remote_value, [local], f"{ref} as fetched")
        if remote_value is None:
            return RefState(ref, local, None, "local-only", local)
        if local is None:
            repo.update_refs([RefUpdate(ref, remote_value, None)], "okstra sync: fetched")
            return RefState(ref, None, remote_value, "fetched", remote_value)
        if local == remote_value:
            return RefState(ref, local, remote_value, "same")
        if repo.contains(remote_value, local):
            repo.update_refs([RefUpdate(ref, remote_value, local)], "okstra sync: fast-forward")
            return RefState(ref, local, remote_value, "fast-forwarded", remote_value)
        if repo.contains(local, remote_value):
            return RefState(ref, local, remote_value, "ahead", local)
        if not notes:
            return RefState(ref, local, remote_value, "diverged")
        merged = merge_notes(repo, local, remote_value, f"okstra sync: merge {ref}")
        repo.update_refs([RefUpdate(ref, merged, local)], "okstra sync: merge notes")
        return RefState(ref, local, remote_value, "merged", merged)

    return cas_retry(repo, attempt, [ref])


def reconcile(repo: GitRepo, remote: str) -> list[RefState]:
    """Fast-forward task and claim refs, merge notes; say what is to be pushed or diverged."""
    states = []
    for local_prefix, track_prefix, notes in (
        (LOCAL_REFS, tracking_refs(remote), False),
        (LOCAL_NOTES, tracking_notes(remote), True),
    ):
        for ref, remote_value in _remote_values(repo, local_prefix, track_prefix).items():
            states.append(_reconcile_ref(repo, ref, remote_value, notes))
    return states


def note_entries(repo: GitRepo, notes_commit: str) -> dict[str, tuple[str, str]]:
    """Annotated object → (path in the notes tree, blob id), whatever the fanout."""
    found: dict[str, tuple[str, str]] = {}

    def walk(tree, path: str, prefix: str) -> None:
        for entry in tree:
            name = prefix + entry.name
            where = f"{path}{entry.name}"
            if entry.type_str == "tree":
                walk(repo.repo[entry.id], where + "/", name)
            elif entry.type_str == "blob" and len(name) == 40:
                found[name] = (where, str(entry.id))

    walk(repo.tree_of(notes_commit), "", "")
    return found


def merge_notes(repo: GitRepo, local: str, remote: str, message: str) -> str:
    """A merge commit of two notes commits: per object, the sorted union of their lines.

    Starts from the local tree and rewrites only the notes that differ, so the cost follows
    the number of changed notes, not the size of the notes tree.
    """
    mine = note_entries(repo, local)
    theirs = note_entries(repo, remote)
    changes: dict[str, bytes | None] = {}
    for target, (_path, blob) in theirs.items():
        have = mine.get(target)
        if have is not None and have[1] == blob:
            continue
        lines = _lines(repo, blob)
        if have is not None:
            lines |= _lines(repo, have[1])
            changes[have[0]] = None
        changes[f"{target[:2]}/{target[2:]}"] = b"\n".join(sorted(lines)) + b"\n"
    tree = repo.tree_with(repo.tree_of(local), changes)
    return repo.commit(tree, [local, remote], message)


def _lines(repo: GitRepo, blob: str) -> set[bytes]:
    """A note's non-empty lines, as bytes split at ``\\n`` only, like ``cat_sort_uniq``: no
    decoding that could alter a byte, no split inside a JSON string holding U+2028."""
    return {ln for ln in repo.repo[blob].data.split(b"\n") if ln}


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
    for update in updates:  # never hand a remote a commit git fsck would reject
        if update.new is not None:
            known = [update.expected, repo.read_ref(tracking_name(remote, update.name))]
            repo.check_history(update.new, [h for h in known if h], update.name)
    args = ["push", "--atomic", "--porcelain", remote]
    for update in updates:
        args.append(f"--force-with-lease={update.name}:{update.expected or ''}")
    args += [f"{update.new or ''}:{update.name}" for update in updates]
    proc = _git(repo, *args)
    if proc.returncode == 0:
        _track_pushed(repo, remote, updates)
        return PushOutcome(True, False, proc.stdout.strip())
    rejected = [line for line in proc.stdout.splitlines() if line.startswith("!") and "\t" in line]
    detail = "\n".join(rejected) or proc.stderr.strip() or f"exit {proc.returncode}"
    if rejected and all(any(r in line for r in _RACE_REASONS) for line in rejected):
        return PushOutcome(False, True, detail)
    return PushOutcome(False, False, detail + ("\n" + proc.stderr.strip() if rejected else ""))


def _track_pushed(repo: GitRepo, remote: str, updates: list[RefUpdate]) -> None:
    """Record what the remote now holds, as a fetch would have."""
    tracks = [(tracking_name(remote, u.name), u.new) for u in updates]
    moves = [RefUpdate(track, new, repo.read_ref(track)) for track, new in tracks]
    with contextlib.suppress(RefMoved):  # a concurrent fetch wrote them: as good as ours
        repo.update_refs(moves, f"okstra sync: pushed to {remote}")


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


class RemoteRaceLost(Conflict):
    """Another machine's claim reached the shared remote first; ours was undone locally."""


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
        if push_claims_atomically(ctx, remote, updates):
            return
        undo = [RefUpdate(u.name, u.expected, u.new) for u in updates]
        try:
            ctx.repo.update_refs(undo, "okstra: undo a claim another machine beat to the remote")
        except RefMoved as exc:
            sync = okstra("sync", remote)
            raise Refused(
                f"the claim lost the race on {remote} and could not be undone locally ({exc}); "
                f"run `{sync}` and check `{okstra('stage', 'list', key)}`",
                hint=sync,
            ) from exc
        raise RemoteRaceLost(f"another machine claimed first on {remote}")

    for _ in range(CLAIM_ATTEMPTS):
        pulled = pull(ctx, remote)  # checks the remote first
        if pulled.diverged:
            names = ", ".join(r.ref for r in pulled.diverged)
            raise Refused(
                f"{names} diverged from {remote}, so a claim cannot be published safely; "
                f"resolve it first (see `{okstra('sync', remote)}`)",
                hint=okstra("sync", remote),
            )
        try:
            return claims.claim(
                ctx, key, stage, lease, take_over_expired, worktrees=worktrees, publish=publish
            )
        except RemoteRaceLost:
            # A progress note, like git's own: the command goes on and may still succeed.
            sys.stderr.write(f"okstra: another machine claimed first on {remote}; choosing again\n")
            time.sleep(0.05 + random.random() * 0.2)  # let the winner's push settle
    from ..records.claim import claims_prefix
    from ..records.task import task_ref

    found = remote_locks(ctx.repo, remote, [task_ref(key)], under=claims_prefix(key))
    if found is not None:
        raise Conflict(found.text, hint=found.command)
    raise Conflict(
        f"lost the race to claim on {remote} {CLAIM_ATTEMPTS} times (other clones keep "
        "claiming this task); retry"
    )


# -- the whole sync -------------------------------------------------------------------------


def pull(ctx: Context, remote: str) -> SyncReport:
    """Fetch and reconcile, pushing nothing (what ``sync --fetch-only`` does)."""
    return sync(ctx, remote, do_push=False)


def sync(
    ctx: Context, remote: str | None = None, do_fetch: bool = True, do_push: bool = True
) -> SyncReport:
    """Fetch, reconcile and push okstra's refs and notes; retried when the remote moves."""
    repo = ctx.repo
    remote = remote or default_remote(repo)
    check_remote(repo, remote)
    report = SyncReport(remote)
    for attempt in range(1, PUSH_ATTEMPTS + 1):
        report.attempts = attempt
        if do_fetch:
            fetch(repo, remote)
            report.fetched = True
        report.refs = reconcile(repo, remote)
        if not do_push:
            return report
        pushes = [
            RefUpdate(r.ref, r.new, r.remote)
            for r in report.refs
            if r.state in ("ahead", "local-only", "merged")
        ]
        outcome = push_leased(repo, remote, pushes)
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
                f"{remote} changed since the last fetch, so the leased push landed nothing "
                f"({outcome.detail}); run `{okstra('sync', remote)}` without --push-only",
                hint=okstra("sync", remote),
            )
    raise Conflict(
        f"{remote} kept changing during {PUSH_ATTEMPTS} sync attempts (another clone is "
        "pushing okstra refs to it right now); rerun `git okstra sync`"
    )
