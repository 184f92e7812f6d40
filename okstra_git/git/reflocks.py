"""Who left a ref lock: okstra's writers say so, so a lock left by a killed writer is named at the
first failed try (docs/concurrency-and-sync.md: a stale ref lock is never removed automatically).

git and libgit2 lock a ref by creating ``<ref>.lock`` and renaming it over the ref; the file
says nothing about its writer, so on its own a lock can only be judged by its age. An okstra
transaction, once it holds its locks, writes a writer file
(``<common dir>/okstra-locks/writers/<host>-<pid>-<n>.json``) naming its process and the
identity (inode, mtime) of each lock file, and holds an exclusive ``flock`` on it until the
transaction is over; then it deletes it. The kernel drops the ``flock`` when the process dies,
however it dies. So a lock file whose identity a writer file records, where that writer file's
``flock`` can be taken and its host is this one, was left by an okstra process that is gone:
provably stale. Any other lock (git's own, or one okstra was killed holding before it could
record it) is named only once it is old, or after every retry failed.

Plain files and ``fcntl``; no git.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..core.machine import hostname, sha1_hex
from ..core.shell import command
from ..core.values import Value

WRITERS_DIR = "okstra-locks/writers"
_count = itertools.count()


def _host() -> str:
    return hostname()


def _host_tag() -> str:
    return sha1_hex(_host().encode("utf-8", "surrogateescape"))[:8]


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_mtime_ns]


QUEUE_DIR = "okstra-locks"
QUEUE_BUCKETS = 64
"""Queues per repository: a guard ref's writers share one, chosen by the ref's name."""
QUEUE_WAIT = 5.0
"""Seconds a writer waits its turn in the queue before going ahead unqueued."""
_queued = False
waited = [0]
"""How many times this process found a writer ahead of it in the queue (the race tests read
it to show their writers really collided)."""


def queue_path(common_dir: Path, guard: str) -> Path:
    """The queue of the writers of ``guard``."""
    bucket = zlib.crc32(guard.encode("utf-8", "surrogateescape")) % QUEUE_BUCKETS
    return common_dir / QUEUE_DIR / f"queue-{bucket:02d}"


def flock_within(fd: int, seconds: float) -> tuple[bool, bool]:
    """Take an exclusive flock on ``fd`` if it comes free within ``seconds``; says whether it
    was taken and whether it had to be waited for.

    Polled, since flock has no timeout; the pause grows (0.2 → 2 ms), so waiters wake less
    often the longer they wait and leave the CPU to the holder they wait for.
    """
    import fcntl

    deadline = time.monotonic() + seconds
    pause = 0.0002
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True, pause > 0.0002
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False, True
            time.sleep(pause)
            pause = min(pause * 1.5, 0.002)


@contextlib.contextmanager
def queue(common_dir: Path, guard: str) -> Iterator[None]:
    """Local okstra writers of ``guard`` take their turn here, one at a time, before locking
    refs.

    Racing writers (eight agents claiming one task from one clone) would otherwise find the
    ref locked, back off for a random while and try again, round after round: the sleeping,
    not the work, would set how many claims land per second. In the queue the next writer goes
    the moment the last one is done. Writers of other guards (other tasks) have other queues
    (but for a shared bucket) and go side by side. It only orders writers: the ref locks and
    the compare-and-swap still decide, a writer that waits longer than ``QUEUE_WAIT`` goes
    ahead anyway (so nothing can hang on it), and the kernel frees a killed writer's place.
    """
    global _queued
    if os.name != "posix":  # no flock (Windows): the ref locks alone
        yield
        return
    if _queued:  # a write inside a write: this process holds a queue already
        yield
        return
    path = queue_path(common_dir, guard)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        waited[0] += flock_within(fd, QUEUE_WAIT)[1]  # not taken in time: go ahead unqueued
        _queued = True
        yield
    finally:
        _queued = False
        os.close(fd)  # drops the flock


@contextlib.contextmanager
def writer_record(common_dir: Path, lock_paths: Iterable[Path]) -> Iterator[None]:
    """Declare, while the block runs, that this process holds ``lock_paths``.

    Called once every lock is taken (a lock file's identity exists only then). A process
    killed inside the block leaves the record behind, unlocked: :func:`held_locks` reads it.
    """
    import fcntl

    locks = {}
    for path in lock_paths:
        with contextlib.suppress(FileNotFoundError):
            locks[str(path)] = _identity(path.stat())
    folder = common_dir / WRITERS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / f"{_host_tag()}-{os.getpid()}-{next(_count)}.json"
    fd = os.open(record, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        body = {"pid": os.getpid(), "host": _host(), "locks": locks}
        os.write(fd, json.dumps(body).encode("utf-8", "surrogateescape"))
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            record.unlink()
        os.close(fd)  # drops the flock
    if os.listdir(folder):  # a killed writer's record: dropped once its locks are cleared
        _dead_writers(folder)


class HeldLock(Value):
    """A ``<ref>.lock`` file present now."""

    path: Path
    """The lock file."""
    age: float
    """Seconds since it was last written."""
    gone_writer: str | None
    """``okstra process <pid> on <host>`` when that writer provably died holding it."""


def held_locks(common_dir: Path, refnames: Iterable[str]) -> list[HeldLock]:
    """The lock files of ``refnames`` (and of ``packed-refs``) that exist, each with whether a
    writer record proves its writer gone."""
    now = time.time()
    found: list[tuple[Path, os.stat_result]] = []
    for name in dict.fromkeys([*refnames, "packed-refs"]):
        lock = common_dir / f"{name}.lock"
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            found.append((lock, lock.stat()))
    if not found:
        return []
    dead = _dead_writers(common_dir / WRITERS_DIR)
    return [
        HeldLock(lock, max(0.0, now - st.st_mtime), dead.get((str(lock), *_identity(st))))
        for lock, st in found
    ]


def _dead_writers(folder: Path) -> dict[tuple[object, ...], str]:
    """(lock path, dev, inode, mtime) → writer, for every record whose writer is gone.

    A record's ``flock`` taken without waiting means its process is dead — on this host only,
    so a record written by another host through a shared folder proves nothing.
    """
    import fcntl

    found: dict[tuple[object, ...], str] = {}
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return found
    mine = _host_tag() + "-"
    for name in names:
        if not name.startswith(mine):
            continue
        try:
            fd = os.open(folder / name, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                continue  # its writer is alive
            try:
                body = json.loads(os.read(fd, 1 << 16).decode("utf-8", "surrogateescape"))
                who = f"okstra process {int(body['pid'])} on {body['host']}"
                locks = {(path, *ident): who for path, ident in body["locks"].items()}
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # half-written by a writer killed while writing it: proves nothing
            if any(_still_there(key) for key in locks):
                found.update(locks)
            else:  # every lock it left was cleared: the record has nothing more to prove
                with contextlib.suppress(FileNotFoundError):
                    (folder / name).unlink()
        finally:
            os.close(fd)
    return found


def _still_there(key: tuple[object, ...]) -> bool:
    path, *ident = key
    try:
        return _identity(Path(str(path)).stat()) == ident
    except (FileNotFoundError, NotADirectoryError):
        return False


def age_text(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


class LockReport(Value):
    """What blocks an update: one paragraph, and the one command that clears it."""

    text: str
    """Every lock, its age and (when proven) its dead writer, ending with the ``rm``."""
    command: str
    """The shell-quoted ``rm`` of every lock named."""


def report(locks: list[HeldLock]) -> LockReport:
    """Name every lock, its age and writer, and the one ``rm`` that clears them (a killed
    transaction leaves one lock per ref it held)."""
    gone = sorted({h.gone_writer for h in locks if h.gone_writer})
    names = ", ".join(f"{h.path} ({age_text(h.age)} old)" for h in locks)
    rm = command("rm", *[h.path for h in locks])
    if gone and all(h.gone_writer for h in locks):
        text = (
            f"stale lock file(s) block the update: {names}; they were left by "
            f"{' and '.join(gone)}, which was killed before it finished (it wrote nothing). "
            f"Remove them: {rm}"
        )
    else:
        text = (
            f"lock file(s) block the update: {names}; a git or okstra process holds them, or "
            f"was killed holding them. If none is running, remove them: {rm}"
        )
    return LockReport(text, rm)


def blocking(
    common_dir: Path, refnames: Iterable[str], older_than: float | None = 0.0
) -> LockReport | None:
    """:func:`report` of the locks of ``refnames`` that are provably stale, or (unless
    ``older_than`` is None) at least ``older_than`` seconds old; None when there is none."""
    held = held_locks(common_dir, refnames)
    named = [h for h in held if h.gone_writer or (older_than is not None and h.age >= older_than)]
    return report(named) if named else None
