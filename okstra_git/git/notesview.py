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

from ..core.errors import BadInput
from ..core.tracking import REMOTE_NOTES_PREFIX

TYPE_CHECKING = False  # no typing import: the pre-push hook reads verdicts through here
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from .plumbing import ObjectReader
    from .repo import GitRepo


class NotesView:
    """The local notes ref ``notes_ref`` and its remote-tracking copies, resolved once.

    ``source`` is the repository: a ``GitRepo`` (pygit2, for commands that have it loaded) or
    an ``ObjectReader`` (git's plumbing, for the hooks and ``ci check``, which must not pay for
    loading pygit2); both give the same answer. ``extra`` adds sources by name (server side:
    the notes commit being pushed in the same push, which is on no ref yet).

    ``remote_copies=False`` reads ``notes_ref`` alone: on a server, any pusher can create
    ``refs/notes/okstra-remotes/*``, so only the server's own ref (which it can guard) counts
    there (docs/security.md).
    """

    def __init__(
        self,
        source: GitRepo | ObjectReader,
        notes_ref: str,
        extra: Mapping[str, str] | None = None,
        remote_copies: bool = True,
    ) -> None:
        from .plumbing import ObjectReader

        self.store = _Plumbing(source) if isinstance(source, ObjectReader) else _Pygit2(source)
        name = notes_ref.rsplit("/", 1)[-1]
        heads: dict[str, str | None] = {notes_ref: None}
        prefixes = (REMOTE_NOTES_PREFIX,) if remote_copies else ()
        for ref, sha in sorted(self.store.refs(notes_ref, *prefixes).items()):
            if ref == notes_ref or (
                remote_copies
                and ref.startswith(REMOTE_NOTES_PREFIX)
                and ref.rsplit("/", 1)[-1] == name
            ):
                heads[ref] = sha
        heads.update(extra or {})
        self.sources: list[tuple[str, Any]] = []
        """``(name, notes root)`` of every readable source."""
        self.problems: list[str] = []
        """Sources ignored because they hold no readable notes commit: skipping one can only
        hide records (a gate stays shut), while failing on it would let anyone who can push a
        bad notes ref jam every reader."""
        for name, sha in heads.items():
            if sha:
                try:
                    self.sources.append((name, self.store.root(sha, name)))
                except BadInput as exc:
                    self.problems.append(str(exc))

    def lines(self, target: str) -> list[tuple[str, bytes]]:
        """``(where, note bytes)`` for each source holding a note on ``target``."""
        found = []
        for name, root in self.sources:
            note = self.store.note(root, target)
            if note is not None:
                found.append((f"{name} note on {target[:12]}", note))
        return found


class _Pygit2:
    """Notes read with pygit2: a source's root is its notes tree."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo

    def refs(self, notes_ref: str, *prefixes: str) -> dict[str, str | None]:
        found: dict[str, str | None] = {notes_ref: self.repo.read_ref(notes_ref)}
        for prefix in prefixes:
            found.update(self.repo.list_refs(prefix))
        return found

    def root(self, sha: str, where: str) -> Any:
        return self.repo.tree_of(self.repo.commit_at(sha, where).id)

    def note(self, tree: Any, target: str) -> bytes | None:
        from .repo import note_in

        return note_in(self.repo, tree, target)


class _Plumbing:
    """Notes read through ``git cat-file --batch``: a source's root is its notes commit."""

    def __init__(self, objects: ObjectReader) -> None:
        self.objects = objects

    def refs(self, notes_ref: str, *prefixes: str) -> dict[str, str]:
        from .plumbing import list_refs

        return list_refs(notes_ref, *prefixes)

    def root(self, sha: str, where: str) -> str:
        from .plumbing import commit_problem, not_a_commit, unreadable

        found = self.objects.read(sha)
        if found is None or found[1] != "commit":
            raise not_a_commit(where, sha, found[1] if found is not None else None)
        problem = commit_problem(found[2])
        if problem is not None:
            raise unreadable(where, f"points at commit {sha[:12]}", problem)
        return sha

    def note(self, commit: str, target: str) -> bytes | None:
        """As ``gitlayer.note_in``: the first fanout path present decides; an entry that is not
        a blob (a forged tree) is no note."""
        from .plumbing import note_paths

        for path in note_paths(target):
            entry = self.objects.read(f"{commit}:{path}")
            if entry is not None:
                return entry[2] if entry[1] == "blob" else None
        return None
