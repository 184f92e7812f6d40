"""Verdict records: JSON Lines in the note on the verified commit, ``refs/notes/okstra/verdicts``.

The same line is also attached to the verified commit's tree (in the same notes commit), so
a gate that accepts any commit with an identical tree finds its verdicts with one lookup.

One canonical JSON object per line, lines sorted and unique, so two clones' notes merge with
``git notes merge -s cat_sort_uniq`` and ``git notes --ref okstra/verdicts show <sha>`` prints
valid JSON Lines. This module is on the pre-push hot path: it must not import jsonschema or
jinja2 at module level.
"""

from __future__ import annotations

from ..core.jsontext import dumps_line
from ..core.values import Value
from .base import parse_json_lines, record_line, to_data

TYPE_CHECKING = False  # the gate parses verdicts without loading pygit2
if TYPE_CHECKING:
    from ..git.notesview import NotesView
    from ..git.repo import GitRepo, RefUpdate

SCHEMA_VERSION = 1
VERDICTS_REF = "refs/notes/okstra/verdicts"


class Verdict(Value):
    """One final-verification outcome, bound to the commit (and tree) it verified."""

    task_key: str
    """The verified task, exactly as typed."""
    scope: str
    """``whole-task`` or ``single-stage``."""
    stages: list[int]
    """The Stage Map stages the verification covered."""
    base: str
    """The implementation base (whole-task) or the stage's claim base (single-stage)."""
    head: str
    """The verified commit: the note is attached to it."""
    head_tree: str
    """The verified commit's tree: a rebase that keeps the tree keeps the verdict."""
    verdict: str
    """``accepted``, ``conditional-accept`` or ``blocked``."""
    blocker_count: int
    """Acceptance blockers in the report (``accepted`` requires 0)."""
    report_digest: str
    """``sha256:<hex>`` of the report data file the verdict was recorded from."""
    routing: str
    """Where the task goes next: ``release-handoff``, ``implementation`` or ``done``."""
    recorded_at: str
    """ISO 8601, UTC."""
    recorded_by: str
    """``Name <email>`` from git config."""
    schema_version: int = SCHEMA_VERSION
    """Record format version."""
    signature: str | None = None
    """An ``ssh-keygen -Y sign`` signature (namespace ``okstra-verdict``) over the record
    without this field, when recorded with ``--sign``."""

    @property
    def opens_gate(self) -> bool:
        """Only an accepted whole-task verdict lets a protected ref move."""
        return self.verdict == "accepted" and self.scope == "whole-task"

    def signed_payload(self) -> bytes:
        """The exact bytes a signature covers: the canonical line without ``signature``."""
        return dumps_line(to_data(self.replace(signature=None))).encode()

    def to_line(self) -> str:
        return record_line(self, "verdict", f"{VERDICTS_REF} record")


def parse_lines(raw: bytes, where: str) -> tuple[list[Verdict], list[str]]:
    return parse_json_lines(Verdict, raw, where, "verdict")


def read_verdicts(
    repo: GitRepo, target: str, view: NotesView | None = None
) -> tuple[list[Verdict], list[str]]:
    """The verdicts noted on ``target`` (a commit, or a tree: every verdict line is also on
    its head's tree) here or in a fetched remote copy, each once; and the problems with lines
    that do not parse or match the schema (they never count)."""
    found: list[Verdict] = []
    problems: list[str] = []
    from ..git.notesview import NotesView

    for where, raw in (view or NotesView(repo, VERDICTS_REF)).lines(target):
        verdicts, bad = parse_lines(raw, where)
        found += [v for v in verdicts if v not in found]
        problems += bad
    return found, problems


def _note_lines(verdict: Verdict) -> tuple[dict[str, list[str]], str]:
    """The verdict line on its head commit and on that commit's tree, and the notes message."""
    line = verdict.to_line()
    message = f"okstra: verdict {verdict.verdict} ({verdict.scope}) for {verdict.task_key}"
    return {verdict.head: [line], verdict.head_tree: [line]}, message


def verdict_notes_update(repo: GitRepo, verdict: Verdict) -> RefUpdate | None:
    """The notes commit adding ``verdict`` (not landed); ``None`` when it is already there."""
    return repo.notes_update(VERDICTS_REF, *_note_lines(verdict))


def append_verdict(repo: GitRepo, verdict: Verdict) -> bool:
    """Add the verdict to the notes on its head commit and tree, in one notes commit
    (idempotent: False when the line was already on both)."""
    return repo.add_notes_lines(VERDICTS_REF, *_note_lines(verdict))
