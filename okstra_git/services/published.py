"""One task event written on the task as a remote holds it, and published at once.

``run start --remote``, ``run finish --remote`` and ``plan approve --remote`` move a shared
task: each fetches, writes its event on what the fetch saw, and pushes the task ref leased on
it (with the notes the event wrote), so every clone sees the move as soon as it fetches, and
two clones never make the same move.
"""

from __future__ import annotations

from ..core.errors import Conflict, Refused
from ..core.keys import TaskKey
from ..core.shell import command
from ..records.task import TaskState, require_task, task_ref
from .context import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    Done = TypeVar("Done")  # what the event's writer gives back beside the task


def through_remote(
    ctx: Context,
    remote: str,
    key: TaskKey,
    what: str,
    act: Callable[[TaskState], tuple[TaskState, Done]],
    notes: tuple[str, ...] = (),
) -> tuple[TaskState, Done]:
    """Write one task event on the task as ``remote`` holds it (``act``, given the task after a
    fetch) and publish it with a push of the task ref leased on what the fetch saw — with each
    of the ``notes`` refs this clone holds more of than the fetch found (the fetch merged the
    remote's in), leased the same way, in one atomic push. A lost race puts the event back
    here and tries again on the new state; anything else refuses."""
    import random
    import time

    from ..core.tracking import tracking_name
    from ..git.repo import RefMoved, RefUpdate
    from .sync.engine import pull
    from .sync.transport import check_remote, push_leased

    check_remote(ctx.repo, remote)
    ref = task_ref(key)
    # Runs from any folder (an agent often runs outside the repository), as every step does.
    sync = command("git", "-C", ctx.clone_dir, "okstra", "sync", remote)
    for _ in range(5):
        if pull(ctx, remote).blocking((ref,)):
            raise Refused(
                f"{ref} could not be brought in step with {remote}, so the {what} cannot be "
                f"published safely; see why and settle it: {sync}",
                hint=sync,
            )
        before = require_task(ctx.repo, key)
        after, record = act(before)
        there = ctx.repo.read_ref(tracking_name(remote, ref))
        updates = [RefUpdate(ref, after.head, there)]
        for name in notes:
            mine, theirs = ctx.repo.read_ref(name), ctx.repo.read_ref(tracking_name(remote, name))
            if mine is None or mine == theirs:
                continue
            if theirs is None or ctx.repo.contains(mine, theirs):  # never one the remote lacks
                updates.append(RefUpdate(name, mine, theirs))
        outcome = push_leased(ctx.repo, remote, updates)
        if outcome.ok:
            return after, record
        try:
            ctx.repo.update_refs(
                [RefUpdate(ref, before.head, after.head)],
                f"okstra: undo the {what}, which {remote} did not take",
            )
        except RefMoved as exc:
            raise Refused(
                f"the {what} was not taken by {remote} and could not be undone here ({exc}); "
                f"run {sync}",
                hint=sync,
            ) from exc
        if not outcome.lost_race:
            raise Refused(f"git push {remote} refused the {what}: {outcome.detail}")
        time.sleep(0.05 + random.random() * 0.2)  # another clone moved the task: look again
    raise Conflict(f"the task {key} kept moving on {remote} during the {what}; retry")
