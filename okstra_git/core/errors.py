"""The project's exceptions; each carries the process exit code of SPEC §13."""

from __future__ import annotations


class OkstraError(Exception):
    """A failure the user can act on. The message is one paragraph naming what and where."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
        """The command that fixes it, one shell-quoted line (``okstra_git.core.shell``), or None."""


class BadInput(OkstraError):
    """Bad usage or bad input: a malformed key, plan, JSON file or stored record (exit 2)."""

    exit_code = 2


class Refused(OkstraError):
    """The expected "no": a gate not met, a check failed, a stage not ready (exit 1)."""

    exit_code = 1


class Conflict(OkstraError):
    """Lost a race after bounded retries, or a lock that will not clear (exit 3)."""

    exit_code = 3
