"""Approval records: JSON Lines in the note on the **plan blob**, ``refs/notes/okstra/approvals``.

The note is attached to the exact plan content that was approved, so any edit of the plan (a new
blob) leaves the approval behind (docs/storage.md, docs/workflow.md). Lines are canonical JSON,
sorted and unique, like the verdict notes: ``git notes --ref okstra/approvals show <blob>`` prints
valid JSON Lines and two clones' notes merge with ``cat_sort_uniq``.
"""

from __future__ import annotations

import functools

from ..core.values import Value, init
from ..git.notesview import NotesView
from ..git.repo import GitRepo, RefUpdate
from .base import parse_json_lines, record_line

SCHEMA_VERSION = 1
APPROVALS_REF = "refs/notes/okstra/approvals"


class Approval(Value):
    """One user approval of one plan content for one task."""

    task_key: str
    """The approved task, exactly as typed."""
    plan_path: str
    """The plan file, relative to the repository's work tree."""
    blob: str
    """The approved content's blob id: the note is attached to it."""
    approved_by: str
    """``Name <email>`` of whoever approved: the ``plan approve`` user (method B); for a
    marker ticked by hand (method A), the author of the task event or commit that brought the
    ticked plan, or this clone's user when the tick is an uncommitted edit here."""
    approved_at: str
    """ISO 8601, UTC."""
    method: str
    """``A`` (marker ticked by hand) or ``B`` (``git okstra plan approve``)."""
    schema_version: int
    """Record format version."""
    recorded_by: str | None
    """Who wrote this record, when not ``approved_by``: a hand approval (method A) is recorded
    by the first claim that relies on it, but made by whoever ticked the marker."""

    def __init__(
        self,
        task_key: str,
        plan_path: str,
        blob: str,
        approved_by: str,
        approved_at: str,
        method: str,
        schema_version: int = SCHEMA_VERSION,
        recorded_by: str | None = None,
    ) -> None:
        init(
            self,
            task_key=task_key,
            plan_path=plan_path,
            blob=blob,
            approved_by=approved_by,
            approved_at=approved_at,
            method=method,
            schema_version=schema_version,
            recorded_by=recorded_by,
        )

    def to_line(self) -> str:
        return record_line(self, "approval", f"{APPROVALS_REF} record")


def parse_lines(raw: bytes, where: str) -> tuple[list[Approval], list[str]]:
    return parse_json_lines(Approval, raw, where, "approval")


@functools.lru_cache(maxsize=32)
def _parsed(raw: bytes, where: str) -> tuple[Approval, ...]:
    """The approvals of one note's bytes. A plan approved for many tasks carries a line for
    each, every line schema-checked; one process reads the same note again and again (a claim's
    first look and its transaction, an agent claiming task after task), so it is parsed once."""
    return tuple(parse_lines(raw, where)[0])


def read_approvals(repo: GitRepo, blob: str, task_key: str | None = None) -> list[Approval]:
    """The approvals noted on ``blob`` here or in a fetched remote copy (only ``task_key``'s
    when given), each once, oldest first.

    Unreadable lines are skipped: they can never make a plan count as approved.
    """
    found: list[Approval] = []
    for where, raw in NotesView(repo, APPROVALS_REF).lines(blob):
        found += [a for a in _parsed(raw, where) if a not in found]
    if task_key is not None:
        found = [a for a in found if a.task_key == task_key and a.blob == blob]
    return sorted(found, key=lambda a: a.approved_at)


def approval_notes_update(repo: GitRepo, approval: Approval) -> RefUpdate | None:
    """The notes commit adding the approval line on its blob (not landed); ``None`` when that
    exact line is already there."""
    return repo.notes_update(
        APPROVALS_REF,
        {approval.blob: [approval.to_line()]},
        f"okstra: approve {approval.plan_path} for {approval.task_key} (method {approval.method})",
    )
