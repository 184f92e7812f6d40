"""What the pre-push hook needs of ``os``, without importing it.

The hook's Python starts without site (``-S``), so ``os`` is not loaded yet; importing it (and
the ``_collections_abc``, ``posixpath`` and ``stat`` it loads) was ~5.7M instructions, an eighth
of the hook's process on an unprotected push. The built-in ``posix`` module, loaded at start-up,
has the same functions (``os`` re-exports them); only the environment differs: ``os.environ``
is a copy of ``posix.environ`` taken when ``os`` is imported, and changes go to it. So while
``os`` is not loaded nobody can have changed the environment and ``posix.environ`` is it; once
``os`` is loaded (in-process callers, the tests) ``os.environ`` is asked. The paths a protected
push reads a schema by (``core/resources.py``) are made here the way ``posixpath`` makes them.
Where there is no ``posix`` (Windows) ``os`` is used.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

try:
    import posix as system
except ImportError:  # pragma: no cover - not POSIX
    import os as system  # type: ignore[no-redef]

POSIX = system.__name__ == "posix"


def environ() -> Mapping[str, str]:
    """The process's environment, as ``os.environ`` has it."""
    if not POSIX or "os" in sys.modules:
        import os

        return os.environ
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    return {
        key.decode(encoding, errors): value.decode(encoding, errors)
        for key, value in system.environ.items()
    }


def getenv(name: str) -> str | None:
    return environ().get(name)


def child_environ(**extra: str) -> Mapping[str, str] | Mapping[bytes, bytes]:
    """The environment for a child process: this process's, with ``extra`` set."""
    if not POSIX or "os" in sys.modules:
        return {**environ(), **extra}
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    added = {k.encode(encoding, errors): v.encode(encoding, errors) for k, v in extra.items()}
    return {**system.environ, **added}


def absolute(path: str) -> str:
    """``os.path.join(os.getcwd(), path)``."""
    return join(system.getcwd(), path)


def join(first: str, *rest: str) -> str:
    """``os.path.join(first, *rest)``."""
    if not POSIX:
        import os

        return os.path.join(first, *rest)
    path = first
    for part in rest:  # posixpath.join's own steps
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def dirname(path: str) -> str:
    """``os.path.dirname(path)``."""
    if not POSIX:
        import os

        return os.path.dirname(path)
    head = path[: path.rfind("/") + 1]  # posixpath.dirname's own steps
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head


def isdir(path: str) -> bool:
    """``os.path.isdir(path)``."""
    if not POSIX:
        import os

        return os.path.isdir(path)
    try:
        found = system.stat(path)
    except (OSError, ValueError):
        return False
    return found.st_mode & 0o170000 == 0o040000  # S_ISDIR


def realpath(path: str) -> str:
    """``os.path.realpath(path)``: ``path`` itself when it is absolute, has no empty, ``.`` or
    ``..`` component and no component that is a symbolic link (lstat of each, as realpath
    does), which is what realpath returns for such a path; any other path is left to ``os``."""
    parts = path.split("/")
    if (
        POSIX
        and not parts[0]
        and len(parts) > 1
        and all(p not in ("", ".", "..") for p in parts[1:])
    ):
        here = ""
        for part in parts[1:]:
            here += "/" + part
            try:
                mode = system.lstat(here).st_mode
            except (OSError, ValueError):
                break
            if mode & 0o170000 == 0o120000:  # S_ISLNK
                break
        else:
            return path
    import os

    return os.path.realpath(path)
