"""Transport: the git CLI's fetch and push for okstra's refs (the user's credentials and
transports), with leases and the remote's lock files named."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from ...core.crashpoints import crash_point
from ...core.errors import BadInput, Refused
from ...core.patterns import lazy
from ...core.tracking import (
    LOCAL_NOTES,
    LOCAL_REFS,
    fetch_refspecs,
    tracking_name,
    tracking_notes,
    tracking_refs,
)
from ...core.values import Value
from ...git import plumbing
from ...git.process import Completed, git, run, run_showing_progress, shows_progress
from ...git.reflocks import LockReport, held_locks, report
from ...git.repo import BULK_REFS, GitRepo, RefMoved, RefUpdate
from .state import Listing, list_refs

_HEX40 = lazy(r"[0-9a-f]{40}")


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


def default_remote(repo: GitRepo) -> str:
    """The current branch's remote, else ``origin``, else the only remote."""
    branch = repo.head_branch()
    if branch is not None:
        upstream = repo.config_get(f"branch.{branch[len('refs/heads/') :]}.remote")
        if upstream and upstream != ".":
            return upstream
    names = repo.remote_names(sort=False)
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


class FetchFailed(Refused):
    """``git fetch`` of the remote failed (unreachable, no access): nothing was fetched."""


def _git_showing_progress(repo: GitRepo, *args: str, stdin: str | None = None) -> Completed:
    """``git ARGS`` here (``stdin`` its input); on a terminal with git's progress meter passed
    on (``--progress``: it comes after the subcommand), as a plain ``git fetch`` or ``git
    push`` shows it."""
    where = repo.workdir or repo.git_dir
    if not shows_progress():
        if stdin is not None:
            return run(["git", *args], where, stdin=stdin)
        return git(where, *args)
    argv = ["git", args[0], "--progress", *args[1:]]
    return run_showing_progress(argv, where, stdin=stdin)


def _fetch(repo: GitRepo, remote: str, refspecs: list[str]) -> None:
    proc = _git_showing_progress(
        repo, "fetch", "--no-tags", "--prune", "--quiet", remote, *refspecs
    )
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
    if len(listing.here) + len(listing.there) < PROBE_FROM:
        fetch(repo, remote)
        return None
    advertised = _advertised(repo, remote)
    if advertised == listing.there:
        return listing
    there = _fetch_advertised(repo, remote, advertised, listing.there)
    if there is None:
        fetch(repo, remote)
        return None
    return Listing(listing.here, there)


def _fetch_advertised(
    repo: GitRepo, remote: str, advertised: dict[str, str], tracked: dict[str, str]
) -> dict[str, str] | None:
    """When :data:`BULK_REFS` tracking refs or more would change (a clone's first sync of a
    large remote), fetch what ``git ls-remote`` listed (``advertised``) by commit id, and write
    the tracking refs from that list in one ``packed-refs`` write (notes and refs a loose file
    holds, in ref transactions): ``git fetch`` writes a loose file per ref, ~1 ms each, as
    much as the transfer itself at 10k refs. The objects come through ``git fetch`` as with
    the refspecs (its connectivity check, ``fetch.fsckObjects``), from the user's transport.

    Returns the tracking refs now held (local names → id), as :func:`list_refs` gives
    ``there``; None for the caller to run the plain fetch when fewer refs change, when a name
    or id is not one git's own fetch would write as given, or when this fetch failed (the
    remote moved since it listed its refs, or does not serve a commit by id)."""
    changed = {name: oid for name, oid in advertised.items() if tracked.get(name) != oid}
    gone = [name for name in tracked if name not in advertised]
    if len(changed) + len(gone) < BULK_REFS:
        return None  # git's fetch writes only the refs that changed: a few loose files
    from ...git.plumbed import valid_refname

    hex40 = _HEX40()
    if not all(hex40.fullmatch(oid) and valid_refname(name) for name, oid in changed.items()):
        return None
    wanted = "".join(f"{oid}\n" for oid in sorted(set(changed.values())))
    proc = _git_showing_progress(
        repo, "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--stdin", remote,
        stdin=wanted,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    sets = [RefUpdate(tracking_name(remote, n), changed[n], tracked.get(n)) for n in changed]
    bulk = tracking_refs(remote)
    moves = [RefUpdate(tracking_name(remote, n), None, tracked[n]) for n in sorted(gone)]
    moves += [u for u in sets if not u.name.startswith(bulk)]
    try:
        moves += repo.update_packed([u for u in sets if u.name.startswith(bulk)])
        for start in range(0, len(moves), TRANSACTION_REFS):
            repo.update_refs(
                moves[start : start + TRANSACTION_REFS], f"okstra sync: fetched from {remote}"
            )
    except RefMoved:  # another fetch moved them meanwhile: git's own fetch settles it
        return None
    return dict(advertised)


def _advertised(repo: GitRepo, remote: str, names: list[str] | None = None) -> dict[str, str]:
    """The remote's okstra refs and notes refs (local names → id), from ``git ls-remote``. Its
    names are only compared with the tracking refs', never acted on.

    With ``names`` (refs, or folders ending in ``/``), git lists only refs that start with one
    of them (and, its patterns matching name tails, a few more: the caller picks out those it
    asked for): a claim's probe then reads a few lines instead of every task's."""
    patterns = [f"{LOCAL_REFS}*", f"{LOCAL_NOTES}*"]
    if names is not None and not any(c in name for name in names for c in "*?[\\"):
        patterns = [f"{name}*" for name in names]  # one each: git matches every ref to each
    proc = git(repo.workdir or repo.git_dir, "ls-remote", "--refs", remote, *patterns)
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


def _under(ref: str, name: str) -> bool:
    """``ref`` is ``name`` or below it (``name`` a ref, or a folder ending in ``/``)."""
    return ref == name or ref.startswith(name if name.endswith("/") else name + "/")


def in_step(repo: GitRepo, remote: str, records: list[str], mirrored: list[str]) -> bool:
    """Whether a fetch from ``remote`` would bring nothing for these refs and a reconcile would
    change none of them: ``records`` (okstra refs or notes refs, each naming that ref and all
    below it) hold here what was last fetched, and the remote holds exactly that now; so do
    ``mirrored`` (refs never made local: the branches), as fetched and on the remote.

    One ``git for-each-ref`` of those refs and ``git ls-remote``: what a claim or done through
    the remote needs of the task it works on, where :func:`fetch_if_moved` reads every task's
    refs (a listing of 1,000 loose refs costs more than the whole ls-remote)."""
    names = [*records, *mirrored]
    tracked = {tracking_name(remote, name): name for name in names}
    where = str(repo.workdir or repo.git_dir)
    here: dict[str, str] = {}
    there: dict[str, str] = {}
    for ref, oid in plumbing.list_refs(*records, *tracked, where=where).items():
        local = next((n + ref[len(t) :] for t, n in tracked.items() if _under(ref, t)), None)
        if local is not None:
            there[local] = oid
        elif any(_under(ref, name) for name in records):
            here[ref] = oid
    theirs = {
        ref: oid
        for ref, oid in _advertised(repo, remote, names).items()
        if any(_under(ref, name) for name in names)
    }
    ours = {ref: oid for ref, oid in there.items() if any(_under(ref, n) for n in records)}
    return theirs == there and here == ours


class PushOutcome(Value):
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
    import secrets  # only when refs are staged for a push

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
    from ...core.userfiles import process_gone

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
    proc = _git_showing_progress(repo, "push", "--atomic", "--porcelain", remote, *refspecs)
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
    open). Tracking refs only mirror the remote: one a concurrent fetch moved is as good,
    and one the push moved itself (okstra's fetch refspecs are the remote's, which ``git
    push`` follows) is left as it is."""
    moves = [RefUpdate(tracking_name(remote, u.name), u.new, u.expected) for u in updates]
    moves = [m for m in moves if repo.read_ref(m.name) != m.new]
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
