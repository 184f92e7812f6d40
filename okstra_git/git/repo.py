"""The one module that owns pygit2 for local work.

Everything okstra stores goes through here: compare-and-swap ref updates (one ref or many in a
libgit2 transaction), commit chains whose trees hold JSON records, notes with a fanned-out
tree, ancestry questions and the clean-tree check that ignores ``.okstra/``.
Network work (fetch/push) is not here: it uses the ``git`` CLI for the user's credentials.

pygit2 is loaded on its first use, not with this module: importing it costs a command ~60 ms
of CPU, and :class:`~okstra_git.git.plumbed.PlumbedRepo` (this interface served by git's
plumbing, for the claims through a remote) never needs it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..core.crashpoints import crash_point
from ..core.errors import BadInput, Conflict
from ..core.patterns import lazy
from ..core.values import Value
from .packedrefs import _clashing, _loose_names, _packed_entries, _packed_refs_under, _shared_folder
from .plumbing import not_a_commit, note_paths, unreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, cast

    import pygit2

    from .reflocks import LockReport

    T = TypeVar("T")
else:
    from .lazy import pygit2

    def cast(_kind, value):  # typing.cast: tells mypy; at run time the value itself
        return value


BULK_REFS = 1000
"""From this many refs written at once on, those ``packed-refs`` can take go there in one write
(:meth:`GitRepo.update_packed`): a loose file each costs as much as the network work that
brought or sent them, and libgit2 keeps every ref of a transaction open (a file limit)."""
OLD_LOCK_SECONDS = 10.0
"""A live writer holds a ref lock for milliseconds; one this old was very likely left behind."""
FALLBACK_IDENTITY = ("okstra", "okstra@localhost")
_FILEMODE_BLOB = 0o100644  # git's tree entry modes (pygit2.enums.FileMode)
_FILEMODE_TREE = 0o040000
_ENTRY_KINDS = {
    0o160000: "a submodule (gitlink), not a file",
    0o120000: "a symbolic link, not a file",
    0o100755: "an executable file, which okstra never writes",
}
_PLAIN_COMMIT = lazy(
    rb"tree ([0-9a-f]{40,64})\n(?:parent [0-9a-f]{40,64}\n)*"
    rb"author [^<>\n]*<[^<>\n]*> [0-9]{1,18} [+-][0-9]{4}\n"
    rb"committer [^<>\n]*<[^<>\n]*> [0-9]{1,18} [+-][0-9]{4}\n\n"
)
"""The headers of a commit as okstra writes it: one libgit2 surely parses."""


class RefMoved(Exception):
    """A compare-and-swap saw another value than expected, or could not take a ref lock."""

    def __init__(self, refname: str, detail: str, lock_failed: bool = False) -> None:
        super().__init__(f"{refname}: {detail}")
        self.refname = refname
        self.lock_failed = lock_failed
        """True when a lock on ``refname`` could not be taken (held, or left by a killed
        writer), rather than the value having changed."""


class RefUpdate(Value):
    """One conditional ref change inside a transaction."""

    name: str
    """Full refname, e.g. ``refs/okstra/tasks/g/i``."""
    new: str | None
    """Target commit id (hex); ``None`` deletes the ref."""
    expected: str | None
    """The value read before deciding (hex); ``None`` means the ref must not exist yet."""


class Ident(Value):
    """Who writes a commit, and when (what a commit's author and committer lines hold)."""

    name: str
    email: str
    time: int
    """Seconds since the epoch."""
    offset: int
    """The local time zone's offset from UTC, in minutes."""


class DiffStatEntry(Value):
    """One file of a diff stat."""

    path: str
    """The file's path (``old => new`` for a rename)."""
    added: int
    """Lines added."""
    deleted: int
    """Lines deleted."""
    binary: bool
    """A binary file: the line counts are 0."""


class CommitInfo(Value):
    """A commit as a message names it."""

    commit: str
    """Its id."""
    parents: tuple[str, ...]
    """Its parents' ids, the first parent first."""
    message: str
    """Its message."""
    author: str
    """``Name <email>``."""
    when: str
    """Author date, ISO 8601 in the author's offset."""
    committed: str
    """Committer date, ISO 8601 in UTC."""

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


_MISSING = object()
MEMO_LIMIT = 4096


_CONFIG_ENV = (
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
)
"""What changes the config git reads (git-config(1), ENVIRONMENT; ``git -c`` passes
``GIT_CONFIG_PARAMETERS``) and libgit2 does not see."""


def _config_name(name: str) -> str:
    """``name`` as ``git config --list`` spells it: section and key lowercase, a subsection
    as written."""
    section, _, rest = name.partition(".")
    middle, _, key = rest.rpartition(".")
    return ".".join(part for part in (section.lower(), middle, key.lower()) if part)


class GitRepo:
    """A repository opened from any folder inside it, including a linked worktree."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self._setup(Path(repo.path), Path(repo.workdir) if repo.workdir else None, repo)

    def _setup(self, git_dir: Path, workdir: Path | None, repo: pygit2.Repository | None) -> None:
        self._opened = repo
        """pygit2's Repository, once opened (:attr:`_pygit2`)."""
        self.git_dir = git_dir
        self.common_dir = common_dir_of(self.git_dir)
        self.workdir = workdir
        self._pinned_signature: Ident | None = None
        self._config: dict[str, list[str | None]] | None = None
        """Config as ``git config --list`` gave it (see :meth:`_git_config`), until a write."""
        self._reads: dict[tuple[str, str], Any] | None = None
        """While :meth:`reading_once`: each ref question asked so far, with its answer."""
        self._local_config: tuple[object, dict[str, str | None]] = (None, {})
        """What :meth:`local_config_get` read, by the config file's identity (inode, mtime,
        size) it read it from."""
        self._main: pygit2.Repository | None = None
        """The main worktree's repository, once opened (:meth:`_main_repository`)."""
        self.memo: dict[tuple[str, str, str], Any] = {}
        """Records read from this repository's objects, by (kind, ref, commit): git objects
        never change, so an entry is never stale. A claim reads the same task and claims
        before it locks and again under the lock, and an agent claims in one process task after
        task; parsing and checking them once each is a third of a claim. See :meth:`memoized`."""

    @property
    def _pygit2(self) -> pygit2.Repository:
        """pygit2's Repository: the git layer's own (``git/``), never handed out."""
        found = self._opened
        if found is None:
            found = self._opened = self._open_pygit2()
        return found

    def _open_pygit2(self) -> pygit2.Repository:
        """The pygit2 Repository of a backend that opens it only when asked."""
        raise AssertionError("a GitRepo is made with its pygit2 Repository")

    def _main_repository(self) -> pygit2.Repository:
        """The repository of the main worktree (this one, when opened there), opened once: a
        claim asks for its HEAD under the task ref's lock, and opening a repository cost more
        than the question. Its HEAD and refs are read afresh on every question."""
        if self._main is None:
            same = self.git_dir.resolve() == self.common_dir.resolve()
            self._main = self._pygit2 if same else pygit2.Repository(str(self.common_dir))
        return self._main

    def main_checkout(self) -> tuple[Path | None, str | None]:
        """The main worktree's folder (None: a bare repository) and the commit its HEAD
        names (None: no commit yet)."""
        main = self._main_repository()
        if main.is_bare or main.workdir is None:
            return None, None
        if main.head_is_unborn:
            return Path(main.workdir), None
        return Path(main.workdir), str(main.head.peel(pygit2.Commit).id)

    @contextlib.contextmanager
    def reading_once(self) -> Iterator[None]:
        """Within it, each ref listing, ref read and the list of remotes is read once and then
        answered from memory. For a read over every task at once (``board``): each task's
        readers ask for the same refs again (the remotes, the notes refs, the tracking
        namespaces), which costs more than the tasks' own records. Only for reading: a ref
        written inside would not be seen."""
        outer = self._reads
        if outer is None:
            self._reads = {}
        try:
            yield
        finally:
            self._reads = outer

    def _once(self, kind: str, arg: str, read: Callable[[str], T]) -> T:
        if self._reads is None:
            return read(arg)
        found = self._reads.get((kind, arg), _MISSING)
        if found is _MISSING:
            found = self._reads[(kind, arg)] = read(arg)
        return found

    def memoized(self, kind: str, ref: str, commit: str, read: Callable[[], T]) -> T:
        """``read()`` (a record at ``commit`` of ``ref``), once per repository; mutable records
        must be copied by the caller before they are handed out."""
        found = self.memo.get((kind, ref, commit), _MISSING)
        if found is _MISSING:
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()  # an agent's long run: start over rather than grow
            found = self.memo[(kind, ref, commit)] = read()
        return found

    @classmethod
    def open(cls, start: str | os.PathLike[str] = ".") -> GitRepo:
        """The repository at ``start`` or a folder above it. For the one a command works in
        (``start`` is ``"."``), ``GIT_DIR`` and ``GIT_WORK_TREE`` decide first, as git's own
        commands read them (``git --git-dir=… okstra …`` passes them so); libgit2 reads
        neither."""
        env_dir = os.environ.get("GIT_DIR") if str(start) == "." else None
        if env_dir:
            return cls._from_env(env_dir, os.environ.get("GIT_WORK_TREE"))
        found = pygit2.discover_repository(str(start))
        if found is None:
            raise BadInput(f"not a git repository (or any parent folder): {Path(start).resolve()}")
        return cls(pygit2.Repository(found))

    @classmethod
    def _from_env(cls, git_dir: str, work_tree: str | None) -> GitRepo:
        """git's rule (git(1), GIT_DIR): the work tree is ``GIT_WORK_TREE``, else
        ``core.worktree``, else the current folder — unless the repository is bare."""
        try:
            repo = pygit2.Repository(
                os.path.abspath(git_dir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH
            )
        except pygit2.GitError:
            raise BadInput(f"GIT_DIR={git_dir}: not a git repository") from None
        if work_tree:
            repo.workdir = os.path.abspath(work_tree)
        elif not repo.is_bare and "core.worktree" not in repo.config:
            repo.workdir = os.getcwd()
        return cls(repo)

    # -- config ---------------------------------------------------------------------------

    def _git_config(self) -> dict[str, list[str | None]] | None:
        """Every config value as git itself reads it, when the environment changes what git
        reads (:data:`_CONFIG_ENV`: ``git -c``, ``GIT_CONFIG_COUNT``…, which libgit2
        ignores); ``None`` otherwise, and pygit2's reading is git's."""
        if not any(os.environ.get(name) for name in _CONFIG_ENV):
            return None
        if self._config is None:
            from .plumbing import git_output

            code, out, err = git_output("--git-dir", str(self.git_dir), "config", "--list", "-z")
            if code:
                raise BadInput(f"git config --list failed: {err.decode(errors='replace').strip()}")
            found: dict[str, list[str | None]] = {}
            for item in out.decode("utf-8", "surrogateescape").split("\0")[:-1]:
                name, newline, value = item.partition("\n")
                found.setdefault(name, []).append(value if newline else None)
            self._config = found
        return self._config

    def config_get(self, name: str) -> str | None:
        listed = self._git_config()
        if listed is not None:
            values = listed.get(_config_name(name))
            return None if not values else (values[-1] if values[-1] is not None else "")
        try:
            return self._pygit2.config[name]
        except KeyError:
            return None

    def local_config_get(self, name: str) -> str | None:
        """``name`` from this repository's own config file (``<common dir>/config``) alone:
        never a value set globally or for the system, which every clone of the user shares."""
        return self._once("local-config", name, self._local_config_get)

    def _local_config_get(self, name: str) -> str | None:
        path = self.common_dir / "config"
        try:
            seen = os.stat(path)
        except OSError:
            seen = None
        # Kept while the file is the same one (git rewrites a config into a new file, renamed
        # into place): a claim asks for this clone's id once per claim it looks at.
        mark = (seen.st_ino, seen.st_mtime_ns, seen.st_size) if seen is not None else None
        if mark is not None and self._local_config[0] == mark and name in self._local_config[1]:
            return self._local_config[1][name]
        try:
            value: str | None = pygit2.Config(str(path))[name]
        except (KeyError, pygit2.GitError):
            value = None
        if mark is not None:
            if self._local_config[0] != mark:
                self._local_config = (mark, {})
            self._local_config[1][name] = value
        return value

    def local_config_set(self, name: str, value: str) -> None:
        """Set ``name`` in this repository's own config file (git locks it while writing)."""
        self._local_config = (None, {})
        pygit2.Config(str(self.common_dir / "config"))[name] = value

    def config_get_all(self, name: str) -> list[str]:
        listed = self._git_config()
        if listed is not None:
            return [v for v in listed.get(_config_name(name), []) if v is not None]
        try:
            return [value for value in self._pygit2.config.get_multivar(name) if value is not None]
        except KeyError:
            return []

    def config_set(self, name: str, value: str) -> None:
        self._config = None
        self._pygit2.config[name] = value

    def config_add(self, name: str, value: str) -> None:
        """Add ``value`` to the multi-valued ``name`` (``git config --add``)."""
        self._config = None
        self._pygit2.config.set_multivar(name, "^$", value)

    def config_unset_all(self, name: str) -> None:
        self._config = None
        self._pygit2.config.delete_multivar(name, ".*")

    def signature(self) -> Ident:
        """The user's git identity (``user.name``/``user.email``) cleaned as ``git commit``
        cleans it, so no config value can write a broken author line; a neutral fallback for a
        part that is missing or empty, so metadata writes never fail on it; the time now.
        Inside :meth:`one_signature`, the one read when the block began."""
        if self._pinned_signature is not None:
            return self._pinned_signature
        name, email = (
            ident_text(self.config_get(key) or "") or fallback
            for key, fallback in zip(("user.name", "user.email"), FALLBACK_IDENTITY, strict=True)
        )
        now = time.time()
        return Ident(name, email, int(now), time.localtime(now).tm_gmtoff // 60)

    @contextlib.contextmanager
    def one_signature(self) -> Iterator[None]:
        """Every commit written in the block carries one signature, read once: a claim writes a
        commit per stage and a task event, and reading the identity from the config cost more
        than writing a commit. One time, too, for the objects of one transaction."""
        if self._pinned_signature is not None:
            yield
            return
        self._pinned_signature = self.signature()
        try:
            yield
        finally:
            self._pinned_signature = None

    def identity_unset(self) -> list[str]:
        """The parts of the user's git identity (``user.name``, ``user.email``) no config sets:
        :meth:`signature` writes the fallback (``okstra <okstra@localhost>``) for them."""
        return [
            key for key in ("user.name", "user.email") if not ident_text(self.config_get(key) or "")
        ]

    def identity(self) -> str:
        """``Name <email>`` of :meth:`signature`, as records store who did something."""
        who = self.signature()
        return f"{who.name} <{who.email}>"

    def remote_names(self, sort: bool = True) -> list[str]:
        """The remotes configured here, sorted (else in the config's order)."""
        names = self._once(
            "remotes", "", lambda _: tuple(n for n in self._pygit2.remotes.names() if n)
        )
        return sorted(names) if sort else list(names)

    def head_branch(self) -> str | None:
        """The branch (``refs/heads/…``) this work tree's HEAD names, born or not; None when
        HEAD is detached."""
        head = self._pygit2.references.get("HEAD")
        target = head.target if head is not None else None
        return target if isinstance(target, str) and target.startswith("refs/heads/") else None

    # -- refs ------------------------------------------------------------------------------

    def read_ref(self, name: str) -> str | None:
        return self._once("ref", name, self._read_ref)

    def _read_ref(self, name: str) -> str | None:
        try:
            return str(self._pygit2.lookup_reference(name).resolve().target)
        except (KeyError, pygit2.InvalidSpecError):
            return None

    def ref_commit(self, name: str) -> str | None:
        """The commit ref ``name`` points at, or None when it is absent; BadInput naming the
        ref when it holds another kind of object or a commit libgit2 cannot parse."""
        sha = self.read_ref(name)
        if sha is not None:
            self._commit_at(sha, name)
        return sha

    def check_commit(self, sha: str, where: str) -> str:
        """``sha`` when it is a commit libgit2 reads; else BadInput naming ``where`` (a ref that
        points at it), what is there instead and how to get rid of it."""
        self._commit_at(sha, where)
        return sha

    def _commit_at(self, sha: str, where: str) -> pygit2.Commit:
        """The commit of :meth:`check_commit`."""
        try:
            found = self._pygit2[sha]
        except KeyError:
            raise not_a_commit(where, sha, None) from None
        except pygit2.GitError as exc:
            raise unreadable(where, f"points at commit {sha[:12]}", exc) from None
        if not isinstance(found, pygit2.Commit):
            raise not_a_commit(where, sha, found.type_str)
        return found

    def list_refs(self, prefix: str) -> dict[str, str]:
        """Refs under ``prefix`` (ending in ``/``) → commit id, without walking every ref.

        pygit2 has no prefix iterator and a full iteration costs ~1 s at 100k refs, so read the
        loose refs folder and the ``packed-refs`` file directly (loose wins, as in git).
        """
        return dict(self._once("list", prefix, self._list_refs))

    def _list_refs(self, prefix: str) -> dict[str, str]:
        found = _packed_refs_under(self.common_dir / "packed-refs", prefix)
        # Loose refs: scandir with plain strings (this runs once per ref on listings).
        base = str(self.common_dir) + os.sep
        pending = [str(self.common_dir / prefix)]
        while pending:
            try:
                entries = list(os.scandir(pending.pop()))
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif not entry.name.endswith(".lock"):
                    try:
                        with open(entry.path, "rb") as fh:
                            content = fh.read(64).strip()
                    except FileNotFoundError:
                        continue
                    if len(content) == 40:
                        name = entry.path[len(base) :].replace(os.sep, "/")
                        found[name] = content.decode("ascii")
        return found

    def has_refs(self, prefix: str) -> bool:
        """Whether any ref lies under ``prefix`` (ending in ``/``), without listing them all."""
        return self._once("any", prefix, self._has_refs)

    def _has_refs(self, prefix: str) -> bool:
        folder = self.common_dir / prefix
        if folder.is_dir():
            with os.scandir(folder) as entries:
                if any(entries):
                    return True
        return _packed_refs_under(self.common_dir / "packed-refs", prefix, first=True) != {}

    def update_refs(self, updates: Iterable[RefUpdate], message: str) -> None:
        """Apply every update or none, each conditional on its expected value.

        Refs are locked in sorted order so racers queue in one order instead of failing each
        other round after round. Raises :class:`RefMoved` when a value changed or a lock is held.
        """
        ordered = sorted(updates, key=lambda u: u.name)
        if ordered:
            self.update_refs_guarded(ordered[0].name, lambda: (ordered, None), message)

    def update_refs_guarded(
        self, guard: str, build: Callable[[], tuple[list[RefUpdate], T]], message: str
    ) -> T:
        """Lock ``guard`` first, let ``build`` read and decide under that lock, then apply its
        updates like :meth:`update_refs` (all or none, each conditional on its expected value;
        raises :class:`RefMoved`).

        Writers that all change ``guard`` (every claim moves its task ref) then queue at one lock
        instead of each building a whole transaction's objects only to lose the compare-and-swap.
        ``build`` may raise to refuse; the locks are released and nothing is written.
        """
        from .reflocks import queue, writer_record

        locked: list[str] = []

        def lock(tx: pygit2.transaction.ReferenceTransaction, name: str) -> None:
            try:
                tx.lock_ref(name)
            except pygit2.GitError as exc:
                raise RefMoved(name, str(exc), lock_failed=True) from exc
            locked.append(name)

        try:
            # The writer record outlives the transaction block: it is dropped once the
            # transaction has committed (or aborted) and released its locks.
            with (
                queue(self.common_dir, guard),
                contextlib.ExitStack() as record,
                self._pygit2.transaction() as tx,
            ):
                lock(tx, guard)
                try:
                    with self.one_signature():
                        updates, value = build()
                except pygit2.GitError as exc:  # reading failed: no race, retrying cannot help
                    raise BadInput(
                        f"git could not read what updating {guard} needs: {exc}"
                    ) from exc
                ordered = sorted(updates, key=lambda u: u.name)
                for update in ordered:
                    if update.name != guard:
                        lock(tx, update.name)
                lock_files = [self.common_dir / f"{name}.lock" for name in locked]
                record.enter_context(writer_record(self.common_dir, lock_files))
                for update in ordered:
                    current = self.read_ref(update.name)
                    if current != update.expected:
                        raise RefMoved(update.name, f"expected {update.expected}, found {current}")
                    if update.new is None:
                        tx.remove(update.name)
                    else:
                        tx.set_target(update.name, update.new, message=message)
                crash_point("in-transaction")  # kill -9 tests: every ref locked, none written
        except pygit2.GitError as exc:
            raise RefMoved(guard, str(exc)) from exc
        return value

    def update_packed(self, updates: list[RefUpdate]) -> list[RefUpdate]:
        """Apply ``updates`` (each setting a value) in ``packed-refs``, in one write, each
        conditional on its expected value, under git's own ``packed-refs.lock``; returns those
        it held back for :meth:`update_refs` — a ref with a loose file or lock (which a
        packed value would not override) or a name clashing with another ref's folder.

        For refs written in bulk (tracking refs after a first push, a fresh clone's first
        adoption): one file instead of a loose file each, which costs as much as the network
        work at tens of thousands. A writer that makes a loose ref meanwhile (it does not take
        this lock) wins over the packed value, as in git: its change stands, never lost.
        Raises :class:`RefMoved` (nothing written) when the lock is held or a value moved.
        """
        if not updates:
            return []
        path = self.common_dir / "packed-refs"
        try:
            fd = os.open(f"{path}.lock", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            raise RefMoved("packed-refs", "packed-refs.lock is held", lock_failed=True) from None
        try:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            try:
                header, entries = _packed_entries(data)
            except ValueError:  # a file this reader does not know: a ref transaction decides
                return updates
            names = [u.name for u in updates]
            loose = _loose_names(self.common_dir, _shared_folder(names))
            clashing = _clashing(names, loose | entries.keys())
            held, values = [], {}
            for update in updates:
                if update.new is None or update.name in loose or update.name in clashing:
                    held.append(update)
                    continue
                current = entries.get(update.name, b"")[:40].decode("ascii") or None
                if current != update.expected:
                    raise RefMoved(update.name, f"expected {update.expected}, found {current}")
                values[update.name] = f"{update.new} {update.name}\n".encode(
                    "utf-8", "surrogateescape"
                )
            entries.update(values)
            order = sorted(entries, key=lambda name: name.encode("utf-8", "surrogateescape"))
            content = memoryview(header + b"".join(entries[name] for name in order))
            while content:
                content = content[os.write(fd, content) :]
            os.close(fd)
            fd = -1
            os.replace(f"{path}.lock", path)
        finally:
            if fd >= 0:
                os.close(fd)
                os.unlink(f"{path}.lock")
        return held

    def lock_report(
        self, refnames: Iterable[str], older_than: float | None = 0.0
    ) -> LockReport | None:
        """The lock files blocking ``refnames`` that are provably stale or at least
        ``older_than`` seconds old (None: only the provable), with the ``rm`` that clears them.
        """
        from .reflocks import blocking

        return blocking(self.common_dir, refnames, older_than)

    # -- objects ---------------------------------------------------------------------------

    def tree_with(self, base: str | None, changes: Mapping[str, bytes | None]) -> str:
        """Write the tree of ``base`` (a commit or tree id; ``None``: the empty tree) with
        ``changes`` (path → content, ``None`` removes); returns the new tree's id."""
        return str(self._tree_with(self._tree_of(base) if base is not None else None, changes)[0])

    def _tree_with(
        self, base: pygit2.Tree | None, changes: Mapping[str, bytes | None]
    ) -> tuple[pygit2.Oid, int]:
        """The tree written, and how many entries it has (an empty subtree is left out of its
        parent: told by the builder, not by reading the tree back)."""
        builder = self._pygit2.TreeBuilder(base) if base is not None else self._pygit2.TreeBuilder()
        nested: dict[str, dict[str, bytes | None]] = {}
        for path, content in changes.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested.setdefault(head, {})[rest] = content
            elif content is None:
                if builder.get(head) is not None:
                    builder.remove(head)
            else:
                builder.insert(head, self._pygit2.create_blob(content), _FILEMODE_BLOB)
        for name, sub_changes in nested.items():
            existing = base[name] if base is not None and name in base else None
            sub_base = existing if isinstance(existing, pygit2.Tree) else None
            sub_id, entries = self._tree_with(sub_base, sub_changes)
            if entries == 0:
                if builder.get(name) is not None:
                    builder.remove(name)
            else:
                builder.insert(name, sub_id, _FILEMODE_TREE)
        return builder.write(), len(builder)

    def commit(
        self, tree: str, parents: list[str], message: str, author_of: str | None = None
    ) -> str:
        """Write a commit; ``author_of`` keeps another commit's author and date (a replayed
        event, as a rebase keeps them), the committer being this user now."""
        who = self.signature()
        sig = pygit2.Signature(who.name, who.email, who.time, who.offset)
        author = self._pygit2[author_of].author if author_of is not None else sig
        oid = self._pygit2.create_commit(
            None,
            author,
            sig,
            clean_message(message),
            pygit2.Oid(hex=tree),
            [pygit2.Oid(hex=p) for p in parents],
        )
        return str(oid)

    def commit_info(self, commit: str) -> CommitInfo:
        """Who made ``commit``, when, its parents and its message."""
        return _commit_info(commit, cast(pygit2.Commit, self._pygit2[commit]))

    def history(self, head: str, where: str) -> Iterator[CommitInfo]:
        """``head`` and its first parents, newest first; BadInput naming ``where`` (the ref) at
        a commit that cannot be read."""
        for found in self._first_parent_line(head, where):
            yield _commit_info(str(found.id), found)

    def first_parents(self, tip: str, stop: str | None, where: str) -> list[str]:
        """The commits from ``tip`` back along first parents, ``stop`` excluded; oldest first.
        BadInput naming ``where`` (the ref) at a commit that cannot be read."""
        found = []
        for commit in self._first_parent_line(tip, where):
            if str(commit.id) == stop:
                break
            found.append(str(commit.id))
        return found[::-1]

    def merge_base(self, a: str, b: str) -> str | None:
        found = self._pygit2.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
        return str(found) if found is not None else None

    def files_of(self, commit: str | None, odd: list[str] | None = None) -> dict[str, str]:
        """Every blob of ``commit``'s tree: path → blob id (nothing for ``None``).

        With ``odd``, an entry that is not a plain file (mode 100644, all okstra writes) is
        left out and named there instead, ``"<path>: <what it is>"``: a gitlink names a
        commit that is not in this repository, which every blob read would fail on."""
        found: dict[str, str] = {}
        if commit is None:
            return found
        pending = [(self._tree_of(commit), "")]
        while pending:
            tree, at = pending.pop()
            for entry in tree:
                if entry.type_str == "tree":
                    pending.append(
                        (cast(pygit2.Tree, self._pygit2[entry.id]), f"{at}{entry.name}/")
                    )
                elif odd is not None and entry.filemode != _FILEMODE_BLOB:
                    odd.append(f"{at}{entry.name}: {_ENTRY_KINDS.get(entry.filemode, 'odd')}")
                else:
                    found[f"{at}{entry.name}"] = str(entry.id)
        return found

    def blob(self, blob_id: str) -> bytes:
        return cast(pygit2.Blob, self._pygit2[blob_id]).data

    def head_commit(self) -> str | None:
        """The commit this work tree (or bare repository) has checked out; None when unborn."""
        if self._pygit2.head_is_unborn:
            return None
        return str(self._pygit2.head.peel(pygit2.Commit).id)

    def main_branch(self) -> str | None:
        """The branch (``refs/heads/…``) checked out in the main worktree; None when detached."""
        head = _head_file(self.common_dir) or ""
        return head[len("ref: ") :] if head.startswith("ref: refs/heads/") else None

    def has_object(self, oid: str) -> bool:
        """Whether the object database holds ``oid`` (a record may name a commit that was
        never fetched here)."""
        return oid in self._pygit2

    # -- objects.ObjectSource: what the gate and the notes view read ----------------------

    def read(self, rev: str) -> tuple[str, str, bytes] | None:
        try:
            found = self._pygit2.revparse_single(rev)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None
        return str(found.id), found.type_str, found.read_raw()

    def refs(self, *patterns: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for pattern in patterns:
            sha = self.read_ref(pattern) if not pattern.endswith("/") else None
            if sha is not None:
                found[pattern] = sha
            found.update(self.list_refs(pattern.rstrip("/") + "/"))
        return found

    def note(self, notes_commit: str, target: str) -> bytes | None:
        return note_in(self, self._tree_of(notes_commit), target)

    def tree_id(self, commit: str) -> str:
        """The id of ``commit``'s tree (what ``okstra.gate.match=tree`` compares)."""
        return str(self._tree_of(commit).id)

    def _tree_of(self, commit: str) -> pygit2.Tree:
        return self._pygit2[commit].peel(pygit2.Tree)

    def read_path(self, commit: str, path: str) -> bytes | None:
        """The blob at ``path`` in ``commit``'s tree, or ``None``."""
        try:
            entry = self._tree_of(commit)[path]
            obj = self._pygit2[entry.id]  # a submodule's commit is not here: KeyError too
        except KeyError:
            return None
        return obj.data if isinstance(obj, pygit2.Blob) else None

    def files_at(self, commits: Sequence[str], path: str) -> list[bytes | None]:
        """The blob at ``path`` in each of ``commits``, read in bulk, or ``None`` where a
        commit is not one okstra would write (another kind of object, missing, unusual
        headers) or holds no blob at ``path``: read those with :meth:`check_commit` and
        :meth:`read_path`, which say what is wrong.

        Two ``git cat-file --batch`` read them, the commits then the files in their trees:
        libgit2 reads objects about half as fast as git, a cost that only a listing of every
        task (100k refs) pays many times over."""
        from .plumbing import read_objects

        if not commits:
            return []
        trees: list[str | None] = []
        shape = _PLAIN_COMMIT()
        for found in read_objects(list(commits), str(self.git_dir)):
            plain = found is not None and found[0] == b"commit" and shape.match(found[1])
            trees.append(plain.group(1).decode("ascii") if plain else None)
        wanted = [f"{tree}:{path}" for tree in trees if tree is not None]
        blobs = iter(read_objects(wanted, str(self.git_dir)))
        files: list[bytes | None] = []
        for tree in trees:
            blob = next(blobs) if tree is not None else None
            files.append(blob[1] if blob is not None and blob[0] == b"blob" else None)
        return files

    def dir_entries(self, commit: str, path: str) -> dict[str, str]:
        """Name → object id of the entries of the folder ``path`` in ``commit``'s tree (a
        blob's id is its content's: equal ids, equal files)."""
        try:
            entry = self._tree_of(commit)[path]
        except KeyError:
            return {}
        obj = self._pygit2[entry.id]
        if not isinstance(obj, pygit2.Tree):
            return {}
        return {e.name: str(e.id) for e in obj if e.name is not None}

    def introduced_by(self, head: str, path: str, blob: str, limit: int = 1000) -> str | None:
        """The oldest commit of ``head``'s first-parent line, back from ``head``, through which
        ``path`` holds ``blob`` without a break: where that content arrived. None when ``head``
        does not hold it there."""
        found = None
        for count, commit in enumerate(self._first_parent_line(head, f"{path} in {head[:12]}")):
            try:
                here = str(commit.tree[path].id)
            except KeyError:
                break
            if here != blob or count >= limit:
                break
            found = str(commit.id)
        return found

    def list_dir(self, commit: str, path: str) -> list[str]:
        try:
            entry = self._tree_of(commit)[path]
        except KeyError:
            return []
        obj = self._pygit2[entry.id]
        return [e.name for e in obj if e.name is not None] if isinstance(obj, pygit2.Tree) else []

    def _first_parent_line(self, head: str, where: str) -> Iterator[pygit2.Commit]:
        """:meth:`history`, as libgit2's commits (for this module's own walks)."""
        commit = self._commit_at(head, where)
        while commit.parent_ids:
            yield commit
            commit = self._commit_at(str(commit.parent_ids[0]), f"{where} (history)")
        yield commit

    def resolve_commit(self, rev: str) -> str:
        try:
            return str(self._pygit2.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise BadInput(f"{rev!r} does not name a commit in {self.git_dir}") from exc

    # -- notes -----------------------------------------------------------------------------

    def read_note(self, notes_ref: str, target: str) -> bytes | None:
        """The note on ``target`` in ``notes_ref``, whatever fanout wrote it (git writes flat,
        2/38 and, past ~65k notes, 2/2/36)."""
        head = self.ref_commit(notes_ref)
        if head is None:
            return None
        return note_in(self, self._tree_of(head), target)

    def add_note_lines(
        self, notes_ref: str, target: str, lines: Iterable[str], message: str
    ) -> bool:
        """Merge ``lines`` into the JSON-Lines note on ``target``: sorted, unique.

        The same shape as ``git notes merge -s cat_sort_uniq``, so two clones' notes merge.
        Notes are written under a 2/38 fanout so the notes tree never becomes one flat tree
        (rewriting a flat tree is quadratic in the number of notes). Returns False when every
        line was already there.
        """
        return self.add_notes_lines(notes_ref, {target: lines}, message)

    def add_notes_lines(
        self, notes_ref: str, lines_by_target: Mapping[str, Iterable[str]], message: str
    ) -> bool:
        """:meth:`add_note_lines` for several objects at once, in ONE notes commit.

        A verdict goes on a commit and on that commit's tree together, so a reader looking a
        verdict up by tree never sees one without the other.
        """

        def attempt() -> bool:
            update = self.notes_update(notes_ref, lines_by_target, message)
            if update is None:
                return False
            self.update_refs([update], message)
            return True

        return cas_retry(self, attempt, [notes_ref])

    def notes_update(
        self, notes_ref: str, lines_by_target: Mapping[str, Iterable[str]], message: str
    ) -> RefUpdate | None:
        """Write (not land) the notes commit merging ``lines_by_target`` into ``notes_ref``,
        read fresh; ``None`` when every line is already there. Land it with
        :meth:`update_refs`, alone or in one transaction with other refs."""
        old = self.ref_commit(notes_ref)
        changes: dict[str, bytes | None] = {}
        for target, lines in lines_by_target.items():
            have = note_lines(self.read_note(notes_ref, target) or b"")
            merged = note_union(have, [ln.encode("utf-8") for ln in lines])
            if merged != have:
                changes.update(dict.fromkeys(note_paths(target)))  # drop any old fanout
                changes[f"{target[:2]}/{target[2:]}"] = note_text(merged)
        if not changes:
            return None
        tree = self.tree_with(old, changes)
        return RefUpdate(notes_ref, self.commit(tree, [old] if old else [], message), old)

    def merge_notes(self, local: str, remote: str, message: str) -> str:
        """A merge commit of two notes commits: per object, the union of their lines (as
        ``git notes merge -s cat_sort_uniq``).

        Starts from the local tree and rewrites only the notes that differ, so the cost follows
        the number of changed notes, not the size of the notes tree.
        """
        mine = self._note_entries(local)
        changes: dict[str, bytes | None] = {}
        for target, (_path, blob) in self._note_entries(remote).items():
            have = mine.get(target)
            if have is not None and have[1] == blob:
                continue
            lines = note_lines(self.blob(blob))
            if have is not None:
                lines += note_lines(self.blob(have[1]))
                changes[have[0]] = None
            changes[f"{target[:2]}/{target[2:]}"] = note_text(note_union(lines))
        tree = self.tree_with(local, changes)
        return self.commit(tree, [local, remote], message)

    def _note_entries(self, notes_commit: str) -> dict[str, tuple[str, str]]:
        """Annotated object → (path in the notes tree, blob id), whatever the fanout."""
        found: dict[str, tuple[str, str]] = {}
        for path, blob in self.files_of(notes_commit).items():
            target = path.replace("/", "")
            if len(target) == 40:
                found[target] = (path, blob)
        return found

    # -- ancestry and cleanliness ------------------------------------------------------------

    def not_contained(self, head: str, commits: Iterable[str], base: str | None = None) -> set[str]:
        """The commits of ``commits`` that ``head`` does not contain (a commit contains itself).

        One walk from ``head`` hiding ``base`` answers all of them, so the cost is bounded by
        the task's own commits rather than by history depth (libgit2 ignores commit-graph).
        """
        pending = set(commits) - {head}
        if not pending:
            return set()
        if base is not None and not self.has_commit(base):
            # A base another clone recorded (its task worktree's HEAD) may be a commit this one
            # never fetched: the walk goes without it — longer, the same answer.
            base = None
        walker = self._pygit2.walk(pygit2.Oid(hex=head), pygit2.enums.SortMode.NONE)
        if base is not None:
            walker.hide(pygit2.Oid(hex=base))
        for commit in walker:
            pending.discard(str(commit.id))
            if not pending:
                return set()
        # Whatever the walk did not see may still lie at or behind the base.
        if base is None:
            return pending
        return {
            c
            for c in pending
            if c != base and not self._pygit2.descendant_of(pygit2.Oid(hex=base), pygit2.Oid(hex=c))
        }

    def has_commit(self, commit: str) -> bool:
        """``commit`` names a commit this repository holds (one recorded by another clone may
        not be here)."""
        try:
            return isinstance(self._pygit2[commit], pygit2.Commit)
        except (KeyError, ValueError):
            return False

    def check_history(self, head: str, known: Iterable[str], where: str) -> None:
        """BadInput naming ``where`` when a commit reachable from ``head`` but not from
        ``known`` (what the other side has) cannot be parsed — e.g. an identity line an older
        writer left broken: such a commit must not be published."""
        try:
            walker = self._pygit2.walk(pygit2.Oid(hex=head), pygit2.enums.SortMode.NONE)
            for sha in known:
                if sha in self._pygit2:
                    walker.hide(pygit2.Oid(hex=sha))
            for _ in walker:
                pass
        except pygit2.GitError as exc:  # so it is never published
            raise unreadable(where, "holds a commit", exc) from None

    def history_readable(self, heads: Iterable[str], known: Iterable[str]) -> bool:
        """Whether every commit reachable from ``heads`` but not from ``known`` parses: one
        walk for all of them (:meth:`check_history` names the ref of one that does not)."""
        try:
            walker = self._pygit2.walk(None, pygit2.enums.SortMode.NONE)
            for head in heads:
                walker.push(pygit2.Oid(hex=head))
            for sha in known:
                if sha in self._pygit2:
                    walker.hide(pygit2.Oid(hex=sha))
            for _ in walker:
                pass
        except (pygit2.GitError, KeyError, ValueError):
            return False
        return True

    def contains(self, head: str, commit: str) -> bool:
        return commit == head or self._pygit2.descendant_of(
            pygit2.Oid(hex=head), pygit2.Oid(hex=commit)
        )

    def diff_stat(self, base: str, head: str) -> list[DiffStatEntry]:
        """What ``git diff --stat base head`` lists (renames detected), one entry per file."""
        # pygit2's stubs leave out the two-tree form its Repository.diff takes
        diff = self._pygit2.diff(self._tree_of(base), self._tree_of(head))  # type: ignore[call-overload]
        diff.find_similar()
        entries = []
        for patch in diff:
            delta = patch.delta
            _context, added, deleted = patch.line_stats
            old, new = delta.old_file.path, delta.new_file.path
            entries.append(
                DiffStatEntry(
                    path=new if old == new else f"{old} => {new}",
                    added=added,
                    deleted=deleted,
                    binary=delta.is_binary,
                )
            )
        return entries

    def worktree_for_branch(self, branch: str) -> Path | None:
        """The work tree (main or linked) with ``refs/heads/<branch>`` checked out, if any.

        Reads each work tree's ``HEAD`` file instead of opening every work tree; the path of
        a linked work tree whose folder was deleted is still returned (the caller says so).
        """
        wanted = f"ref: refs/heads/{branch}"
        if _head_file(self.common_dir) == wanted:
            main = self._main_repository().workdir
            if main:
                return Path(main)
        for name in self._pygit2.list_worktrees():
            if _head_file(self.common_dir / "worktrees" / name) == wanted:
                path = Path(self._pygit2.lookup_worktree(name).path)
                if not is_aside(path):  # one being made or removed is not checked out yet
                    return path
        return None


# What ``git commit`` strips from the ends of a name or email (ident.c: "crud").
_IDENT_CRUD = frozenset(map(chr, range(33))) | frozenset(".,:;<>\"\\'")


def ident_text(text: str) -> str:
    """A name or email as ``git commit`` writes it: crud trimmed from both ends and the
    characters that delimit an identity line (newline, ``<``, ``>``) dropped, so a hostile
    ``user.name`` cannot give a commit a second header line or a ``missingEmail``."""
    start, end = 0, len(text)
    while start < end and text[start] in _IDENT_CRUD:
        start += 1
    while end > start and text[end - 1] in _IDENT_CRUD:
        end -= 1
    return "".join(ch for ch in text[start:end] if ch not in "\n<>")


def clean_message(message: str) -> str:
    """A commit message as ``git commit --cleanup=whitespace`` leaves it: NULs dropped (a C
    string would end there), trailing whitespace off every line, runs of blank lines made one,
    no blank lines at either end, one final newline."""
    lines: list[str] = []
    for line in message.replace("\0", "").split("\n"):
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def note_lines(note: bytes) -> list[bytes]:
    """A JSON-Lines note's non-empty lines, as bytes split at ``\\n`` only, like
    ``cat_sort_uniq``: no decoding that could alter a byte, no split inside a JSON string
    holding U+2028 or U+0085 (which ``str.splitlines()`` splits at)."""
    return [line for line in note.split(b"\n") if line]


def note_union(*notes: Iterable[bytes]) -> list[bytes]:
    """Every line of ``notes``, sorted, each once: how ``cat_sort_uniq`` merges two clones'
    notes. Write them with :func:`note_text`."""
    return sorted(set().union(*notes))


def note_text(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def _commit_info(commit: str, found: pygit2.Commit) -> CommitInfo:
    from datetime import UTC, datetime, timedelta, timezone  # only here: most commands skip it

    who = found.author
    when = datetime.fromtimestamp(who.time, timezone(timedelta(minutes=who.offset)))
    return CommitInfo(
        commit,
        tuple(str(parent) for parent in found.parent_ids),
        found.message,
        f"{who.name} <{who.email}>",
        when.isoformat(),
        datetime.fromtimestamp(found.commit_time, UTC).isoformat(),
    )


def note_in(repo: GitRepo, tree: pygit2.Tree, target: str) -> bytes | None:
    """The note on ``target`` in a notes tree; an entry that is not a blob (a forged tree) is
    no note."""
    for path in note_paths(target):
        try:
            found = repo._pygit2[tree[path].id]
        except KeyError:
            continue
        return found.data if isinstance(found, pygit2.Blob) else None
    return None


def cas_retry(
    repo: GitRepo, attempt: Callable[[], T], refnames: Iterable[str], attempts: int = 60
) -> T:
    """Run ``attempt`` until its compare-and-swap lands; each try re-reads from scratch.

    Backoff is jittered so racers spread out; after ``attempts`` the loss is a Conflict,
    naming the lock files that blocked it, if any.
    """
    names = list(refnames)
    delay = 0.002
    for tries in range(1, attempts + 1):
        try:
            return attempt()
        except RefMoved as moved:
            if moved.lock_failed:
                # A lock left by a killed writer never clears: name it at once when its writer
                # is provably gone, or once it is old (a live writer holds one for milliseconds).
                old = OLD_LOCK_SECONDS if tries % 8 == 0 else None
                found = repo.lock_report([*names, moved.refname], old)
                if found is not None:
                    raise Conflict(found.text, hint=found.command) from None
            import random  # a retry's jitter: not loaded by the reads, which never retry

            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 1.6, 0.1)
    found = repo.lock_report(names)
    if found is not None:
        raise Conflict(found.text, hint=found.command)
    raise Conflict(f"lost the race to update {', '.join(names)} after {attempts} attempts; retry")


def _head_file(git_dir: Path) -> str | None:
    try:
        return (git_dir / "HEAD").read_text("utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


def common_dir_of(git_dir: Path) -> Path:
    """The shared git dir of a linked worktree (``.git/worktrees/<name>`` → ``.git``)."""
    pointer = git_dir / "commondir"
    try:
        rel = pointer.read_text("utf-8").strip()
    except FileNotFoundError:
        return git_dir
    return (git_dir / rel).resolve()


def same_path(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


ASIDE_MAKING = "okstra-new"
ASIDE_REMOVING = "okstra-old"


def is_aside(path: Path) -> bool:
    """A worktree folder okstra is making or removing, never one to use."""
    return path.name.startswith(".") and path.name.endswith(
        (f".{ASIDE_MAKING}", f".{ASIDE_REMOVING}")
    )


def commits_not_in(
    repo: GitRepo, head: str, base: str | None, limit: int = 20
) -> list[tuple[str, str]]:
    """Commits reachable from ``head`` but not from ``base``: (id, subject), newest first."""
    walker = repo._pygit2.walk(pygit2.Oid(hex=head), pygit2.enums.SortMode.TOPOLOGICAL)
    if base is not None:
        walker.hide(pygit2.Oid(hex=base))
    found = []
    for commit in walker:
        found.append((str(commit.id), commit.message.split("\n", 1)[0]))
        if len(found) >= limit:
            break
    return found
