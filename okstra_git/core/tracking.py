"""Where a clone keeps what a remote holds of okstra's data (docs/storage.md). Pure.

``init --remote R`` makes a plain ``git fetch R`` bring the remote's ``refs/okstra/*`` into
``refs/okstra-remotes/R/*`` and its ``refs/notes/okstra/*`` into
``refs/notes/okstra-remotes/R/*``, never over a local ref; ``sync`` does the same.
"""

from __future__ import annotations

LOCAL_REFS = "refs/okstra/"
LOCAL_NOTES = "refs/notes/okstra/"
TASKS_PREFIX = f"{LOCAL_REFS}tasks/"
"""Where each task's event chain lives: ``<prefix><group slug>/<id slug>``."""
BRANCHES = f"{LOCAL_REFS}branches/"
"""Where a remote keeps okstra's task and stage branches (``services/branches.py``): fetched into
the tracking namespace with the rest, published by ``stage done`` and ``sync``, never made
local refs."""
REMOTE_REFS_PREFIX = "refs/okstra-remotes/"
REMOTE_NOTES_PREFIX = "refs/notes/okstra-remotes/"


def tracking_refs(remote: str) -> str:
    """Where the remote's ``refs/okstra/*`` are kept locally."""
    return f"{REMOTE_REFS_PREFIX}{remote}/"


def tracking_notes(remote: str) -> str:
    """Where the remote's ``refs/notes/okstra/*`` are kept locally (the gate reads them)."""
    return f"{REMOTE_NOTES_PREFIX}{remote}/"


def tracking_name(remote: str, ref: str) -> str:
    """Where the remote's copy of ``ref`` (an okstra ref or notes ref) is kept locally."""
    if ref.startswith(LOCAL_NOTES):
        return tracking_notes(remote) + ref[len(LOCAL_NOTES) :]
    return tracking_refs(remote) + ref[len(LOCAL_REFS) :]


def fetch_refspecs(remote: str) -> list[str]:
    """What a fetch of okstra data from ``remote`` brings, and where: the tracking namespaces
    only, so a fetch (ours, or a plain ``git fetch`` after ``init --remote``) never clobbers a
    local claim or note."""
    return [
        f"+{LOCAL_REFS}*:{tracking_refs(remote)}*",
        f"+{LOCAL_NOTES}*:{tracking_notes(remote)}*",
    ]
