"""One notes ref as every reader sees it: the local ref and the remote-tracking copies.

Verdict and approval notes are JSON-Lines sets that ``sync`` merges by union
(``cat_sort_uniq``, docs/storage.md). So the union of the local ``refs/notes/okstra/<name>`` and
every ``refs/notes/okstra-remotes/<remote>/<name>`` a fetch brought (a plain ``git fetch`` after
``init --remote``, or ``ci check --fetch``) is exactly what the notes will hold after the next
sync: reading it needs no write and no network, gives the pre-push hook, ``ci check``,
``verify show`` and the approval gate one answer, and costs one tree lookup per source. Every
line still counts only if it parses and matches its schema, wherever it came from.

Lean on purpose (the pre-push hook reads verdicts through it): the git layer only.
"""

from __future__ import annotations

from ..core.errors import BadInput
from ..core.tracking import REMOTE_NOTES_PREFIX

TYPE_CHECKING = False  # no typing import: the pre-push hook reads verdicts through here
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .objects import ObjectSource


class NotesView:
    """The local notes ref ``notes_ref`` and its remote-tracking copies, resolved once.

    ``source`` is the repository through its read interface (``objects.ObjectSource``): a
    ``GitRepo`` (pygit2, for commands that have it loaded) or an ``ObjectReader`` (git's
    plumbing, for the hooks and ``ci check``, which must not pay for loading pygit2); both give
    the same answer. ``extra`` adds sources by name (server side: the notes commit being pushed
    in the same push, which is on no ref yet).

    ``remote_copies=False`` reads ``notes_ref`` alone: on a server, any pusher can create
    ``refs/notes/okstra-remotes/*``, so only the server's own ref (which it can guard) counts
    there (docs/security.md).
    """

    def __init__(
        self,
        source: ObjectSource,
        notes_ref: str,
        extra: Mapping[str, str] | None = None,
        remote_copies: bool = True,
    ) -> None:
        self.source = source
        name = notes_ref.rsplit("/", 1)[-1]
        heads: dict[str, str | None] = {notes_ref: None}
        prefixes = (REMOTE_NOTES_PREFIX,) if remote_copies else ()
        for ref, sha in sorted(source.refs(notes_ref, *prefixes).items()):
            if ref == notes_ref or (
                remote_copies
                and ref.startswith(REMOTE_NOTES_PREFIX)
                and ref.rsplit("/", 1)[-1] == name
            ):
                heads[ref] = sha
        heads.update(extra or {})
        self.sources: list[tuple[str, str]] = []
        """``(name, notes commit)`` of every readable source."""
        self.problems: list[str] = []
        """Sources ignored because they hold no readable notes commit: skipping one can only
        hide records (a gate stays shut), while failing on it would let anyone who can push a
        bad notes ref jam every reader."""
        for name, head in heads.items():
            if head:
                try:
                    self.sources.append((name, source.check_commit(head, name)))
                except BadInput as exc:
                    self.problems.append(str(exc))

    def lines(self, target: str) -> list[tuple[str, bytes]]:
        """``(where, note bytes)`` for each source holding a note on ``target``."""
        found = []
        for name, commit in self.sources:
            note = self.source.note(commit, target)
            if note is not None:
                found.append((f"{name} note on {target[:12]}", note))
        return found
