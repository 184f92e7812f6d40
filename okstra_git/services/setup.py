"""Repository set-up: okstra's config keys and the refspecs that carry its data."""

from __future__ import annotations

from ..errors import BadInput
from ..gate import DEFAULT_PROTECT as DEFAULT_PROTECT  # the gate owns the default
from .context import Context


def fetch_refspecs(remote: str) -> list[str]:
    """Where a plain ``git fetch REMOTE`` puts okstra data: remote-tracking namespaces only.

    Never straight into ``refs/okstra/*`` or ``refs/notes/okstra/*``: a fetch must not clobber
    a local claim or note; ``git okstra sync`` merges them (SPEC §2).
    """
    return [
        f"+refs/okstra/*:refs/okstra-remotes/{remote}/*",
        f"+refs/notes/okstra/*:refs/notes/okstra-remotes/{remote}/*",
    ]


def init(
    ctx: Context,
    project_id: str | None,
    worktree_root: str | None,
    protect: list[str],
    remote: str | None,
    hooks: bool = False,
) -> dict[str, str]:
    """Write the given settings; returns what was set. Existing refspecs are not duplicated."""
    config = ctx.repo.repo.config
    changes: dict[str, str] = {}
    if project_id is not None:
        if ":" in project_id or not project_id.strip():
            raise BadInput(f"--project-id {project_id!r}: must be non-empty and without ':'")
        config["okstra.projectId"] = changes["okstra.projectId"] = project_id
    if worktree_root is not None:
        config["okstra.worktreeRoot"] = changes["okstra.worktreeRoot"] = worktree_root
    if protect:
        for name in ctx.repo.config_get_all("okstra.protect"):
            config.delete_multivar("okstra.protect", "^" + _escape(name) + "$")
        for glob in protect:
            if not glob.startswith("refs/"):
                raise BadInput(f"--protect {glob!r}: a full ref glob such as refs/heads/main")
            config.set_multivar("okstra.protect", "^$", glob)
        changes["okstra.protect"] = ", ".join(protect)
    if remote is not None:
        if ctx.repo.config_get(f"remote.{remote}.url") is None:
            raise BadInput(f"--remote {remote!r}: no such remote (see git remote -v)")
        have = set(ctx.repo.config_get_all(f"remote.{remote}.fetch"))
        for spec in fetch_refspecs(remote):
            if spec not in have:
                config.set_multivar(f"remote.{remote}.fetch", "^$", spec)
                changes.setdefault(f"remote.{remote}.fetch", spec)
    if hooks:
        from .. import hookinstall

        action, state = hookinstall.install(ctx.repo)
        changes["hooks.pre-push"] = f"{action}: {state.path}"
    return changes


def _escape(text: str) -> str:
    import re

    return re.escape(text)
