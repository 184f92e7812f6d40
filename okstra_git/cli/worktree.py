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

    ctx = open_context()
    entries = worktrees.list_worktrees(ctx, ctx.key(key))
    lines = []
    for e in entries:
        what = "task" if e.kind == "task" else f"stage {e.stage}"
        state = (
            "present"
            if e.exists
            else "broken"
            if e.repair
            else f"in another clone: {e.elsewhere}"
            if e.elsewhere
            else "missing"
        )
        extra = f", {len(e.dirty)} uncommitted" if e.dirty else ""
        claim = f" [{e.claim_status} {e.run_id}]" if e.claim_status else ""
        lines.append(
            f"{what:<9} {e.path}  {e.branch}  {(e.head or '-')[:12]}  ({state}{extra}){claim}"
        )
        if e.repair:
            lines.append(f"          {e.repair}")
    return Output({"worktrees": [e.to_data() for e in entries]}, "\n".join(lines))


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

    ctx = open_context()
    found = worktrees.task_worktree(ctx, ctx.key(key))
    how = f"made from {found.made_from}" if found.made_from else "already there"
    return Output(
        {
            "path": str(found.path),
            "branch": found.branch,
            "head": found.head,
            "madeFrom": found.made_from,
        },
        f"task worktree {found.path} on {found.branch} at {(found.head or '-')[:12]} ({how})",
    )


@command(
    "worktree prune",
    "Remove worktrees and branches of done stages; refuse when that would lose work.",
    KEY,
    Arg("--force", "Remove even with uncommitted changes or unmerged commits.", flag=True),
)
def prune(key: str, force: bool) -> Output:
    from ..services import worktrees
    from ..services.context import open_context

    ctx = open_context()
    result = worktrees.prune(ctx, ctx.key(key), force)
    lines = [f"moved {m}" for m in result.moved_reports]
    lines += [f"removed the worktree and branch of stage {n}" for n in result.removed]
    lines += [f"removed despite: {p}" for p in result.problems]
    lines += [f"kept unmerged commit as {ref}" for ref in result.kept]
    lines += [f"skipped: {s}" for s in result.skipped]
    return Output(
        {
            "removed": result.removed,
            "forcedOver": result.problems,
            "kept": result.kept,
            "skipped": result.skipped,
            "movedReports": result.moved_reports,
        },
        "\n".join(lines) or "nothing to prune",
    )
