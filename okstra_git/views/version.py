"""What ``git okstra --version`` prints."""

from __future__ import annotations

from . import Output


def version(found: str) -> Output:
    """``okstra-git VERSION``; ``--json``: ``{"ok": true, "version": VERSION}``."""
    return Output({"version": found}, f"okstra-git {found}")
