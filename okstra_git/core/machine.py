"""This machine's name and SHA-1, without the modules that usually give them: ``socket``
(~5 ms of CPU to import, for ``gethostname``) and ``hashlib`` (~3 ms: it loads OpenSSL), which
a claim, a done and a ref transaction would otherwise load for one call each."""

from __future__ import annotations

import os

try:
    from _sha1 import sha1 as _sha1  # type: ignore[import-not-found]  # CPython's: no OpenSSL
except ImportError:  # a build without it
    from hashlib import sha1 as _sha1


def hostname() -> str:
    """``socket.gethostname()``: on POSIX both are the kernel's node name (``uname -n``)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def sha1_hex(data: bytes) -> str:
    """``hashlib.sha1(data).hexdigest()``."""
    return _sha1(data).hexdigest()
