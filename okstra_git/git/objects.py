"""The one read interface over a repository, whichever backend serves it (docs/architecture.md).

Two backends implement it: :class:`~okstra_git.git.repo.GitRepo` (pygit2, for the commands that
have it loaded) and :class:`~okstra_git.git.plumbing.ObjectReader` (``git cat-file --batch`` and
``git for-each-ref``, for the pre-push hook and ``ci check``, which must not pay for loading
pygit2). The gate and the notes view read through it and give one answer on either. Modules on
the hooks' path name it under ``TYPE_CHECKING`` only: loading ``typing`` costs a push ~2 ms.
"""

from __future__ import annotations

from typing import Protocol


class ObjectSource(Protocol):
    def read(self, rev: str) -> tuple[str, str, bytes] | None:
        """``(object id, type, content)`` of the object ``rev`` names (any revision git
        understands: ``<sha>^{commit}``, ``<commit>:<path>``), or ``None`` when it names none."""
        ...

    def refs(self, *patterns: str) -> dict[str, str]:
        """``refname → object id`` of the refs each pattern names, exactly or as the folder
        they are under (as ``git for-each-ref`` matches)."""
        ...

    def check_commit(self, sha: str, where: str) -> str:
        """``sha`` when it is a commit okstra can read; else BadInput naming ``where`` (the ref
        pointing at it) and what is wrong."""
        ...

    def note(self, notes_commit: str, target: str) -> bytes | None:
        """The note on ``target`` in the notes commit ``notes_commit``, whatever fanout wrote it
        (the first fanout path present decides; an entry that is not a blob is no note)."""
        ...
