"""The verification gate: may this ref move to this commit? (docs/hooks.md)

One decision shared by the pre-push hook, the server-side pre-receive/update hooks and
``git okstra ci check``. It runs on every push, so it is lean on purpose: it reads through git's
plumbing (``plumbing.py``: ``git config``, ``git for-each-ref``, one ``git cat-file --batch``),
because starting git three times costs less than loading pygit2 once; its classes are
``core.values`` classes (a dataclass costs ~0.5 ms to create); and a push of an unprotected
ref loads nothing but this module and its config.

A protected ref may only move to a commit carrying an ``accepted`` whole-task verdict. Verdicts
are JSON Lines in ``refs/notes/okstra/verdicts``, written on the verified commit and on that
commit's tree, so "a verdict on a commit with the identical tree" is one note lookup by tree.
"""

from __future__ import annotations

from ..core.values import Value
from ..git.plumbing import git_output

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from .finding import Finding

VERDICTS_REF = "refs/notes/okstra/verdicts"  # == records.verdict.VERDICTS_REF (a test checks)
# okstra's own data and every notes ref travel freely: they are how verdicts get to the server.
_PASS_PREFIXES = ("refs/okstra/", "refs/notes/")


def is_zero(sha: str) -> bool:
    """An all-zero object name: the ref is created (old) or deleted (new)."""
    return not sha.strip("0")


def okstra_data(ref: str, new: str) -> Decision | None:
    """The pass for okstra's own refs and every notes ref (they carry the verdicts to the
    server), decided before the config is read: no ``okstra.protect`` value can cover them."""
    return Decision(ref, new, True, "okstra-data") if ref.startswith(_PASS_PREFIXES) else None


REPLACE_PREFIX = "refs/replace/"


def replace_refused(ref: str, new: str) -> Decision | None:
    """Server side, the refusal of a replace ref being created or moved (deleting one passes).

    A pushed ``refs/replace/<B>`` makes every git that fetches it show another object where B
    is, so a protected branch at B would read as content it does not hold. The gate reads
    objects as stored (``plumbing``), but what people and builds check out is what they see.
    """
    if not ref.startswith(REPLACE_PREFIX) or is_zero(new):
        return None
    return Decision(
        ref,
        new,
        False,
        "replace-refused",
        f"refusing to update {ref}: a server that enforces the verification gate takes no "
        "replace refs, because every git that fetches one shows another object in place of "
        f"{ref[len(REPLACE_PREFIX) :][:12] or 'the one named'}, and a protected branch could then "
        "read as content that was never verified.\n"
        "Fix: keep replacements in your clone (`git replace` needs no push) and push without "
        "refs/replace/*; an admin who needs one creates it on the server itself.",
    )


_CHAINS = ("refs/okstra/", "refs/notes/okstra/")


def only_commit_chains(decisions: list[Decision]) -> list[Decision]:
    """Refuse okstra refs moved to anything but a commit: tasks, claims and verdict notes are
    commit chains, and a blob there would break every clone that fetches it. One
    ``git cat-file`` (which sees a server's quarantined objects) answers all of them."""

    def moves_a_chain(d: Decision) -> bool:
        return d.allowed and d.ref.startswith(_CHAINS) and not is_zero(d.commit)

    moved = {d.commit for d in decisions if moves_a_chain(d)}
    if not moved:
        return decisions
    _, out, _ = git_output(
        "cat-file",
        "--batch-check=%(objectname) %(objecttype)",
        input="".join(f"{sha}\n" for sha in moved).encode(),
    )
    kinds = dict(line.split(" ", 1) for line in out.decode().splitlines() if " " in line)

    def checked(d: Decision) -> Decision:
        kind = kinds.get(d.commit, "missing")
        if not moves_a_chain(d) or kind == "commit":
            return d
        return Decision(
            d.ref,
            d.commit,
            False,
            "not-a-commit",
            f"refusing to update {d.ref} to {d.commit[:12]}: that is a {kind} object, not a "
            "commit; okstra's refs hold commit chains (publish them with git okstra sync)",
        )

    return [checked(d) for d in decisions]


class Decision(Value):
    """The gate's answer for one ref update."""

    ref: str
    """The ref being updated (on the remote, for pre-push)."""
    commit: str
    """The commit it would point to (the old one, for a deletion)."""
    allowed: bool
    """Pass or refuse."""
    reason: str
    """``okstra-data``, ``unprotected``, ``verdict``, ``delete-allowed``,
    ``delete-refused``, ``not-a-commit``, ``replace-refused`` or ``no-verdict``."""
    message: str = ""
    """For a refusal: the paragraph to show."""
    finding: Finding | None = None
    """The verdict search behind a ``verdict``/``no-verdict`` decision."""
    pushed_as: str | None = None
    """Server side, for a refusal: the symbolic ref the push named, which moves ``ref``."""

    def __repr__(self) -> str:
        return f"Decision({self.ref!r}, {self.commit[:12]!r}, {self.reason!r})"
