"""The project's exceptions; each carries its process exit code (docs/cli.md)."""

from __future__ import annotations


class OkstraError(Exception):
    """A failure the user can act on. The message is one paragraph naming what and where."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
        """The command that fixes it, one shell-quoted line (``okstra_git.core.shell``), or None."""
        self.next: dict[str, object] | None = None
        """The task's next step for this clone (``logic/nextstep.py``'s ``Step.to_data()``),
        attached to a refusal of a command about a task: ``--json`` gives it as ``next``."""


class BadInput(OkstraError):
    """Bad usage or bad input: a malformed key, plan, JSON file or stored record (exit 2)."""

    exit_code = 2


class Refused(OkstraError):
    """The expected "no": a gate not met, a check failed, a stage not ready (exit 1)."""

    exit_code = 1


class Conflict(OkstraError):
    """Lost a race after bounded retries, or a lock that will not clear (exit 3)."""

    exit_code = 3


def brief(text: str, limit: int = 160) -> str:
    """``text`` cut in the middle when longer than ``limit``, saying how long it was: a message
    naming a 5,000-character path must stay readable."""
    if len(text) <= limit:
        return text
    keep = (limit - 30) // 2
    return f"{text[:keep]}…({len(text)} characters)…{text[-keep:]}"


_FULL = ("No space left on device", "Disk quota exceeded")


def system_problem(exc: BaseException) -> str | None:
    """What an error of the operating system says (a full disk, a name too long, no
    permission), naming the path it concerns and, for a full disk, the fix; ``None`` for an
    error that is not the system's. libgit2's write failures arrive as an ``OSError`` with no
    errno, or a ``GitError`` whose text holds the system's words."""
    import errno as codes

    said = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if not isinstance(exc, OSError) and not any(words in said for words in _FULL):
        return None
    number = exc.errno if isinstance(exc, OSError) else None
    name = codes.errorcode.get(number, "") if number else ""
    text = brief(said, 400) + (f" [{name}]" if name else "")
    where = [getattr(exc, attr, None) for attr in ("filename", "filename2")]
    paths = [brief(str(path)) for path in where if path]
    if paths:
        text += " at " + " and ".join(paths)
    else:  # libgit2 names no path: the repository being worked on is here
        import os

        text += f" (working in {brief(os.getcwd())})"
    if number in (codes.ENOSPC, codes.EDQUOT) or any(words in said for words in _FULL):
        text += "; free space on that disk and run the command again"
    elif number == codes.ENAMETOOLONG:
        text += "; that path is longer than the file system allows: use a shorter one"
    return text
