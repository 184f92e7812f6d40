"""What the pre-push hook needs of ``os``, without importing it.

The hook's Python starts without site (``-S``), so ``os`` is not loaded yet; importing it (and
the ``_collections_abc``, ``posixpath`` and ``stat`` it loads) was ~5.7M instructions, an eighth
of the hook's process on an unprotected push. The built-in ``posix`` module, loaded at start-up,
has the same functions (``os`` re-exports them); only the environment differs: ``os.environ``
is a copy of ``posix.environ`` taken when ``os`` is imported, and changes go to it. So while
``os`` is not loaded nobody can have changed the environment and ``posix.environ`` is it; once
``os`` is loaded (in-process callers, the tests) ``os.environ`` is asked. Where there is no
``posix`` (Windows) ``os`` is used.
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
    if not POSIX:
        import os

        return os.path.join(os.getcwd(), path)
    if path.startswith("/"):
        return path
    here = system.getcwd()
    return here + path if here.endswith("/") else f"{here}/{path}"
