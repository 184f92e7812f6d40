"""``git okstra init``: record okstra's settings in the repository config."""

from __future__ import annotations

import typer

from ..services import setup
from ..services.context import open_context
from .output import JSON_OPTION, emit


def init(
    project_id: str | None = typer.Option(None, "--project-id", help="okstra.projectId"),
    worktree_root: str | None = typer.Option(
        None, "--worktree-root", help="okstra.worktreeRoot (stage worktrees go under it)."
    ),
    protect: list[str] | None = typer.Option(
        None, "--protect", help="okstra.protect ref glob (repeatable)."
    ),
    remote: str | None = typer.Option(
        None, "--remote", help="Add fetch refspecs for okstra refs and notes to this remote."
    ),
    hooks: bool = typer.Option(
        False, "--hooks", help="Install the pre-push hook (as `git okstra hooks install`)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Record okstra settings and, with --remote, make plain `git fetch` bring okstra data."""
    ctx = open_context()
    changes = setup.init(ctx, project_id, worktree_root, protect or [], remote, hooks)
    emit(
        as_json,
        {"config": changes, "projectId": ctx.default_project},
        "\n".join([f"{k} = {v}" for k, v in changes.items()] or ["nothing to change"]),
    )
