"""Files a user hands to a command (briefs, plans, reports, carry sidecars), and the files a
command writes back for the user.

Each is read once with a size cap and refused (exit 2) with a message naming the file — and
the line, where there is one — when it is missing, a folder, too large, binary or malformed.
Each is written atomically (``write_atomic``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from .crashpoints import crash_point
from .errors import BadInput
from .strict import is_digits, json_object, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"


def read_capped(path: str | os.PathLike[str], what: str, limit: int) -> bytes:
    shown = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(limit + 1)
    except FileNotFoundError as exc:
        raise BadInput(f"{what} {shown}: no such file") from exc
    except IsADirectoryError as exc:
        raise BadInput(f"{what} {shown}: is a folder, not a file") from exc
    except OSError as exc:
        raise BadInput(f"{what} {shown}: cannot read ({exc.strerror})") from exc
    if len(raw) > limit:
        line = raw[:limit].count(b"\n") + 1
        raise BadInput(
            f"{what} {shown}: larger than the {_size(limit)} cap (reached on line {line}); "
            f"keep bulk data out of it"
        )
    return raw


def decode_text(raw: bytes, shown: str, what: str) -> str:
    """``raw`` as UTF-8 text without NUL bytes, or BadInput naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise BadInput(f"{what} {shown}:{line}: not UTF-8 text (byte {exc.start})") from exc
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise BadInput(f"{what} {shown}:{line}: contains a NUL byte; expected text")
    return text


def read_text(path: str | os.PathLike[str], what: str, limit: int) -> str:
    return decode_text(read_capped(path, what, limit), os.fspath(path), what)


def read_json_object(path: str, what: str, limit: int) -> tuple[bytes, dict[str, Any]]:
    """The file's bytes (for digests) and its JSON object."""
    raw = read_capped(path, what, limit)
    return raw, json_object(raw, f"{what} {path}")


def workspace_relative(workdir: Path | None, path: str, what: str) -> str:
    """An existing file's path as records keep it: relative to the work tree when inside it.
    Records show it in directives and commands, so it must be one line."""
    one_line(path, f"{what} file name")
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise BadInput(f"{what} {path}: no such file")
    if workdir is not None and resolved.is_relative_to(workdir.resolve()):
        return resolved.relative_to(workdir.resolve()).as_posix()
    return str(resolved)


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    what: str,
    *,
    new: bool = False,
    temp_dir: Path | None = None,
    mode: int | None = None,
) -> None:
    """Write ``path`` so that a crash at any moment leaves the old file or the new one whole.

    The bytes go to a temp file, are flushed to disk, then the temp file is renamed over
    ``path`` (or, with ``new``, linked to it, which fails if ``path`` appeared in the meantime:
    creation never overwrites). The folder is synced so the rename survives a power cut too. An
    existing file keeps its permission bits, a new one gets the umask's, unless ``mode`` is given
    (set before the rename: a hook is never there unexecutable).

    The temp file goes in ``temp_dir`` when given (e.g. the work tree's ``.okstra/tmp/``, so a
    writer killed mid-write leaves nothing ``git status`` shows beside the file), else beside
    ``path``; a ``temp_dir`` on another filesystem falls back to beside it. Its name carries the
    writer's pid, so :func:`sweep_dead_temps` can tell a killed writer's leftover.
    """
    target = Path(path)
    if target.is_dir():
        raise BadInput(f"{what} {os.fspath(path)}: is a folder, not a file")
    folders = [temp_dir, target.parent] if temp_dir is not None else [target.parent]
    for folder in folders:
        try:
            _write_via(folder, target, data, what, new, mode)
            return
        except _CrossDevice:
            continue


class _CrossDevice(Exception):
    """The temp folder is on another filesystem than the target: try beside the target."""


def _write_via(
    folder: Path, target: Path, data: bytes, what: str, new: bool, mode: int | None
) -> None:
    shown = os.fspath(target)
    try:
        if folder != target.parent:
            folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = _make_temp(folder, f".{target.name}.{os.getpid()}.")
    except FileNotFoundError as exc:
        raise BadInput(f"{what} {shown}: folder {folder} does not exist") from exc
    except OSError as exc:
        raise BadInput(f"{what} {shown}: cannot write in {folder} ({exc.strerror})") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _mode_for(target) if mode is None else mode)
        crash_point("temp-written")
        if new:
            os.link(tmp, target)
        else:
            os.replace(tmp, target)
        _sync_folder(target.parent)
    except FileExistsError as exc:
        raise BadInput(f"{what} {shown}: already exists") from exc
    except IsADirectoryError as exc:
        raise BadInput(f"{what} {shown}: is a folder, not a file") from exc
    except OSError as exc:
        if exc.errno == errno.EXDEV and folder != target.parent:
            raise _CrossDevice from exc
        raise BadInput(f"{what} {shown}: cannot write ({exc.strerror})") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


_TEMP_SUFFIX = ".okstra-tmp"
_TEMP_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _make_temp(folder: Path, prefix: str) -> tuple[int, str]:
    """A new file ``folder/PREFIX<random>.okstra-tmp``, mode 0600, opened for writing: what
    ``tempfile.mkstemp`` makes, without loading ``tempfile`` (it brings ``shutil``,
    ``random``, ``bz2`` and ``lzma``: ~5 ms of every command that writes a file). The random
    part has no dot, so :func:`sweep_dead_temps` reads the pid before it."""
    for _ in range(100):
        path = os.path.join(os.path.abspath(folder), f"{prefix}{os.urandom(5).hex()}{_TEMP_SUFFIX}")
        try:
            return os.open(path, _TEMP_FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temp file name", os.fspath(folder))


def sweep_dead_temps(folder: Path) -> None:
    """Delete the temp files :func:`write_atomic` left in ``folder`` when its writer was killed
    (the pid in the name is gone); a live writer's are left alone."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        parts = name.removesuffix(_TEMP_SUFFIX).rsplit(".", 2)
        if not name.endswith(_TEMP_SUFFIX) or len(parts) != 3 or not process_gone(parts[1]):
            continue
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()


def process_gone(pid: str) -> bool:
    """Whether no process ``pid`` (decimal digits) runs on this machine; a live one, or
    another user's (which this one cannot signal), is not ours to judge."""
    if not is_digits(pid):
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
