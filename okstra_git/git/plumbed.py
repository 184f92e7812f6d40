"""GitRepo served by git's plumbing: for the commands whose whole process is timed against the
git they need (issue 25 — ``stage claim --remote``, ``stage done``, a lone ``stage claim
--no-worktree``, and the read commands agents poll: ``task show``/``list``/``status``, ``stage
ready``/``list``, ``verify target``/``show``, ``plan status``/``show``), which loading pygit2
alone (~60 ms of CPU) would put past their goal. Ancestry, diff stats and worktree state are
git's answers too (``rev-list``, ``diff --numstat``, ``status --porcelain``).

The same interface as :class:`~okstra_git.git.repo.GitRepo`, and the same answers: objects are
read through one ``git cat-file --batch``; refs and config as GitRepo's own readers and git
read them (the ref files, ``git config --list``); objects are written as loose objects by this
process, byte for byte what libgit2 writes (no process per object); refs move in one
``git update-ref --stdin`` transaction, each update compare-and-swapped on the value read.
Whatever else the interface offers opens pygit2 on first use (:meth:`_open_pygit2`), so a
command that needs more still works. Only a plain repository is served so
(:func:`open_plumbed`); any other is a GitRepo.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..core.crashpoints import crash_point
from ..core.errors import BadInput
from ..core.machine import sha1_hex
from .packedrefs import _packed_refs_under
from .plumbing import (
    GitProcess,
    ObjectReader,
    commit_problem,
    git_dir_of,
    git_output,
    not_a_commit,
    unreadable,
)
from .repo import (
    _FILEMODE_BLOB,
    _FILEMODE_TREE,
    DiffStatEntry,
    GitRepo,
    RefMoved,
    RefUpdate,
    _head_file,
    clean_message,
    common_dir_of,
    is_aside,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    import pygit2

    T = TypeVar("T")
else:
    from .lazy import pygit2


_ZERO = "0" * 40
_HEX40 = re.compile(r"[0-9a-f]{40}")
_REFNAME_BAD = re.compile(r"[\x00-\x20~^:?*\[\\\x7f]")
"""A character no ref name holds (git-check-ref-format(1))."""
_ENV = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_REF_PARANOIA",
)
"""Variables that make git read another repository, other objects or other refs than libgit2
does: with any set, a command gets a GitRepo."""
_EXTENSIONS = frozenset({"extensions.worktreeconfig", "extensions.noop"})
"""Repository extensions this backend reads as git and libgit2 both do (SHA-1 objects, refs
in files): with any other, a GitRepo."""
_PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")


def open_plumbed(start: str | os.PathLike[str] = ".") -> GitRepo:
    """The repository at ``start`` or a folder above it: a :class:`PlumbedRepo` when it is a
    plain one, found as git and libgit2 both find it, else :meth:`GitRepo.open`'s."""
    found = _plain_repository(os.path.abspath(start))
    if found is not None:
        repo = PlumbedRepo(*found)
        if repo.is_plain():
            return repo
        repo.close()
    return GitRepo.open(start)


def _plain_repository(here: str) -> tuple[Path, Path] | None:
    """``(git dir, work tree)`` of the repository around ``here``, resolved as libgit2 gives
    them, when the plain rule finds it: the first folder up holding ``.git`` (a folder, or the
    ``gitdir:`` file of a linked worktree), owned by this user, nothing in the environment
    changing where git looks. None otherwise: GitRepo decides."""
    if any(name in os.environ for name in _ENV):
        return None
    try:
        device = os.stat(here).st_dev
        while True:
            if os.path.isfile(os.path.join(here, "HEAD")) and os.path.isdir(
                os.path.join(here, "objects")
            ):
                return None  # a git dir itself (a bare repository, or inside .git)
            dotgit = os.path.join(here, ".git")
            try:
                found = os.lstat(dotgit)
            except FileNotFoundError:
                found = None
            if found is not None:
                break
            parent = os.path.dirname(here)
            if parent == here or os.stat(parent).st_dev != device:
                return None
            here = parent
        git_dir = git_dir_of(dotgit, found)
        if git_dir is None or not os.path.isfile(os.path.join(git_dir, "HEAD")):
            return None
        if os.stat(git_dir).st_uid != os.getuid() or found.st_uid != os.getuid():
            return None  # git checks who owns it (safe.directory): let it
    except OSError:
        return None
    return Path(os.path.realpath(git_dir)), Path(os.path.realpath(here))


def valid_refname(name: str) -> bool:
    """Whether ``name`` is a ref name libgit2 would look up (git-check-ref-format(1), one
    level allowed for names like ``HEAD``); it answers no ref for any other."""
    if not name or name.endswith(("/", ".")) or "@{" in name or name == "@":
        return False
    if _REFNAME_BAD.search(name):
        return False
    parts = name.split("/")
    if len(parts) == 1 and not re.fullmatch(r"[A-Z_]+", name):
        return False
    return all(p and not p.startswith(".") and not p.endswith(".lock") for p in parts) and (
        ".." not in name
    )


def _ref_value(git_dir: Path, common_dir: Path, name: str) -> str | None:
    """What the ref ``name`` of the worktree whose git dir is ``git_dir`` points at, symbolic
    refs followed as far as libgit2 follows them: the ref files, then packed-refs."""
    for _ in range(5):
        if not valid_refname(name):
            return None
        per_worktree = "/" not in name or name.startswith(_PER_WORKTREE)
        path = (git_dir if per_worktree else common_dir) / name
        try:
            with open(path, "rb") as fh:
                content = fh.read(4096).strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            packed = _packed_refs_under(common_dir / "packed-refs", name)
            return packed.get(name)
        if not content.startswith(b"ref: "):
            text = content.decode("ascii", "replace")
            return text if _HEX40.fullmatch(text) else None
        name = content[len(b"ref: ") :].decode("utf-8", "surrogateescape")
    return None


def _tree_entries(data: bytes) -> dict[str, tuple[int, str]]:
    """A raw tree object's entries: name → (mode, object id)."""
    found: dict[str, tuple[int, str]] = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        found[name] = (int(data[pos:space], 8), data[nul + 1 : nul + 21].hex())
        pos = nul + 21
    return found


def _tree_bytes(entries: Mapping[str, tuple[int, str]]) -> bytes:
    """A tree object's content, its entries in git's order (a folder sorts as ``name/``)."""

    def order(name: str) -> bytes:
        raw = name.encode("utf-8", "surrogateescape")
        return raw + b"/" if entries[name][0] == _FILEMODE_TREE else raw

    return b"".join(
        b"%o %s\0%s"
        % (
            entries[name][0],
            name.encode("utf-8", "surrogateescape"),
            bytes.fromhex(entries[name][1]),
        )
        for name in sorted(entries, key=order)
    )


def _offset(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


class PlumbedRepo(GitRepo):
    """:class:`GitRepo` through git's plumbing; pygit2 opened only for what is not here."""

    def __init__(self, git_dir: Path, workdir: Path) -> None:
        self._setup(git_dir, workdir, None)
        self._objects = str(self.common_dir / "objects")
        self._reader = ObjectReader(str(git_dir))
        self._scopes: list[tuple[str, str, str | None]] | None = None
        self._config_seen: tuple[object, ...] = ()
        self._written = 0
        weakref.finalize(self, self._reader.close)

    def close(self) -> None:
        self._reader.close()

    def _open_pygit2(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.git_dir))

    # -- config ---------------------------------------------------------------------------

    def _config_mark(self) -> tuple[object, ...]:
        """What the config files git reads are now (each by inode, mtime and size): a file
        written (git renames a new one into place) changes it, as libgit2 reads a changed
        file afresh."""
        home = os.environ.get("HOME", "")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        paths = (
            self.common_dir / "config",
            self.git_dir / "config.worktree",
            os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
            os.path.join(xdg, "git", "config"),
            os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
        )
        marks: list[object] = []
        for path in paths:
            try:
                seen = os.stat(path)
            except OSError:
                marks.append(None)
            else:
                marks.append((seen.st_ino, seen.st_mtime_ns, seen.st_size))
        return tuple(marks)

    def _scoped_config(self) -> list[tuple[str, str, str | None]]:
        """Every config value as git reads it here: ``(scope, name, value)`` in git's order
        (a later value wins), read again when a config file changed."""
        mark = self._config_mark()
        if self._scopes is None or self._config is None or mark != self._config_seen:
            self._config_seen = mark
            code, out, err = git_output(
                "--git-dir", str(self.git_dir), "config", "--list", "-z", "--show-scope"
            )
            if code:
                raise BadInput(f"git config --list failed: {err.decode(errors='replace').strip()}")
            items = out.decode("utf-8", "surrogateescape").split("\0")[:-1]
            scopes: list[tuple[str, str, str | None]] = []
            found: dict[str, list[str | None]] = {}
            for scope, item in zip(items[::2], items[1::2], strict=True):
                name, newline, value = item.partition("\n")
                scopes.append((scope, name, value if newline else None))
                found.setdefault(name, []).append(value if newline else None)
            self._scopes, self._config = scopes, found
        return self._scopes

    def _git_config(self) -> dict[str, list[str | None]]:
        self._scoped_config()
        assert self._config is not None
        return self._config

    def is_plain(self) -> bool:
        """Whether git and libgit2 read this repository alike and this backend writes it as
        both would: SHA-1 objects and refs in files, no shared-repository permissions, its
        work tree where ``.git`` is."""
        config = self._git_config()

        def last(name: str) -> str | None:
            values = config.get(name)
            return values[-1] if values else None

        extensions = {n for n in config if n.startswith("extensions.")}
        return (
            last("core.repositoryformatversion") in (None, "0", "1")
            and extensions <= _EXTENSIONS
            and last("core.worktree") is None
            and last("core.bare") in (None, "false")
            and last("core.sharedrepository") is None
            and not os.path.exists(self.common_dir / "reftable")
        )

    def local_config_get(self, name: str) -> str | None:
        key = _config_key(name)
        found = [v for scope, n, v in self._scoped_config() if scope == "local" and n == key]
        return (found[-1] if found[-1] is not None else "") if found else None

    def local_config_set(self, name: str, value: str) -> None:
        code, _, err = git_output(
            "config", "--file", str(self.common_dir / "config"), "--", name, value
        )
        self._config = None
        if code:
            raise BadInput(f"git config {name} failed: {err.decode(errors='replace').strip()}")

    def remote_names(self, sort: bool = True) -> list[str]:
        """The remotes with a URL configured, as libgit2 lists them."""
        names = self._once("remotes", "", lambda _: self._remotes())
        return sorted(names) if sort else list(names)

    def _remotes(self) -> tuple[str, ...]:
        names: dict[str, None] = {}
        for _scope, name, _value in self._scoped_config():
            if name.startswith("remote.") and name.endswith((".url", ".pushurl")):
                remote = name[len("remote.") : name.rindex(".")]
                if remote:
                    names[remote] = None
        return tuple(names)

    # -- refs ------------------------------------------------------------------------------

    def _read_ref(self, name: str) -> str | None:
        return _ref_value(self.git_dir, self.common_dir, name)

    def ref_commit(self, name: str) -> str | None:
        sha = self.read_ref(name)
        return self.check_commit(sha, name) if sha is not None else None

    def update_refs_guarded(
        self, guard: str, build: Callable[[], tuple[list[RefUpdate], T]], message: str
    ) -> T:
        """GitRepo's, in one ``git update-ref --stdin`` transaction: ``build`` decides on what
        it reads, queued behind this clone's other writers of ``guard``; the transaction then
        checks every ref it moves still holds what ``build`` read (and ``guard``, when it does
        not move it, what it held), locks them all (``prepare``), records its writer, and
        commits. A value moved or a lock held: :class:`RefMoved`, nothing written."""
        from .reflocks import queue, writer_record

        with queue(self.common_dir, guard):
            held = self.read_ref(guard)
            with self.one_signature():
                updates, value = build()
            ordered = sorted(updates, key=lambda u: u.name)
            lines = ["start"]
            if all(u.name != guard for u in ordered):
                lines.append(f"verify {guard} {held or _ZERO}")
            for u in ordered:
                if u.new is None:
                    lines.append(f"delete {u.name} {u.expected}" if u.expected else "")
                    lines[-1] = lines[-1] or f"verify {u.name} {_ZERO}"
                else:
                    lines.append(f"update {u.name} {u.new} {u.expected or _ZERO}")
            proc = GitProcess(
                ["--git-dir", str(self.git_dir), "update-ref", "-m", message, "--stdin"]
            )
            try:
                self._tell(proc, [*lines, "prepare"], ("start", "prepare"), guard, ordered)
                names = [guard, *(u.name for u in ordered if u.name != guard)]
                lock_files = [self.common_dir / f"{name}.lock" for name in names]
                with writer_record(self.common_dir, lock_files):
                    # kill -9 tests: every ref locked, none written — git's locks left as a
                    # killed libgit2 transaction leaves its own
                    crash_point("in-transaction", then=proc.kill)
                    self._tell(proc, ["commit"], ("commit",), guard, ordered)
            finally:
                proc.close()
        return value

    def _tell(
        self,
        proc: GitProcess,
        lines: list[str],
        acks: tuple[str, ...],
        guard: str,
        updates: list[RefUpdate],
    ) -> None:
        """Send ``lines`` to ``git update-ref --stdin``, then read its ``<ack>: ok`` lines;
        its refusal, as :class:`RefMoved`."""
        try:
            proc.stdin.write(
                "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
            )
            answers = [proc.stdout.readline() for _ in acks]
        except BrokenPipeError:
            answers = []
        if answers == [f"{ack}: ok\n".encode() for ack in acks]:
            return
        _, err = proc.wait()
        raise self._refusal(err.decode("utf-8", "replace").strip(), guard, updates)

    def _refusal(self, said: str, guard: str, updates: list[RefUpdate]) -> RefMoved:
        """git update-ref's refusal as GitRepo's :class:`RefMoved`: the ref it names, a value
        found moved said as GitRepo says it, a lock another writer holds marked so."""
        said = said.removeprefix("fatal: ")
        named = re.match(r"(?:[a-z]+: )?cannot lock ref '([^']+)': (.*)", said, re.DOTALL)
        if named is None:
            return RefMoved(guard, said)
        name, why = named.groups()
        if "File exists" in why:
            return RefMoved(name, why.split("\n", 1)[0], lock_failed=True)
        expected = [u.expected for u in updates if u.name == name]
        if expected and ("is at" in why or "already exists" in why or "unable to resolve" in why):
            return RefMoved(name, f"expected {expected[0]}, found {self._read_ref(name)}")
        return RefMoved(name, why.split("\n", 1)[0])

    # -- objects ---------------------------------------------------------------------------

    def check_commit(self, sha: str, where: str) -> str:
        return self._reader.check_commit(sha, where)

    def has_object(self, oid: str) -> bool:
        return self._reader.read(oid) is not None

    def has_commit(self, commit: str) -> bool:
        found = self._reader.read(commit)
        return found is not None and found[1] == "commit"

    def read(self, rev: str) -> tuple[str, str, bytes] | None:
        return self._reader.read(rev)

    def note(self, notes_commit: str, target: str) -> bytes | None:
        return self._reader.note(notes_commit, target)

    def read_note(self, notes_ref: str, target: str) -> bytes | None:
        head = self.ref_commit(notes_ref)
        return self._reader.note(head, target) if head is not None else None

    def blob(self, blob_id: str) -> bytes:
        found = self._reader.read(blob_id)
        if found is None or found[1] != "blob":
            raise KeyError(blob_id)
        return found[2]

    def read_path(self, commit: str, path: str) -> bytes | None:
        found = self._reader.read(f"{commit}:{path}")
        return found[2] if found is not None and found[1] == "blob" else None

    def _folder(self, commit: str, path: str) -> dict[str, tuple[int, str]]:
        found = self._reader.read(f"{commit}:{path}")
        return _tree_entries(found[2]) if found is not None and found[1] == "tree" else {}

    def dir_entries(self, commit: str, path: str) -> dict[str, str]:
        return {name: oid for name, (_mode, oid) in self._folder(commit, path).items()}

    def list_dir(self, commit: str, path: str) -> list[str]:
        return list(self._folder(commit, path))

    def resolve_commit(self, rev: str) -> str:
        found = self._reader.read(f"{rev}^{{commit}}") if "\n" not in rev else None
        if found is None:
            raise BadInput(f"{rev!r} does not name a commit in {self.git_dir}")
        return found[0]

    def tree_id(self, commit: str) -> str:
        found = self._reader.read(f"{commit}^{{tree}}")
        if found is None:
            raise KeyError(commit)  # as libgit2's lookup of an object not here
        return found[0]

    def _tree_of_id(self, base: str) -> dict[str, tuple[int, str]]:
        """The entries of the tree of ``base`` (a commit or a tree)."""
        found = self._reader.read(f"{base}^{{tree}}")
        if found is None:
            raise BadInput(f"{base} names no tree in {self.git_dir}")
        return _tree_entries(found[2])

    def tree_with(self, base: str | None, changes: Mapping[str, bytes | None]) -> str:
        return self._tree_with_entries(
            self._tree_of_id(base) if base is not None else None, changes
        )[0]

    def _tree_with_entries(
        self, base: dict[str, tuple[int, str]] | None, changes: Mapping[str, bytes | None]
    ) -> tuple[str, int]:
        """GitRepo's ``_tree_with`` on a tree's entries: the tree written, and its size."""
        entries = dict(base or {})
        nested: dict[str, dict[str, bytes | None]] = {}
        for path, content in changes.items():
            head, sep, rest = path.partition("/")
            if sep:
                nested.setdefault(head, {})[rest] = content
            elif content is None:
                entries.pop(head, None)
            else:
                entries[head] = (_FILEMODE_BLOB, self._write("blob", content))
        for name, sub_changes in nested.items():
            existing = (base or {}).get(name)
            sub_base = (
                _tree_entries(self._reader.read(existing[1])[2])  # type: ignore[index]
                if existing is not None and existing[0] == _FILEMODE_TREE
                else None
            )
            sub_id, size = self._tree_with_entries(sub_base, sub_changes)
            if size == 0:
                entries.pop(name, None)
            else:
                entries[name] = (_FILEMODE_TREE, sub_id)
        return self._write("tree", _tree_bytes(entries)), len(entries)

    def commit(
        self, tree: str, parents: list[str], message: str, author_of: str | None = None
    ) -> str:
        who = self.signature()
        committer = f"{who.name} <{who.email}> {who.time} {_offset(who.offset)}"
        author = committer
        if author_of is not None:
            found = self._reader.read(author_of)
            if found is None or found[1] != "commit":
                raise not_a_commit(author_of, author_of, found[1] if found else None)
            lines = found[2].partition(b"\n\n")[0].split(b"\n")
            author = next(
                (
                    h[len(b"author ") :].decode("utf-8", "surrogateescape")
                    for h in lines
                    if h.startswith(b"author ")
                ),
                "",
            )
            if not author:
                raise unreadable(author_of, "is a commit", "no author line")
        head = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        head += f"author {author}\ncommitter {committer}\n\n"
        return self._write(
            "commit", (head + clean_message(message)).encode("utf-8", "surrogateescape")
        )

    def _write(self, kind: str, data: bytes) -> str:
        """Store one object as git and libgit2 store a loose object (zlib-compressed, read
        only, renamed into place; one already there is kept): its id."""
        import zlib

        header = f"{kind} {len(data)}\0".encode("ascii")
        oid = sha1_hex(header + data)
        folder = os.path.join(self._objects, oid[:2])
        path = os.path.join(folder, oid[2:])
        if os.path.exists(path):
            return oid
        os.makedirs(folder, exist_ok=True)
        self._written += 1
        temp = os.path.join(folder, f"tmp_obj_okstra_{os.getpid()}_{self._written}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        try:
            content = memoryview(zlib.compress(header + data, 1))
            while content:
                content = content[os.write(fd, content) :]
        finally:
            os.close(fd)
        try:
            os.link(temp, path)
        except FileExistsError:
            pass  # another writer stored the same object
        finally:
            os.unlink(temp)
        return oid

    # -- ancestry --------------------------------------------------------------------------

    def contains(self, head: str, commit: str) -> bool:
        if commit == head:
            return True
        code, _, err = git_output(
            "--git-dir", str(self.git_dir), "merge-base", "--is-ancestor", commit, head
        )
        if code > 1:
            raise BadInput(f"git merge-base failed: {err.decode(errors='replace').strip()}")
        return code == 0

    def _unparsed(self, heads: Iterable[str], known: Iterable[str]) -> str | None:
        """Why a commit reachable from ``heads`` but not from ``known`` (those of them here)
        would not parse — GitRepo's walk, as ``git rev-list`` lists it and libgit2 reads each
        commit (``commit_problem``) — or None when every one does."""
        heads, known = list(heads), [sha for sha in known if self.has_object(sha)]
        for sha in known:  # libgit2 parses the commits it hides too
            found = self._reader.read(sha)
            problem = commit_problem(found[2]) if found and found[1] == "commit" else None
            if problem is not None:
                return f"commit {sha[:12]}: {problem}"
        if self._walked_parse(heads, set(known)):
            return None
        hidden = [f"^{sha}" for sha in known]
        asked = "".join(f"{line}\n" for line in [*heads, *hidden]).encode("ascii")
        code, out, err = git_output(
            "--git-dir", str(self.git_dir), "rev-list", "--stdin", input=asked
        )
        if code:
            return err.decode("utf-8", "replace").strip() or f"git rev-list: exit status {code}"
        for sha in out.decode("ascii").split():
            found = self._reader.read(sha)
            if found is None or found[1] != "commit":
                return f"{sha} is not a commit here"
            problem = commit_problem(found[2])
            if problem is not None:
                return f"commit {sha[:12]}: {problem}"
        return None

    def _walked_parse(self, heads: list[str], known: set[str], most: int = 16) -> bool:
        """Whether the commits reached from ``heads`` without passing a ``known`` one — at
        most ``most`` of them — all parse: then so do those ``git rev-list`` would list,
        which are among them, and no process is started. False: ask rev-list (a longer
        history, or one that does not parse, where only its exact list can tell)."""
        pending, seen = [h for h in heads if h not in known], set()
        while pending:
            sha = pending.pop()
            if sha in seen:
                continue
            seen.add(sha)
            found = self._reader.read(sha)
            if len(seen) > most or found is None or found[1] != "commit":
                return False
            if commit_problem(found[2]) is not None:
                return False
            body = found[2].partition(b"\n\n")[0]
            for line in body.split(b"\n")[1:]:
                if not line.startswith(b"parent "):
                    break
                parent = line[len(b"parent ") :].decode("ascii")
                if parent not in known:
                    pending.append(parent)
        return True

    def not_contained(self, head: str, commits: Iterable[str], base: str | None = None) -> set[str]:
        """GitRepo's answer from ``git rev-list HEAD ^BASE`` (the same walk, in git), then,
        for what it did not list, ``git merge-base --is-ancestor`` against the base."""
        pending = set(commits) - {head}
        if not pending:
            return set()
        if base is not None and not self.has_commit(base):
            base = None  # as GitRepo's: a base this clone never fetched walks without it
        pending.difference_update(self._once("rev-list", f"{head} {base}", self._listed))
        if base is None:
            return pending
        return {c for c in pending if c != base and not self.contains(base, c)}

    def _listed(self, walk: str) -> frozenset[str]:
        """``git rev-list HEAD ^BASE`` for ``walk`` = ``"HEAD BASE"`` (BASE ``None``: none),
        read once within ``reading_once`` (a target and the next step ask the same walk)."""
        head, base = walk.split(" ")
        hidden = [f"^{base}"] if base != "None" else []
        code, out, err = git_output("--git-dir", str(self.git_dir), "rev-list", head, *hidden, "--")
        if code:
            raise BadInput(f"git rev-list {head} failed: {err.decode(errors='replace').strip()}")
        return frozenset(out.decode("ascii").split())

    def check_history(self, head: str, known: Iterable[str], where: str) -> None:
        problem = self._unparsed([head], known)
        if problem is not None:
            raise unreadable(where, "holds a commit", problem)

    def history_readable(self, heads: Iterable[str], known: Iterable[str]) -> bool:
        return self._unparsed(heads, known) is None

    def worktree_for_branch(self, branch: str) -> Path | None:
        wanted = f"ref: refs/heads/{branch}"
        if _head_file(self.common_dir) == wanted:
            main = self.main_workdir()
            if main is not None:
                return main
        for admin in worktree_admins(self.common_dir):
            if _head_file(admin) != wanted or not (admin / "commondir").is_file():
                continue
            path = registered_folder(admin)
            if path is not None and not is_aside(path):
                return path
        return None

    def checked_out(self, worktree: str | os.PathLike[str]) -> str | bool | None:
        """The commit checked out in ``worktree`` (None: its branch has no commit yet) when it
        is a plain work tree of this repository, read from its HEAD and ref files; False when
        that is not sure (not a work tree, another's, not plain): ask libgit2."""
        found = _plain_repository(os.path.abspath(worktree))
        if found is None or found[1] != Path(os.path.realpath(worktree)):
            return False
        git_dir = found[0]
        if common_dir_of(git_dir).resolve() != self.common_dir.resolve():
            return False
        return _ref_value(git_dir, common_dir_of(git_dir), "HEAD")

    def status_paths(self, worktree: str | os.PathLike[str]) -> list[str] | None:
        """What libgit2's status lists dirty in ``worktree`` (staged, unstaged, untracked
        folders once, no ignored ones), from ``git status`` (renames not paired, as libgit2
        does not); None when git cannot tell."""
        code, out, _ = git_output(
            "-C", str(worktree), "status", "--porcelain=v1", "-z", "--no-renames",
            "--untracked-files=normal",
        )  # fmt: skip  # submodules as their config says, as libgit2 reads them
        if code:
            return None
        return [entry[3:].decode("utf-8", "surrogateescape") for entry in out.split(b"\0") if entry]

    def diff_stat(self, base: str, head: str) -> list[DiffStatEntry]:
        """GitRepo's, from ``git diff --numstat -M`` (renames at libgit2's 50% similarity)."""
        code, out, err = git_output(
            "--git-dir", str(self.git_dir), "-c", "diff.renames=true", "diff", "--numstat",
            "-z", "-M50%", "--no-ext-diff", "--no-textconv", f"{base}^{{tree}}",
            f"{head}^{{tree}}", "--",
        )  # fmt: skip
        if code:
            raise BadInput(f"git diff {base} {head} failed: {err.decode(errors='replace').strip()}")
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        entries, at = [], 0
        while at < len(fields) - 1:
            added, deleted, path = fields[at].split("\t", 2)
            at += 1
            if not path:  # a rename: its old and new paths follow
                path = f"{fields[at]} => {fields[at + 1]}"
                at += 2
            binary = added == "-"
            entries.append(
                DiffStatEntry(
                    path=path,
                    added=0 if binary else int(added),
                    deleted=0 if binary else int(deleted),
                    binary=binary,
                )
            )
        return entries

    def main_checkout(self) -> tuple[Path | None, str | None]:
        workdir = self.main_workdir()
        if workdir is None:
            return None, None
        head = _head_file(self.common_dir) or ""
        sha = self._read_ref(head[len("ref: ") :]) if head.startswith("ref: ") else head
        found = self._reader.read(f"{sha}^{{commit}}") if sha else None
        return workdir, found[0] if found is not None else None

    def main_workdir(self) -> Path | None:
        """The main worktree's folder (None: a bare repository's)."""
        if self.git_dir == self.common_dir:
            return self.workdir
        return self.common_dir.parent if self.common_dir.name == ".git" else None


def _config_key(name: str) -> str:
    from .repo import _config_name

    return _config_name(name)


def worktree_admins(common_dir: Path) -> list[Path]:
    """The admin folders of the linked worktrees of the repository at ``common_dir``
    (``worktrees/<name>``), by name."""
    folder = common_dir / "worktrees"
    try:
        return [folder / name for name in sorted(os.listdir(folder))]
    except (FileNotFoundError, NotADirectoryError):
        return []


def registered_folder(admin: Path) -> Path | None:
    """The folder the worktree of ``admin`` is registered at: where its ``gitdir`` file points
    (relative to ``admin`` when written relative), less the ``.git``; None when unreadable."""
    try:
        gitfile = Path((admin / "gitdir").read_text("utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return None
    return (admin / gitfile).parent if not gitfile.is_absolute() else gitfile.parent
