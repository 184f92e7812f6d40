"""This clone's identity (docs/workflow.md): a random id in the clone's own config,
``okstra.cloneId``.

Hostnames do not tell clones apart: several clones of one project live on one machine (one per
agent), and each must know which claims are its own — to resume, release, mark done, renew,
and for ``next``. ``init`` records the id; the first write that needs it makes it when ``init``
never ran. Only the repository's own config file is read: a value in the global or system
config would be shared by every clone of the user. The value is checked where it is read, since
config is anyone's to edit: a malformed one is refused, naming the fix, never guessed around.
"""

from __future__ import annotations

from ..core.errors import BadInput
from ..git.repo import GitRepo

CLONE_KEY = "okstra.cloneId"
CLONE_HEX = 16
"""Hex digits in a clone id: 64 random bits, so two clones never draw the same one."""


def is_clone_id(value: object) -> bool:
    """Whether ``value`` is a clone id as okstra writes them (what a fetched claim must hold)."""
    return (
        isinstance(value, str)
        and len(value) == CLONE_HEX
        and all(c in "0123456789abcdef" for c in value)
    )


def clone_id(repo: GitRepo) -> str | None:
    """This clone's id, or None when none was made yet (nothing here recorded one)."""
    value = repo.local_config_get(CLONE_KEY)
    if value is None:
        return None
    if not is_clone_id(value):
        raise BadInput(
            f"config {CLONE_KEY} = {value!r} in {repo.common_dir / 'config'} is not a clone id "
            f"okstra made ({CLONE_HEX} lowercase hex digits), so this clone cannot tell its own "
            f"claims from other clones'. If you copied it from another clone, or edited it, "
            f"remove it and let okstra make a new one: git config --unset {CLONE_KEY} && git "
            "okstra init (claims this clone made under the old id then read as another clone's)"
        )
    return value


def ensure_clone_id(repo: GitRepo) -> str:
    """This clone's id, made now (random, in the clone's config) when there is none yet.

    Writers of one clone take turns here, so two first writes at once never make two ids."""
    found = clone_id(repo)
    if found is not None:
        return found
    import secrets  # with reflocks, ~2 ms that a read of the id (every task status) never needs

    from ..git.reflocks import queue

    with queue(repo.common_dir, CLONE_KEY):
        found = clone_id(repo)  # another writer may have made it while this one waited
        if found is None:
            import secrets  # only for a clone's first id

            found = secrets.token_hex(CLONE_HEX // 2)
            repo.local_config_set(CLONE_KEY, found)
    return found
