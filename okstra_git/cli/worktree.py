"""``git okstra worktree``: list a task's worktrees and tear down those of done stages."""

from __future__ import annotations

import typer

from ..services import worktrees
from ..services.context import open_context
from .output import JSON_OPTION, emit

app = typer.Typer(help="The task worktree and the per-stage worktrees.", no_args_is_help=True)


@app.command("list")
def list_(key: str = typer.Argument(...), as_json: bool = JSON_OPTION) -> None:
    """The task worktree and every claimed stage's worktree, with HEAD and uncommitted files."""
    ctx = open_context()
    entries = worktrees.list_worktrees(ctx, ctx.key(key))
    lines = []
    for e in entries:
        what = "task" if e.kind == "task" else f"stage {e.stage}"
        state = "present" if e.exists else "missing"
        extra = f", {len(e.dirty)} uncommitted" if e.dirty else ""
        claim = f" [{e.claim_status} {e.run_id}]" if e.claim_status else ""
        lines.append(
            f"{what:<9} {e.path}  {e.branch}  {(e.head or '-')[:12]}  ({state}{extra}){claim}"
        )
    emit(as_json, {"worktrees": [e.to_data() for e in entries]}, "\n".join(lines))


@app.command("prune")
def prune(
    key: str = typer.Argument(...),
    force: bool = typer.Option(
        False, "--force", help="Remove even with uncommitted changes or unmerged commits."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Remove worktrees and branches of done stages; refuse when that would lose work."""
    ctx = open_context()
    result = worktrees.prune(ctx, ctx.key(key), force)
    lines = [f"removed the worktree and branch of stage {n}" for n in result.removed]
    lines += [f"removed despite: {p}" for p in result.problems]
    emit(
        as_json,
        {"removed": result.removed, "forcedOver": result.problems},
        "\n".join(lines) or "nothing to prune",
    )
