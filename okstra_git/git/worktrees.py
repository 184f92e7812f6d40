"""Linked worktrees okstra makes, checks and removes whole: one per claimed stage, one per
task (docs/storage.md)."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.crashpoints import crash_point
from ..core.errors import BadInput, Conflict, OkstraError, Refused, system_problem
from ..core.machine import sha1_hex
from ..core.shell import command
from ..core.values import Value
from ..logic.workspace import OKSTRA_DIR
from .repo import (
    ASIDE_MAKING,
    ASIDE_REMOVING,
    GitRepo,
    RefUpdate,
    common_dir_of,
    same_path,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import pygit2
else:
    from .lazy import pygit2


def worktree_head(worktree: str | os.PathLike[str], of: GitRepo | None = None) -> str | None:
    """The commit checked out in a work tree; None when the folder is gone or not a work tree
    (of ``of``'s repository, when given), or its branch has no commit yet.

    A folder ``of`` has registered as a worktree but whose ``.git`` file was deleted raises
    BadInput naming the repair: treating it as gone would record the branch head instead of
    the files in it, and its uncommitted work could be thrown away as "missing".
    """
    if not os.path.isdir(worktree):
        return None  # gone: nothing there to repair (a claim without a worktree has none)
    from .plumbed import PlumbedRepo

    if isinstance(of, PlumbedRepo):
        found = of.checked_out(worktree)
        if found is not False:
            return found  # type: ignore[return-value]  # str or None: False is excluded
    try:
        repo = pygit2.Repository(str(worktree))
    except pygit2.GitError:
        repo = None
    if repo is None or repo.workdir is None or not same_path(Path(repo.workdir), Path(worktree)):
        if of is not None:
            require_intact(of, Path(worktree))
        return None  # gone, or a plain folder inside some other repository
    if of is not None and common_dir_of(Path(repo.path)).resolve() != of.common_dir.resolve():
        return None  # a work tree of another clone (worktree roots can be shared)
    if repo.head_is_unborn:
        return None
    return str(repo.head.target)


PER_WORKTREE = ("refs/worktree/", "refs/bisect/", "refs/rewritten/")
"""Refs git keeps for one worktree alone (gitrepository-layout): removing the worktree
removes them, and with them the only hold on any commit nothing else reaches."""


def worktree_own_refs(worktree: Path) -> dict[str, str]:
    """``ref → commit`` of the worktree's own refs (:data:`PER_WORKTREE`); empty when the
    folder is not a work tree. A ref that names no commit holds none."""
    try:
        repo = pygit2.Repository(str(worktree))
    except pygit2.GitError:
        return {}
    found = {}
    for name in repo.references:
        if name.startswith(PER_WORKTREE):
            try:
                found[name] = str(repo.references[name].peel(pygit2.Commit).id)
            except (KeyError, ValueError, pygit2.GitError):
                continue
    return found


def worktree_owner(path: Path) -> Path | None:
    """The git dir of the repository whose work tree (main or linked) ``path`` is, if it is
    one: says whose a folder in our way is."""
    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError:
        return None
    if repo.workdir is None or not same_path(Path(repo.workdir), path):
        return None
    return common_dir_of(Path(repo.path))


def occupied(path: Path, wanted: str, retry: str) -> str:
    """Why the folder ``path`` cannot become ``wanted``, and the way out. Another repository's
    worktree (a clone sharing the worktree root) is never ours to move or remove: this clone
    gets a root of its own instead."""
    owner = worktree_owner(path)
    if owner is not None:
        return (
            f"{path} is a worktree of another repository ({owner}), not {wanted}; okstra "
            "leaves it alone. Give this clone a worktree root of its own (git config "
            f"okstra.worktreeRoot PATH), then {retry} again"
        )
    return (
        f"{path} exists and is not {wanted} (nor any git worktree); move it away, then "
        f"{retry} again"
    )


def merge_in_progress(
    worktree: str | os.PathLike[str], of: GitRepo | None = None
) -> tuple[str, ...] | None:
    """The paths still conflicted by a merge left in a work tree (empty: all resolved, not
    committed yet); None when no merge is in progress there (or the folder is not one).
    ``of`` a PlumbedRepo: no ``MERGE_HEAD`` in a plain work tree's git dir answers None
    without libgit2."""
    from .plumbed import PlumbedRepo, _plain_repository

    if isinstance(of, PlumbedRepo):
        found = _plain_repository(os.path.abspath(worktree))
        if found is not None and not (found[0] / "MERGE_HEAD").is_file():
            return None
    try:
        repo = pygit2.Repository(str(worktree))
    except pygit2.GitError:
        return None
    if not (Path(repo.path) / "MERGE_HEAD").is_file():
        return None
    conflicts = repo.index.conflicts
    if conflicts is None:
        return ()
    return tuple(sorted({(ours or theirs or base).path for base, ours, theirs in conflicts}))


def dirty_paths(worktree: str | os.PathLike[str], of: GitRepo | None = None) -> list[str]:
    """Staged, unstaged and untracked paths of a worktree, outside ``.okstra/``.

    Ignored files do not count; an untracked folder is reported once, as git status does.
    ``of`` a PlumbedRepo: ``git status`` answers (the same paths), libgit2 only if it fails.
    """
    from .plumbed import PlumbedRepo

    if isinstance(of, PlumbedRepo):
        found = of.status_paths(worktree)
        if found is not None:
            return sorted(
                p for p in found if p != OKSTRA_DIR and not p.startswith(OKSTRA_DIR + "/")
            )
    try:
        repo = pygit2.Repository(str(worktree))
    except pygit2.GitError as exc:
        raise BadInput(
            f"{worktree} is not a git work tree any more ({exc}); if it was one, its .git file "
            "was removed: see git worktree repair"
        ) from exc
    ignored = pygit2.enums.FileStatus.IGNORED
    return sorted(
        path
        for path, flags in repo.status(untracked_files="normal").items()
        if not flags & ignored and path != OKSTRA_DIR and not path.startswith(OKSTRA_DIR + "/")
    )


class WorktreeInfo(Value):
    """A linked worktree as registered in ``<common dir>/worktrees/<name>``."""

    name: str
    """The git worktree name (the admin folder's name)."""
    path: Path
    """Where its files are."""
    prunable: bool
    """True when its folder is gone (removed by hand or by a crash mid-teardown)."""
    locked: str | None
    """Why it is locked (``git worktree lock [--reason]``; empty without a reason), else None."""
    broken: bool
    """Its folder is there but its ``.git`` file is gone or points elsewhere: git cannot read
    it until ``git worktree repair`` rewrites the file."""


def worktree_at(repo: GitRepo, path: Path) -> WorktreeInfo | None:
    """The linked worktree registered for ``path`` (its folder may be gone), if any."""
    from .plumbed import PlumbedRepo

    if isinstance(repo, PlumbedRepo):
        return _registered_at(repo, path)
    for name in repo._pygit2.list_worktrees():
        try:
            found = repo._pygit2.lookup_worktree(name)
        except (KeyError, pygit2.GitError):
            continue
        where = Path(found.path)
        if same_path(where, path):
            admin = repo.common_dir / "worktrees" / name
            try:
                locked: str | None = (admin / "locked").read_text("utf-8", "replace").strip()
            except (FileNotFoundError, NotADirectoryError):
                locked = None
            broken = where.is_dir() and not _gitfile_points_to(where / ".git", admin)
            return WorktreeInfo(name, where, bool(found.is_prunable), locked, broken)
    return None


def _registered_at(repo: GitRepo, path: Path) -> WorktreeInfo | None:
    """:func:`worktree_at` from the admin folders' files, as libgit2 reads them: one holding
    ``gitdir``, ``commondir`` and ``HEAD`` is a worktree, its folder where ``gitdir`` points;
    prunable when its folder is gone and it is not locked."""
    wanted = os.path.realpath(path)
    for admin, where, real in repo._once("worktree-folders", str(repo.common_dir), _registered):
        if real == wanted:
            try:
                locked: str | None = (admin / "locked").read_text("utf-8", "replace").strip()
            except (FileNotFoundError, NotADirectoryError):
                locked = None
            present = where.is_dir()
            broken = present and not _gitfile_points_to(where / ".git", admin)
            return WorktreeInfo(admin.name, where, locked is None and not present, locked, broken)
    return None


def _registered(common_dir: str) -> list[tuple[Path, Path, str]]:
    """Each linked worktree's admin folder, the folder it is registered at and that folder's
    real path: read once within ``reading_once`` (a read asks it of every claim it shows)."""
    from .plumbed import registered_folder, worktree_admins

    found = []
    for admin in worktree_admins(Path(common_dir)):
        if not all((admin / f).is_file() for f in ("gitdir", "commondir", "HEAD")):
            continue
        where = registered_folder(admin)
        if where is not None:
            found.append((admin, where, os.path.realpath(where)))
    return found


def _gitfile_points_to(gitfile: Path, admin: Path) -> bool:
    try:
        text = gitfile.read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    if not text.startswith("gitdir:"):
        return False
    target = Path(text[len("gitdir:") :].strip())
    return same_path(gitfile.parent / target, admin)


def require_intact(repo: GitRepo, path: Path) -> None:
    """BadInput when ``path`` is a worktree of ``repo`` whose ``.git`` file was deleted."""
    found = worktree_at(repo, path)
    if found is None or not found.broken:
        return
    main = repo.common_dir.parent if repo.common_dir.name == ".git" else repo.common_dir
    repair = command("git", "-C", main, "worktree", "repair", found.path)
    raise BadInput(
        f"{found.path} is registered as git worktree {found.name!r} of {main}, but its .git "
        "file is missing or points elsewhere, so git cannot read the files in it (nothing was "
        f"changed). Repair it with: {repair}",
        hint=repair,
    )


def _name_taken(repo: GitRepo, name: str) -> bool:
    try:
        repo._pygit2.lookup_worktree(name)
    except (KeyError, pygit2.GitError):
        return False
    return True


def main_worktree(repo: GitRepo) -> tuple[Path, str]:
    """The main worktree's folder and HEAD commit (the task worktree starts from it)."""
    workdir, head = repo.main_checkout()
    if workdir is None:
        raise BadInput(f"{repo.common_dir} is a bare repository; stage worktrees need a work tree")
    if head is None:
        raise BadInput(
            f"the main worktree {workdir}{os.sep} has no commit yet; commit something first"
        )
    return workdir, head


WORKTREE_LOCK_TIMEOUT = 300.0
"""Seconds to wait for another process making the same worktree (a checkout can be slow)."""


def _aside(path: Path, what: str) -> Path:
    """The hidden sibling where a worktree is built (``okstra-new``) or taken apart
    (``okstra-old``): on the same filesystem, so moving it into or out of place is a rename."""
    return path.with_name(f".{path.name}.{what}")


def add_worktree(
    repo: GitRepo, name: str, path: Path, branch: str, start: str
) -> tuple[bool, bool]:
    """Make a worktree at ``path`` on ``branch`` (created at ``start`` when absent).

    Idempotent: the worktree already registered for ``path`` is reused as it is. ``name`` is
    the git worktree name; when another path holds it (two task keys whose slugs join to the
    same name), a suffix from the path keeps both. Returns ``(made_worktree, made_branch)`` so
    a caller rolling back removes only what it made.

    All or nothing, even under kill -9: the worktree is registered and checked out at a hidden
    sibling (``.<leaf>.okstra-new``), then its admin entry is pointed at ``path`` and the
    folder renamed there. A kill mid-checkout leaves only the hidden sibling, which the next
    call discards and redoes; ``path`` itself only ever holds a complete checkout.

    Makers of one branch's worktree queue on a lock file: racing claims of one task all make
    the task worktree, and without it the second fails inside the first one's half-made branch
    or admin folder. The kernel drops the lock when its holders die (the checkout's git process
    holds it too, so a maker killed mid-checkout frees it only once its git is gone), so it
    never goes stale.
    """
    existing = worktree_at(repo, path)
    if existing is not None and not existing.prunable:
        require_intact(repo, path)
        return False, False
    from .reflocks import flock_within

    lock_path = repo.common_dir / "okstra-locks" / "worktrees" / f"{branch}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not flock_within(fd, WORKTREE_LOCK_TIMEOUT)[0]:
            raise Conflict(
                f"another process has been making the worktree of {branch} at {path} for "
                f"{WORKTREE_LOCK_TIMEOUT:.0f}s (lock {lock_path}); wait for it and run the "
                "command again"
            )
        return _add_worktree_locked(repo, name, path, branch, start, fd)
    finally:
        os.close(fd)  # the lock goes with it


def _add_worktree_locked(
    repo: GitRepo, name: str, path: Path, branch: str, start: str, lock_fd: int
) -> tuple[bool, bool]:
    staging = _aside(path, ASIDE_MAKING)
    _discard(repo, staging)  # a maker killed half-way: its checkout is redone, never reused
    existing = worktree_at(repo, path)  # again: the lock's previous holder may have made it
    if existing is not None:
        if not existing.prunable:
            require_intact(repo, path)
            return False, False
        repo._pygit2.lookup_worktree(existing.name).prune(True)
    if path.exists() and any(path.iterdir()):
        raise Refused(occupied(path, f"a worktree of branch {branch}", "run the command"))
    if _name_taken(repo, name) or (repo.common_dir / "worktrees" / name).exists():
        name = f"{name}-{sha1_hex(str(path).encode())[:8]}"
    refname = f"refs/heads/{branch}"
    made_branch = False
    if repo.read_ref(refname) is None:
        try:
            repo._pygit2.branches.local.create(branch, repo._pygit2[start].peel(pygit2.Commit))
            made_branch = True
        except pygit2.AlreadyExistsError:
            pass  # made meanwhile by plain git: same name, we use it
        except (pygit2.GitError, OSError, ValueError) as exc:
            locked = repo.lock_report([refname])
            # A lock in the way is okstra's "no" with its fix (exit 1), not the system's error.
            raise (Refused if locked else _failure(exc))(
                f"cannot create branch {branch} at {start} in {repo.common_dir}: {exc}"
                + (f"; {locked.text}" if locked else ""),
                hint=locked.command if locked else None,
            ) from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    admin = repo.common_dir / "worktrees" / name
    try:
        _register(repo, admin, staging, refname)
        _check_out(admin, staging, path, lock_fd)
        crash_point("worktree-checked-out")
        # The commit point: the admin entry names the final place, then the folder goes there.
        # Killed between the two, the entry is prunable (its folder is missing) and the next
        # call redoes the worktree.
        from ..core.userfiles import write_atomic

        write_atomic(admin / "gitdir", f"{path / '.git'}\n".encode(), "worktree admin file")
        crash_point("worktree-registered")
        os.rename(staging, path)  # replaces an empty folder; fails on a non-empty one
    except (pygit2.GitError, OSError, BadInput) as exc:
        _discard(repo, staging)
        if _name_taken(repo, name) and repo._pygit2.lookup_worktree(name).is_prunable:
            repo._pygit2.lookup_worktree(name).prune(True)
        if made_branch:
            delete_branch(repo, branch, start)
        failure = _failure(exc)
        raise failure(f"cannot make worktree {name!r} at {path} on {branch}: {exc}") from exc
    return True, made_branch


def _failure(exc: BaseException) -> type[OkstraError]:
    """A full disk or a name too long is the system's error (exit 2), not okstra's "no"."""
    return BadInput if system_problem(exc) is not None else Refused


def _register(repo: GitRepo, admin: Path, staging: Path, refname: str) -> None:
    """Register ``staging`` as a linked worktree on ``refname`` with no files checked out yet,
    writing what ``git worktree add --no-checkout`` writes (gitrepository-layout(5),
    ``worktrees/<id>``), under the name okstra chose (git's CLI takes it from the folder).

    The folder and its ``.git`` file come first: an admin entry never names a folder that was
    not there, so a ``git worktree prune`` meanwhile cannot take it."""
    staging.mkdir()
    (staging / ".git").write_text(f"gitdir: {admin}\n", "utf-8")
    admin.parent.mkdir(exist_ok=True)
    admin.mkdir()
    (admin / "commondir").write_text(f"{os.path.relpath(repo.common_dir, admin)}\n", "utf-8")
    (admin / "HEAD").write_text(f"ref: {refname}\n", "utf-8")
    (admin / "gitdir").write_text(f"{staging / '.git'}\n", "utf-8")


def _check_out(admin: Path, staging: Path, path: Path, lock_fd: int) -> None:
    """Fill the new worktree's files and index from its HEAD, as ``git worktree add`` does
    (``git reset --hard``): git's checkout, several times libgit2's on a large tree. Its
    progress meter shows on a terminal. The worktree lock's fd goes with it, so a maker killed
    meanwhile leaves the lock held until this git is gone too."""
    from .process import repository_env, run_showing_progress, shows_progress

    argv = ["git", "reset", "--hard", "--no-recurse-submodules"]
    if not shows_progress():
        argv.append("--quiet")
    env = repository_env(GIT_DIR=str(admin), GIT_WORK_TREE=str(staging))
    proc = run_showing_progress(
        argv, env=env, keep_fds=[lock_fd], title=f"okstra: checking out {path}"
    )
    if proc.returncode != 0:
        raise BadInput(
            f"git reset --hard in {staging} failed (exit {proc.returncode}): {proc.stderr.strip()}"
        )


def _discard(repo: GitRepo, aside: Path) -> None:
    """Remove a hidden sibling folder okstra was making or taking apart, and its admin entry.

    Only okstra writes these names, and only once it has decided the folder may go: a half-made
    checkout, or a worktree whose work is already safe elsewhere.
    """
    import shutil

    found = worktree_at(repo, aside)
    if aside.exists():
        shutil.rmtree(aside)
    if found is not None:
        repo._pygit2.lookup_worktree(found.name).prune(True)


def remove_worktree(repo: GitRepo, path: Path) -> None:
    """Delete the worktree at ``path``; the caller has made sure no work is lost by it.

    The folder is first renamed aside (``.<leaf>.okstra-old``), then the admin entry pruned,
    then the renamed folder deleted. Killed at any point, ``path`` holds either the whole
    worktree or nothing, and the next call finishes the teardown (never a half-deleted tree
    that looks like a mass of uncommitted deletions). A locked worktree is refused.
    """
    found = worktree_at(repo, path)
    trash = _aside(path, ASIDE_REMOVING)
    if found is not None:
        if found.locked is not None:
            raise Refused(f"the worktree {found.path} is locked ({found.locked or 'no reason'})")
        if found.path.exists():
            _discard(repo, trash)
            os.rename(found.path, trash)
            crash_point("worktree-moved-aside")
        repo._pygit2.lookup_worktree(found.name).prune(True)
        crash_point("worktree-unregistered")
    _discard(repo, trash)


def delete_branch(repo: GitRepo, branch: str, expected: str) -> None:
    """Delete ``refs/heads/<branch>`` if it still points at ``expected`` (RefMoved otherwise)."""
    repo.update_refs(
        [RefUpdate(f"refs/heads/{branch}", None, expected)], f"okstra: delete {branch}"
    )
