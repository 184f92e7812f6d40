"""Atomic file replacement: a reader, or a process killed mid-write, sees the old bytes or the
new ones, never a part. Plain files; no git."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path


def write_atomic(
    path: Path, data: bytes, temp_dir: Path | None = None, mode: int | None = None
) -> None:
    """Replace ``path`` by ``data``: write a temp file, flush it to disk, rename it over.

    The temp file goes in ``temp_dir`` when given (e.g. the work tree's ``.okstra/tmp/``, so a
    kill mid-write leaves nothing ``git status`` shows), else beside ``path``; a ``temp_dir``
    on another filesystem than ``path`` falls back to beside it. Its name carries the writer's
    pid, so :func:`sweep_dead_temps` can tell a killed writer's leftover from a live one.
    """
    folders = [temp_dir, path.parent] if temp_dir is not None else [path.parent]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{path.name}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
            return
        except OSError as exc:
            if exc.errno != errno.EXDEV or folder == path.parent:
                raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def sweep_dead_temps(folder: Path) -> None:
    """Delete the temp files of :func:`write_atomic` in ``folder`` whose writer is gone."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        parts = name.rsplit(".", 2)
        if len(parts) != 3 or parts[2] != "tmp" or not parts[1].isdigit():
            continue
        pid = int(parts[1])
        try:
            os.kill(pid, 0)
            continue  # alive (or another user's): not ours to judge
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
