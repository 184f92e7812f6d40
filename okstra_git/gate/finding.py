"""What the verdict notes say about one commit (``judge.py`` fills it in as it reads): loaded
only when a verdict must be looked up, not on a push the config decides alone."""

from __future__ import annotations

from ..core.values import Record, Value, init

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from ..records.verdict import Verdict


class Rejected(Value):
    """A verdict found for the commit that does not open the gate, and why."""

    verdict: Verdict
    """The verdict as read from the note."""
    why: str
    """Why it does not count, as the end of a sentence naming it ("is blocked, not …")."""


class Finding(Record):
    """What the verdict notes say about one commit; the gate fills it in as it reads."""

    commit: str
    """The commit asked about (peeled)."""
    tree: str
    """Its tree."""
    opening: Verdict | None
    """A verdict that opens the gate for it, if any."""
    rejected: list[Rejected]
    """Verdicts found that do not open it."""
    problems: list[str]
    """Note lines that did not parse (they never count)."""

    def __init__(self, commit: str, tree: str) -> None:  # nothing found yet
        init(self, commit=commit, tree=tree, opening=None, rejected=[], problems=[])

    @property
    def task_keys(self) -> list[str]:
        keys = [r.verdict.task_key for r in self.rejected]
        return list(dict.fromkeys(keys))
