"""Repository set-up: okstra's config keys and the refspecs that carry its data."""

from __future__ import annotations

from ..errors import BadInput
from .context import Context
from .sync import fetch_refspecs


def init(
    ctx: Context,
    project_id: str | None,
    worktree_root: str | None,
    protect: list[str],
    remote: str | None,
    hooks: bool = False,
) -> dict[str, str]:
    """Write the given settings; returns what was set. Existing refspecs are not duplicated.

    Every value is checked before anything is written, so bad input changes nothing.
    """
    if project_id is not None and (":" in project_id or not project_id.strip()):
        raise BadInput(f"--project-id {project_id!r}: must be non-empty and without ':'")
    for glob in protect:
        if not glob.startswith("refs/"):
            raise BadInput(f"--protect {glob!r}: a full ref glob such as refs/heads/main")
    if remote is not None and ctx.repo.config_get(f"remote.{remote}.url") is None:
        raise BadInput(f"--remote {remote!r}: no such remote (see git remote -v)")

    config = ctx.repo.repo.config
    changes: dict[str, str] = {}
    if project_id is not None:
        config["okstra.projectId"] = changes["okstra.projectId"] = project_id
    if worktree_root is not None:
        config["okstra.worktreeRoot"] = changes["okstra.worktreeRoot"] = worktree_root
    if protect:
        if ctx.repo.config_get_all("okstra.protect"):
            config.delete_multivar("okstra.protect", ".*")
        for glob in protect:
            config.set_multivar("okstra.protect", "^$", glob)
        changes["okstra.protect"] = ", ".join(protect)
    if remote is not None:
        have = ctx.repo.config_get_all(f"remote.{remote}.fetch")
        added = [spec for spec in fetch_refspecs(remote) if spec not in have]
        for spec in added:
            config.set_multivar(f"remote.{remote}.fetch", "^$", spec)
        if added:
            changes[f"remote.{remote}.fetch"] = ", ".join(added)
    if hooks:
        from .. import hookinstall

        action, state = hookinstall.install(ctx.repo)
        changes["hooks.pre-push"] = f"{action}: {state.path}"
    return changes
