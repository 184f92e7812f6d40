"""core.machine gives what socket and hashlib would."""

from __future__ import annotations

import hashlib
import socket

from okstra_git.core.machine import hostname, sha1_hex


def test_hostname_is_socket_s_and_sha1_is_hashlib_s() -> None:
    assert hostname() == socket.gethostname()
    for data in (b"", b"blob 3\0abc", bytes(range(256)) * 100):
        assert sha1_hex(data) == hashlib.sha1(data).hexdigest()
