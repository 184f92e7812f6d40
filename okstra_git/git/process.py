"""Starting ``git`` as a child process, for what needs the git CLI itself: fetch and push (the
user's credentials and transports), hook installation asking git where hooks run, completion
listing refs, and the demo running commands as a user types them.

The pre-push hook and ``ci check`` do not come here: ``plumbing`` starts git without loading
``subprocess`` (it costs ~4 ms on every push).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import BadInput

Completed = subprocess.CompletedProcess[str]
"""A finished git process: ``returncode``, ``stdout`` and ``stderr`` as text."""


def run(argv: Sequence[str], cwd: str | Path | None = None, *, check: bool = False) -> Completed:
    """Run ``argv`` (``git …``, or this installation's ``git okstra``) in ``cwd`` with no
    stdin; output captured as text. ``check`` raises CalledProcessError on a non-zero exit."""
    return subprocess.run(
        list(argv),
        cwd=cwd,
        text=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=check,
    )


def git(cwd: str | Path | None, *args: str) -> Completed:
    """``git ARGS`` in ``cwd``."""
    return run(["git", *args], cwd)


def git_text(cwd: Path, *args: str, check: bool = True) -> str:
    """The stripped stdout of ``git ARGS`` in ``cwd``; with ``check``, a failure is BadInput
    naming the folder and git's own message."""
    proc = git(cwd, *args)
    if check and proc.returncode != 0:
        raise BadInput(f"{cwd}: git {args[0]} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()
