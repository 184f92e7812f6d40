"""Strict parsers for values from the command line, config, user files and stored records.

Pure: no git. Each takes text and the name of where it came from, and returns the value or
raises BadInput naming both, so a hostile or mistyped value is a clear exit 2 before anything
is written:

- paths with ``~user`` name a real user's home.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import BadInput


def home_path(value: str, what: str) -> Path:
    """``value`` as a path with a leading ``~`` or ``~user`` expanded; an unknown user is
    refused (``os.path.expanduser`` would leave ``~nosuchuser`` as a relative folder name)."""
    why = unknown_home(value)
    if why is not None:
        raise BadInput(f"{what} = {value!r}: {why}")
    return Path(os.path.expanduser(value))


def unknown_home(value: str) -> str | None:
    """Why ``value``'s leading ``~user`` names no folder, or ``None`` when it does (or has none)."""
    if not value.startswith("~"):
        return None
    user = value[1:].partition("/")[0]
    if os.path.expanduser("~" + user).startswith("~"):
        return f"there is no user {user!r} on this machine, so '~{user}' names no folder"
    return None
