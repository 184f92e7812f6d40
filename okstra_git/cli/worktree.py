"""``git okstra worktree``: list a task's worktrees and tear down those of done stages."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command, group

group(
    "worktree",
    "The task worktree and the per-stage worktrees (under okstra.worktreeRoot).",
)


@command(
    "worktree list",
    "The task worktree and every claimed stage's worktree, with HEAD and uncommitted files.",
    KEY,
)
def list_(key: str) -> Output:
    from ..services import worktrees
    from ..services.context import open_context
    from ..views.worktree import listed

    ctx = open_context()
    return listed(worktrees.list_worktrees(ctx, ctx.key(key)))


@command(
    "worktree task",
    "Make (if missing) and show the task worktree, where finished stages are merged.",
    KEY,
    about="A clone that never claimed a stage gets its task worktree here: from its task "
    "branch, else the task branch another clone published (after git okstra sync), else the "
    "task's implementation base.",
)
def task(key: str) -> Output:
    from ..services import worktrees
    from ..services.context import open_context
    from ..views.worktree import task_worktree

    ctx = open_context()
    return task_worktree(worktrees.task_worktree(ctx, ctx.key(key)))


@command(
    "worktree prune",
    "Remove worktrees and branches of done stages; refuse when that would lose work.",
    KEY,
    Arg("--force", "Remove even with uncommitted changes or unmerged commits.", flag=True),
)
def prune(key: str, force: bool) -> Output:
    from ..services import worktrees
    from ..services.context import open_context
    from ..views.worktree import pruned

    ctx = open_context()
    return pruned(worktrees.prune(ctx, ctx.key(key), force))
