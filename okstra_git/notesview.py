"""One notes ref as every reader sees it: the local ref and the remote-tracking copies (SPEC §14).

Verdict and approval notes are JSON-Lines sets that ``sync`` merges by union
(``cat_sort_uniq``). So the union of the local ``refs/notes/okstra/<name>`` and every
``refs/notes/okstra-remotes/<remote>/<name>`` a fetch brought (a plain ``git fetch`` after
``init --remote``, or ``ci check --fetch``) is exactly what the notes will hold after the next
sync: reading it needs no write and no network, gives the pre-push hook, ``ci check``,
``verify show`` and the approval gate one answer, and costs one tree lookup per source. Every
line still counts only if it parses and matches its schema, wherever it came from.

Lean on purpose (the pre-push hook reads verdicts through it): the git layer only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import BadInput
from .tracking import REMOTE_NOTES_PREFIX

if TYPE_CHECKING:
    from .gitlayer import GitRepo


class NotesView:
    """The local notes ref ``notes_ref`` and its remote-tracking copies, resolved once.

    ``extra`` adds sources by name (server side: the notes commit being pushed in the same
    push, which is on no ref yet).
    """

    def __init__(
        self, repo: GitRepo, notes_ref: str, extra: Mapping[str, str] | None = None
    ) -> None:
        name = notes_ref.rsplit("/", 1)[-1]
        heads: dict[str, str | None] = {notes_ref: repo.read_ref(notes_ref)}
        for ref, sha in sorted(repo.list_refs(REMOTE_NOTES_PREFIX).items()):
            if ref.rsplit("/", 1)[-1] == name:
                heads[ref] = sha
        heads.update(extra or {})
        self.repo = repo
        self.sources: list[tuple[str, Any]] = []
        """``(name, notes tree)`` of every readable source."""
        self.problems: list[str] = []
        """Sources ignored because they hold no readable notes commit: skipping one can only
        hide records (a gate stays shut), while failing on it would let anyone who can push a
        bad notes ref jam every reader."""
        for name, sha in heads.items():
            if sha:
                try:
                    self.sources.append((name, repo.tree_of(repo.commit_at(sha, name).id)))
                except BadInput as exc:
                    self.problems.append(str(exc))

    def lines(self, target: str) -> list[tuple[str, bytes]]:
        """``(where, note bytes)`` for each source holding a note on ``target``."""
        from .gitlayer import note_in

        found = []
        for name, tree in self.sources:
            note = note_in(self.repo, tree, target)
            if note is not None:
                found.append((f"{name} note on {target[:12]}", note))
        return found
