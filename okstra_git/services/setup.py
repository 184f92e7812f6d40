"""Repository set-up: okstra's config keys and the refspecs that carry its data."""

from __future__ import annotations

from ..errors import BadInput
from ..gate import protect_glob
from ..keys import check_project_id
from .context import Context
from .sync import fetch_refspecs
from .worktrees import checked_root


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
    if project_id is not None:
        check_project_id(project_id, "--project-id")
    globs = []
    for value in protect:
        try:
            globs.append(protect_glob(value))  # stored as the full ref glob the gate reads
        except BadInput as exc:
            raise BadInput(f"--protect {value!r}: {exc}") from None
    if worktree_root is not None:
        checked_root(ctx, worktree_root, "--worktree-root")
    if remote is not None and ctx.repo.config_get(f"remote.{remote}.url") is None:
        raise BadInput(f"--remote {remote!r}: no such remote (see git remote -v)")

    config = ctx.repo.repo.config
    changes: dict[str, str] = {}
    if project_id is not None:
        config["okstra.projectId"] = changes["okstra.projectId"] = project_id
    if worktree_root is not None:
        config["okstra.worktreeRoot"] = changes["okstra.worktreeRoot"] = worktree_root
    if globs:
        if ctx.repo.config_get_all("okstra.protect"):
            config.delete_multivar("okstra.protect", ".*")
        for glob in globs:
            config.set_multivar("okstra.protect", "^$", glob)
        changes["okstra.protect"] = ", ".join(globs)
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
