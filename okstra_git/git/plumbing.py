"""Reading a repository through git's plumbing, for what runs on every push and every build.

The pre-push hook, the server-side hooks and ``ci check`` read a few refs, one commit and a few
notes. Starting ``git`` costs ~2 ms where loading pygit2 costs ~60 ms, so they read through
``git for-each-ref`` and one ``git cat-file --batch``; everything else uses pygit2
(``gitlayer``). A server hook's child ``git`` sees the objects of the push being received (git
passes its quarantine in the environment), which libgit2 would have to be told about.

Processes start with ``os.posix_spawnp``: importing ``subprocess`` alone costs ~4 ms, on every
push (``subprocess`` is used where there is no ``posix_spawnp``). What starts and reaps them is
``posix``'s own, without loading ``os`` (``core/lightos.py``); what reads files and folders
loads ``os`` when it runs.

Every git started here reads objects as they are stored: ``GIT_NO_REPLACE_OBJECTS`` is set, as
libgit2 reads them. Followed, a ``refs/replace/<B>`` ref would make commit B read as the verified
commit A, and the gate would open for a tree nobody verified (docs/security.md).
"""

from __future__ import annotations

from ..core.errors import BadInput
from ..core.lightos import POSIX, child_environ
from ..core.lightos import system as _os

TYPE_CHECKING = False  # no typing import on the hook's path
if TYPE_CHECKING:
    import mmap
    import os
    from collections.abc import Iterable, Mapping
    from typing import IO

_SPAWN = hasattr(_os, "posix_spawnp")


def _environ() -> Mapping[str, str] | Mapping[bytes, bytes]:
    """The environment of every git started here: ours, with replace refs never followed."""
    return child_environ(GIT_NO_REPLACE_OBJECTS="1")


def _spawn(argv: list[str], fds: tuple[int, int, int]) -> int:
    """Start ``argv`` with ``fds`` as its stdin, stdout and stderr: its pid."""
    try:
        return _os.posix_spawnp(
            argv[0],
            argv,
            _environ(),
            file_actions=[(_os.POSIX_SPAWN_DUP2, fd, n) for n, fd in enumerate(fds)],
        )
    except OSError as exc:
        raise BadInput(f"cannot run git ({exc.strerror}): is git installed?") from None


class GitProcess:
    """One running ``git`` with pipes to its stdin, stdout and stderr."""

    def __init__(self, args: Iterable[str]) -> None:
        argv = ["git", *args]
        self.what = " ".join(argv[:3])
        if not _SPAWN:
            import subprocess

            self._popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=_environ(),
            )
            assert self._popen.stdin and self._popen.stdout and self._popen.stderr
            self.stdin: IO[bytes] = self._popen.stdin
            self.stdout: IO[bytes] = self._popen.stdout
            self._stderr: IO[bytes] = self._popen.stderr
            return
        ends = [_os.pipe() for _ in range(3)]  # (read, write) each; both ends close on exec
        child = (ends[0][0], ends[1][1], ends[2][1])
        try:
            self._pid = _spawn(argv, child)
        except BadInput:
            for fd in (*ends[0], *ends[1], *ends[2]):
                _os.close(fd)
            raise
        for fd in child:
            _os.close(fd)
        self.stdin = open(ends[0][1], "wb", buffering=0)  # noqa: SIM115 (closed in wait)
        self.stdout = open(ends[1][0], "rb")  # noqa: SIM115
        self._stderr = open(ends[2][0], "rb")  # noqa: SIM115

    def wait(self) -> tuple[int, bytes]:
        """Close stdin, read stderr to its end, reap git: ``(exit code, stderr)``.

        Only for a git that writes little to stderr while stdout is still being read (a full
        stderr pipe would stall it): ``cat-file`` and ``for-each-ref`` do.
        """
        self.stdin.close()  # unbuffered: nothing left to flush into a closed pipe
        self.stdout.close()
        err = self._stderr.read()
        self._stderr.close()
        if not _SPAWN:
            return self._popen.wait(), err
        return _os.waitstatus_to_exitcode(_os.waitpid(self._pid, 0)[1]), err

    def failed(self, code: int, err: bytes) -> BadInput:
        return _failed(self.what, code, err)

    def kill(self) -> None:
        """SIGKILL git at once: it leaves what it holds (lock files) as a killed git does."""
        import signal

        if not _SPAWN:
            self._popen.kill()
        else:
            _os.kill(self._pid, signal.SIGKILL)

    def close(self) -> None:
        """Close the pipes and reap git, whatever state it is in (after :meth:`wait`, a
        no-op)."""
        if not self.stdin.closed:
            self.wait()


def _failed(what: str, code: int, err: bytes) -> BadInput:
    """``what`` exited ``code``, in git's own words when it said any."""
    message = err.decode("utf-8", "replace").strip() or f"exit status {code}"
    return BadInput(f"{what} failed: {message}")


def note_paths(target: str) -> tuple[str, ...]:
    """Where a notes tree may hold the note on ``target``: 2/38 (ours), flat, 2/2/36."""
    return (f"{target[:2]}/{target[2:]}", target, f"{target[:2]}/{target[2:4]}/{target[4:]}")


def git_output(*args: str, input: bytes = b"") -> tuple[int, bytes, bytes]:
    """Run ``git ARGS`` with ``input`` on its stdin: ``(exit code, stdout, stderr)``.

    The pipes are served as they are ready (``select.poll``), so a large input or output never
    stalls git or us. Without input (``git config``, ``for-each-ref``), where the system has
    in-memory files, git writes its output into one and we read its stderr to the end: nothing
    to serve, and no ``select`` to load (a hook's every push)."""
    if not input and _SPAWN:
        return _output_in_file(args)
    proc = GitProcess(args)
    if not _SPAWN:
        out, err = proc._popen.communicate(input)
        return proc._popen.returncode, out, err
    import select

    pending = memoryview(input)
    out_fd, err_fd = proc.stdout.fileno(), proc._stderr.fileno()
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    if pending:
        _os.set_blocking(proc.stdin.fileno(), False)  # write what fits, never wait in write()
        poller.register(proc.stdin.fileno(), select.POLLOUT)
    else:
        proc.stdin.close()
    open_fds = len(chunks) + bool(pending)
    while open_fds:
        for fd, _event in poller.poll():
            if fd in chunks:
                data = _os.read(fd, 65536)
                if data:
                    chunks[fd].append(data)
                    continue
            else:
                try:
                    pending = pending[_os.write(fd, pending) :]
                except BlockingIOError:
                    continue
                except BrokenPipeError:  # git stopped reading: its exit code says why
                    pending = pending[:0]
                if pending:
                    continue
                proc.stdin.close()
            poller.unregister(fd)
            open_fds -= 1
    code, _ = proc.wait()
    return code, b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _output_in_file(args: tuple[str, ...]) -> tuple[int, bytes, bytes]:
    """:func:`git_output` without input: git's stdin at its end, its stdout a scratch file."""
    nothing, closed = _os.pipe()
    _os.close(closed)  # git reads the end of its input at once
    out = _scratch()
    try:
        code, err = _run_on_files(["git", *args], nothing, out)
        _os.lseek(out, 0, 0)
        with open(out, "rb", buffering=0, closefd=False) as written:
            return code, written.readall(), err
    finally:
        _os.close(nothing)
        _os.close(out)


def unreadable(where: str, what: str, why: object) -> BadInput:
    """``where`` (a ref) ``what`` that cannot be parsed, and the way out."""
    from ..core.shell import command

    return BadInput(
        f"{where} {what}, which cannot be read ({why}); `git fsck` names the damage. Point the "
        "ref at its last good commit: " + command("git", "update-ref", where, "GOOD-COMMIT")
    )


def commit_problem(body: bytes) -> str | None:
    """Why a commit object's headers would not parse (libgit2 refuses such a commit, so the
    plumbing reader must too: both readers give one answer), or ``None``.

    Checked without re (it would load enum and functools, ~5 ms on every push); the patterns
    are the ones tests hold these checks to."""
    headers = body.partition(b"\n\n")[0].split(b"\n")
    if not _tree_line(headers[0]):  # tree [0-9a-f]{40,64}
        return "no tree line"
    for name in (b"author", b"committer"):
        lines = [h for h in headers if h.startswith(name + b" ")]
        if len(lines) != 1 or not _signature(lines[0][len(name) + 1 :]):
            return f"malformed {name.decode()} line"
    return None


def _tree_line(line: bytes) -> bool:
    """``line`` is all of ``tree [0-9a-f]{40,64}``."""
    sha = line[len(b"tree ") :]
    return line.startswith(b"tree ") and 40 <= len(sha) <= 64 and not sha.strip(b"0123456789abcdef")


def _signature(value: bytes) -> bool:
    """``value`` (a line's, so no newline) is all of ``[^<>]*<[^<>]*> [0-9]+ [+-][0-9]{4}``: a
    name, an email in the one pair of ``<>``, then one space, a time and a zone after ``>``."""
    if value.count(b"<") != 1 or value.count(b">") != 1:
        return False
    _, _, email = value.partition(b"<")
    when = email.partition(b">")[2]
    fields = when.split(b" ")
    return (  # a ">" before the "<" leaves nothing after it: no fields
        len(fields) == 3
        and fields[0] == b""
        and fields[1].isdigit()
        and len(fields[2]) == 5
        and fields[2][:1] in (b"+", b"-")
        and fields[2][1:].isdigit()
    )


def not_a_commit(where: str, sha: str, kind: str | None) -> BadInput:
    """``where`` (a ref) points at ``sha``, which is missing (``kind`` None) or a ``kind``
    object, not a commit: what is there and how to get rid of it."""
    if kind is None:
        return BadInput(
            f"{where} points at {sha}, which is not in this repository; `git fsck` names "
            "what is missing"
        )
    from ..core.shell import command

    drop = command("git", "update-ref", "-d", where)
    return BadInput(
        f"{where} points at a {kind} ({sha[:12]}), not a commit: okstra's refs hold commit "
        f"chains. Remove it ({drop}), then fetch it again if a remote has it",
        hint=drop,
    )


def common_dir() -> str:
    """The common git dir of the repository around the current folder, as an absolute path
    (``git rev-parse --git-common-dir``): found by :func:`_discovered_common_dir` where it can
    tell as git would, else asked of git."""
    import os

    found = _discovered_common_dir()
    if found is not None:
        return found
    code, out, err = git_output("rev-parse", "--git-common-dir")
    if code:
        raise _failed("git rev-parse", code, err)
    return os.path.abspath(out.decode("utf-8", "surrogateescape").strip())


_DISCOVERY_ENV = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)
"""Variables that change where git finds the repository (or whether it trusts it): with any
set, :func:`_discovered_common_dir` leaves the finding to git."""


def _discovered_common_dir() -> str | None:
    """The common git dir around the current folder, found as git finds it in the plain case —
    the first folder up from here holding ``.git`` (a folder, or a ``gitdir:`` file of a linked
    worktree, whose ``commondir`` names the common dir) — without starting git (~3 ms of CPU,
    ~7 ms on a TAB). None, for git to answer, when anything is out of the plain: a variable of
    :data:`_DISCOVERY_ENV`, a folder on another file system, a repository another user owns
    (git's safe.directory), a bare repository or none at all, a ``.git`` that is neither."""
    import os

    if any(name in os.environ for name in _DISCOVERY_ENV):
        return None
    try:
        here = os.getcwd()
        device = os.stat(here).st_dev
        while True:
            if os.path.isfile(os.path.join(here, "HEAD")) and os.path.isdir(
                os.path.join(here, "objects")
            ):
                return None  # in a git dir itself (a bare repository, or inside .git)
            dotgit = os.path.join(here, ".git")
            try:
                found = os.lstat(dotgit)
            except FileNotFoundError:
                found = None
            if found is not None:
                return _common_of(dotgit, found)
            parent = os.path.dirname(here)
            if parent == here or os.stat(parent).st_dev != device:
                return None
            here = parent
    except OSError:
        return None


def git_dir_of(dotgit: str, found: os.stat_result) -> str | None:
    """The git dir a ``.git`` at ``dotgit`` (``found``, its lstat) names: itself when a folder,
    where a linked worktree's ``gitdir:`` file points; None for anything else (git decides)."""
    import os
    import stat

    if stat.S_ISDIR(found.st_mode):
        return dotgit
    if not stat.S_ISREG(found.st_mode):
        return None
    with open(dotgit, "rb") as fh:
        line = fh.read(4096).decode("utf-8", "surrogateescape").strip()
    if not line.startswith("gitdir: ") or "\n" in line:
        return None
    return os.path.join(os.path.dirname(dotgit), line[len("gitdir: ") :])


def _common_of(dotgit: str, found: os.stat_result) -> str | None:
    """The common dir of the repository whose ``.git`` is at ``dotgit`` (None: git decides)."""
    import os

    gitdir = git_dir_of(dotgit, found)
    if gitdir is None or not os.path.isfile(os.path.join(gitdir, "HEAD")):
        return None
    common = gitdir
    try:
        with open(os.path.join(gitdir, "commondir"), "rb") as fh:
            named = fh.read(4096).decode("utf-8", "surrogateescape").strip()
        common = os.path.join(gitdir, named)
    except FileNotFoundError:
        pass
    if os.stat(common).st_uid != os.getuid() or os.stat(dotgit).st_uid != os.getuid():
        return None  # git checks who owns it (safe.directory): let it
    return os.path.normpath(os.path.abspath(common))


MARKED_FOLDERS = 500
"""From this many folders of loose refs on, :func:`ref_files_mark` gives up: listing the refs
costs less than looking at every folder."""
RACY_NS = 2_000_000_000
"""A file changed this recently may change again within the same tick of the file system's
clock, unseen by its mtime (git's "racy" entries): :func:`ref_files_mark` does not vouch."""


def ref_files_mark(common_dir: str, prefix: str) -> str | None:
    """What the files that hold the refs under ``prefix`` (``refs/…/``) are now, as one text:
    ``packed-refs`` and every folder of loose refs under ``prefix``, each by inode, mtime and
    size. git (and libgit2) make, move and delete a ref by making or removing a file renamed
    into place, in its folder or as a new ``packed-refs``, so the text changes whenever the
    refs' names can have changed (a ref moving may change it too). None when it cannot tell:
    refs kept in a reftable, more than :data:`MARKED_FOLDERS` folders, or one changed within
    :data:`RACY_NS`."""
    import os
    import time

    if os.path.isdir(os.path.join(common_dir, "reftable")):
        return None
    parts = []
    newest = 0
    try:
        seen = os.stat(os.path.join(common_dir, "packed-refs"))
        parts.append(f"p {seen.st_ino} {seen.st_mtime_ns} {seen.st_size}")
        newest = seen.st_mtime_ns
    except FileNotFoundError:
        parts.append("p -")
    pending = [os.path.join(common_dir, *prefix.strip("/").split("/"))]
    while pending:
        folder = pending.pop()
        try:
            seen = os.stat(folder)
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            parts.append(f"- {folder}")
            continue
        parts.append(f"{seen.st_ino} {seen.st_mtime_ns} {folder}")
        newest = max(newest, seen.st_mtime_ns)
        pending += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
        if len(parts) > MARKED_FOLDERS:
            return None
    return None if time.time_ns() - newest < RACY_NS else "\t".join(parts)


def ref_names(*patterns: str) -> bytes:
    """The names of the refs matching ``patterns``, one a line, as ``git for-each-ref`` sorts
    them: the raw output, for a caller that only compares it."""
    proc = GitProcess(["for-each-ref", "--format=%(refname)", "--", *patterns])
    proc.stdin.close()
    out = proc.stdout.read()
    code, err = proc.wait()
    if code:
        raise proc.failed(code, err)
    return out


def list_refs(*patterns: str, where: str | None = None) -> dict[str, str]:
    """``refname → object id`` of the refs matching ``patterns`` (``git for-each-ref``: a
    pattern matches from the start up to a ``/``, or as a glob), in the repository at
    ``where`` (default: the one git finds from here). git reads tens of thousands of loose refs
    faster than a file-by-file read: sync compares such lists oid by oid."""
    at = ["-C", where] if where is not None else []
    proc = GitProcess([*at, "for-each-ref", "--format=%(objectname) %(refname)", "--", *patterns])
    proc.stdin.close()
    out = proc.stdout.read()
    code, err = proc.wait()
    if code:
        raise proc.failed(code, err)
    refs = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        oid, _, name = line.partition(" ")
        refs[name] = oid
    return refs


_PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")
"""Refs a linked worktree keeps in its own git dir: never read from the common dir's files."""
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./")
_HEX = frozenset(b"0123456789abcdef")
PACKED_REFS_READ = 1 << 20
"""A ``packed-refs`` larger than this is mapped, not read whole (a few pages are searched)."""


def refs_in_files(*patterns: str) -> dict[str, str] | None:
    """:func:`list_refs` of literal ``patterns`` in the repository git finds from here, read from
    the files git's files backend keeps refs in, without starting git (~2 ms of CPU a protected
    push pays otherwise): a loose ref file holds its object id and wins over the same name in
    ``packed-refs``. ``None``, for git to answer, as soon as anything is out of the plain: no
    ``.git`` folder here (a hook in a linked worktree, a server: git sets ``GIT_DIR``), a
    variable of :data:`_DISCOVERY_ENV`, a reftable, another owner, a glob or per-worktree
    pattern, a symbolic or broken ref, a name git might judge otherwise (or an id that is not
    SHA-1's: ``packedrefs`` reads 40 hex digits).

    Missing a ref here could only hide a record (a gate stays shut); every name and id given is
    one git would list, since anything odd goes to git."""
    if not POSIX or any(
        not pattern.startswith("refs/")
        or pattern.startswith(_PER_WORKTREE)
        or not _plain_name(pattern.rstrip("/"))
        for pattern in patterns
    ):
        return None
    from ..core.lightos import environ

    env = environ()
    if any(name in env for name in _DISCOVERY_ENV):
        return None
    common = _os.getcwd() + "/.git"
    try:
        found = _os.lstat(common)
        if found.st_mode & 0o170000 != 0o040000 or found.st_uid != _os.getuid():
            return None  # a gitdir: file (linked worktree), or git's safe.directory to judge
        for marker in ("commondir", "reftable"):
            if _exists(common + "/" + marker):
                return None
        if not _exists(common + "/HEAD"):
            return None
        refs = _packed_refs(common + "/packed-refs", patterns)
        if refs is None:
            return None
        for pattern in patterns:
            if not _loose_refs(common, pattern.rstrip("/"), pattern.endswith("/"), refs):
                return None
    except OSError:
        return None
    return refs


def _exists(path: str) -> bool:
    try:
        _os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def _plain_name(name: str) -> bool:
    """A ref name no rule of ``git check-ref-format`` can refuse (a narrower set than git's)."""
    return (
        bool(name)
        and set(name) <= _NAME_CHARS
        and ".." not in name
        and all(
            part and not part.startswith(".") and not part.endswith((".lock", "."))
            for part in name.split("/")
        )
    )


def _oid(text: bytes) -> str | None:
    return text.decode("ascii") if len(text) in (40, 64) and set(text) <= _HEX else None


def _packed_refs(path: str, patterns: tuple[str, ...]) -> dict[str, str] | None:
    """The refs of ``packed-refs`` matching ``patterns``, found as the pygit2 side finds them
    (``packedrefs._entries_under``: a binary search of the sorted file, mapped when large);
    None when one is not what git writes."""
    try:
        fd = _os.open(path, _os.O_RDONLY)
    except FileNotFoundError:
        return {}
    data: bytes | mmap.mmap
    try:
        size = _os.fstat(fd).st_size
        if size > PACKED_REFS_READ:
            import mmap  # a few pages of a large file are read, not all of it

            data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        else:
            data = b""
            while len(data) < size:
                chunk = _os.read(fd, size - len(data))
                if not chunk:
                    break
                data += chunk
    finally:
        _os.close(fd)  # a mapping keeps its own
    if not data:
        return {}
    from .packedrefs import _entries_under

    refs: dict[str, str] = {}
    try:
        first = data.find(b"\n") + 1 if data[:1] == b"#" else 0  # the header's traits
        if data.find(b" ", first) - first != 40:
            return None  # SHA-256 ids: packedrefs reads 40 hex digits, so git answers
        for pattern in patterns:
            exact = pattern.rstrip("/")
            for name, oid in _entries_under(data, exact.encode("ascii"), False).items():
                if name != exact and not name.startswith(exact + "/"):
                    continue
                if not _plain_name(name) or _oid(oid.encode("ascii")) is None:
                    return None
                refs[name] = oid
    finally:
        if not isinstance(data, bytes):
            data.close()
    return refs


def _loose_refs(common: str, name: str, under: bool, refs: dict[str, str]) -> bool:
    """Adds the loose refs at ``name`` (the ref itself unless ``under``, and every ref in its
    folder) to ``refs``; False when git has to judge one."""
    path = common + "/" + name
    try:
        found = _os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    kind = found.st_mode & 0o170000
    if kind == 0o100000 and not under:
        return _loose_ref(path, name, refs)
    if kind != 0o040000:
        return False  # a symlink (an old-style symbolic ref), or stranger
    for entry in _os.scandir(path):
        full = name + "/" + entry.name
        if entry.is_symlink():
            return False
        if entry.is_dir():
            if not _loose_refs(common, full, True, refs):
                return False
        elif entry.name.endswith(".lock"):
            continue  # a ref being written: git skips it too
        elif not _plain_name(full) or not _loose_ref(entry.path, full, refs):
            return False
    return True


def _loose_ref(path: str, name: str, refs: dict[str, str]) -> bool:
    fd = _os.open(path, _os.O_RDONLY)
    try:
        held = _os.read(fd, 128)
    finally:
        _os.close(fd)
    oid = _oid(held[:-1]) if held.endswith(b"\n") else None
    if oid is None:
        return False  # "ref: …" (symbolic), or not what git writes
    refs[name] = oid
    return True


def symbolic_targets(refs: Iterable[str]) -> dict[str, str]:
    """``ref → the ref it finally resolves to``, for each of ``refs`` that is a symbolic ref.

    A push to a symbolic ref moves (or deletes, or creates) the ref it points to, so a server
    judges that one. ``git for-each-ref`` resolves a whole chain at once but skips a dangling
    symbolic ref, which a push creates the target of; so each ref it does not list (a new
    ref, as git reports it) is read as a loose file (:func:`_loose_refs_dir`) or asked of
    ``git symbolic-ref``, which follows one as far as it goes."""
    names = list(dict.fromkeys(refs))
    if not names:
        return {}
    code, out, err = git_output("for-each-ref", "--format=%(refname)%00%(symref)", "--", *names)
    if code:
        raise _failed("git for-each-ref", code, err)
    listed: dict[str, str] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        name, _, target = line.partition("\0")
        listed[name] = target
    targets = {name: listed[name] for name in names if listed.get(name)}
    unlisted = [name for name in names if name not in listed]
    loose = _loose_refs_dir()
    for name in unlisted:
        found = _loose_symref(loose, name) if loose is not None else _asked_symref(name)
        if found is not None and found != name:
            targets[name] = found
    return targets


def _loose_refs_dir() -> str | None:
    """The git dir a server hook runs in (receive-pack sets ``GIT_DIR``), when its refs are
    files: there a symbolic ref is always a loose file (``packed-refs`` holds none), so a
    ref the push creates is checked by reading one path, not by starting one git per ref
    (a sync pushes dozens). ``None``: ask git (another ref store, or no ``GIT_DIR``)."""
    import os

    git_dir = os.environ.get("GIT_DIR")
    if not git_dir or os.path.isdir(os.path.join(git_dir, "reftable")):
        return None
    return git_dir


def _loose_symref(git_dir: str, name: str) -> str | None:
    """Where the loose symbolic ref ``name`` finally points (a chain followed, as git does,
    up to 5 links), or ``None`` when ``name`` is no symbolic ref."""
    import os

    target = None
    for _ in range(5):
        try:
            with open(os.path.join(git_dir, name), "rb") as fh:
                head = fh.read(4096)
        except OSError:  # absent (a new ref), or a folder
            return target
        if not head.startswith(b"ref: "):
            return target
        name = target = head[5:].strip().decode("utf-8", "surrogateescape")
    return _asked_symref(name) or target  # a longer chain: git knows its end


def _asked_symref(name: str) -> str | None:
    code, out, _ = git_output("symbolic-ref", "--quiet", "--", name)
    target = out.decode("utf-8", "surrogateescape").strip()
    return target if code == 0 and target else None


def read_objects(revs: list[str], git_dir: str) -> list[tuple[bytes, bytes] | None]:
    """``(type, content)`` of each of ``revs`` in ``git_dir``, or ``None`` where a rev names no
    object: all asked at once of one ``git cat-file --batch --buffer``, for reads of many
    objects (a listing of 100k tasks).

    The questions and the answers go through unlinked scratch files, not pipes: through a
    pipe, git and we would wake each other for every few objects, which doubles the CPU both
    spend on a large read."""
    import os

    if any("\n" in rev for rev in revs):
        raise ValueError("a revision on one line each")
    args = ["--git-dir", git_dir, "cat-file", "--batch", "--buffer"]
    asked, answers = _scratch(), _scratch()
    try:
        with open(asked, "wb", closefd=False) as questions:
            questions.write("".join(rev + "\n" for rev in revs).encode("utf-8", "surrogateescape"))
        os.lseek(asked, 0, os.SEEK_SET)
        code, err = _run_on_files(["git", *args], asked, answers)
        if code:
            raise _failed("git cat-file", code, err)
        os.lseek(answers, 0, os.SEEK_SET)
        with open(answers, "rb", buffering=0, closefd=False) as written:
            out = written.readall()
    finally:
        os.close(asked)
        os.close(answers)
    found: list[tuple[bytes, bytes] | None] = []
    pos = 0
    for _ in revs:  # "<oid> <type> <size>\n<content>\n", or "<rev> missing\n"
        end = out.index(b"\n", pos)
        fields = out[pos:end].split()
        if len(fields) != 3:
            found.append(None)
            pos = end + 1
            continue
        size = int(fields[2])
        found.append((fields[1], out[end + 1 : end + 1 + size]))
        pos = end + size + 2
    return found


def _scratch() -> int:
    """An unlinked file (in memory where the system has such files), open for both ways."""
    if hasattr(_os, "memfd_create"):
        return _os.memfd_create("okstra-git")
    import tempfile

    fd, path = tempfile.mkstemp(prefix="okstra-git-")
    _os.unlink(path)
    return fd


def _run_on_files(argv: list[str], stdin: int, stdout: int) -> tuple[int, bytes]:
    """Run ``argv`` reading ``stdin`` and writing ``stdout`` (file descriptors): its exit code
    and what it wrote on stderr."""
    if not _SPAWN:
        import subprocess

        done = subprocess.run(
            argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=_environ()
        )
        return done.returncode, done.stderr
    err_read, err_write = _os.pipe()
    try:
        pid = _spawn(argv, (stdin, stdout, err_write))
    except BadInput:
        _os.close(err_read)
        raise
    finally:
        _os.close(err_write)
    with open(err_read, "rb") as err:
        said = err.read()
    return _os.waitstatus_to_exitcode(_os.waitpid(pid, 0)[1]), said


class ObjectReader:
    """Objects by any revision git understands (``<sha>^{commit}``, ``<commit>:<path>``),
    from one ``git cat-file --batch`` asked one object at a time: the plumbing backend of
    ``objects.ObjectSource``."""

    def __init__(self, git_dir: str | None = None) -> None:
        at = ["--git-dir", git_dir] if git_dir is not None else []
        self._git_dir = git_dir
        self._git = GitProcess([*at, "cat-file", "--batch"])
        self._closed = False

    def read(self, rev: str) -> tuple[str, str, bytes] | None:
        """``(object id, type, content)``, or ``None`` when ``rev`` names no object."""
        if "\n" in rev:
            raise ValueError(f"a revision on one line, not {rev!r}")
        try:
            self._git.stdin.write(rev.encode("utf-8", "surrogateescape") + b"\n")
            header = self._git.stdout.readline()
        except BrokenPipeError:  # git has exited (not a repository …): it says why
            header = b""
        if not header:
            self._closed = True
            code, err = self._git.wait()
            raise self._git.failed(code, err)
        fields = header.split()
        if len(fields) != 3:  # "<rev> missing", "<rev> ambiguous"
            return None
        size = int(fields[2])
        data = self._git.stdout.read(size + 1)[:size]  # the content, then a newline
        return fields[0].decode("ascii"), fields[1].decode("ascii"), data

    def refs(self, *patterns: str) -> dict[str, str]:
        if self._git_dir is None:
            found = refs_in_files(*patterns)
            if found is not None:
                return found
        return list_refs(*patterns, where=self._git_dir)

    def check_commit(self, sha: str, where: str) -> str:
        found = self.read(sha)
        if found is None or found[1] != "commit":
            raise not_a_commit(where, sha, found[1] if found is not None else None)
        problem = commit_problem(found[2])
        if problem is not None:
            raise unreadable(where, f"points at commit {sha[:12]}", problem)
        return sha

    def note(self, notes_commit: str, target: str) -> bytes | None:
        for path in note_paths(target):
            entry = self.read(f"{notes_commit}:{path}")
            if entry is not None:
                return entry[2] if entry[1] == "blob" else None
        return None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._git.wait()

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
