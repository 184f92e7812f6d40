"""Where a task's worktrees and branches are (docs/workflow.md; the layout is drawn in
:mod:`.worktrees`): what read commands (``verify target``, ``task status``) need, without the
code that makes, lists and tears worktrees down."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import BadInput, brief
from ..core.keys import TaskKey, slug
from ..core.strict import unknown_home
from ..core.values import Value
from ..git.worktrees import main_worktree
from .context import Context

ROOT_CONFIG = "okstra.worktreeRoot"


class Layout(Value):
    """Where one task's worktrees and branches are."""

    key: TaskKey
    """The task."""
    folder: Path
    """``<root>/<project>/<group>/<id>``: every worktree of the task is inside it."""

    @property
    def _names(self) -> str:
        return f"{self.key.group_slug}-{self.key.id_slug}"

    @property
    def task_path(self) -> Path:
        return self.folder / "task"

    @property
    def task_branch(self) -> str:
        return task_branch(self.key)

    @property
    def task_name(self) -> str:
        return f"okstra-{self._names}-task"

    def stage_path(self, stage: int) -> Path:
        return self.folder / f"stage-{stage}"

    def stage_branch(self, stage: int) -> str:
        return f"okstra/{self.key.ref_suffix}/stage-{stage}"

    def stage_name(self, stage: int) -> str:
        return f"okstra-{self._names}-stage-{stage}"


def task_branch(key: TaskKey) -> str:
    """``okstra/<group>/<id>/task``: named by the key alone, with no worktree root to work out
    (which reads config and hashes the clone's path)."""
    return f"okstra/{key.ref_suffix}/task"


def layout(ctx: Context, key: TaskKey) -> Layout:
    folder = worktree_root(ctx) / slug(key.project) / key.group_slug / key.id_slug
    return Layout(key, Path(os.path.abspath(folder)))


def worktree_root(ctx: Context) -> Path:
    """``okstra.worktreeRoot`` (``~`` expanded; relative to the main worktree, like git), else
    this clone's :func:`default_root`. A value that cannot hold folders — empty,
    ``~nosuchuser``, or a path through a file — is refused here with the fix, before anything
    is made under it."""
    configured = ctx.repo.config_get(ROOT_CONFIG)
    if configured is None:
        return default_root(ctx)
    return checked_root(ctx, configured, f"config {ROOT_CONFIG}")


def default_root(ctx: Context) -> Path:
    """``~/.okstra/worktrees/<clone folder>-<8 hex of its git dir's real path>``: one root per
    clone. A root shared by two clones of one project would give both the same task and stage
    folders, and each clone's claims would run into the other's worktrees."""
    common = ctx.repo.common_dir.resolve()
    folder = common.parent if common.name == ".git" else common
    from ..core.machine import (
        sha1_hex,  # not at import: a read that finds the task branch checked out needs no root
    )

    tag = sha1_hex(os.fsencode(common))[:8]
    return Path.home() / ".okstra" / "worktrees" / f"{slug(folder.name)}-{tag}"


def checked_root(ctx: Context, value: str, where: str) -> Path:
    """``value`` as a worktree root, or BadInput naming ``where`` and the fix."""
    fix = "Fix: git config okstra.worktreeRoot PATH (a folder you can write)"
    if not value.strip():
        raise BadInput(f"{where} is empty, so it names no folder. {fix}")
    why = unknown_home(value)
    if why is not None:
        raise BadInput(f"{where} = {value!r}: {why}. {fix}")
    root = Path(os.path.expanduser(value))
    if not root.is_absolute():
        # The folder alone (main_worktree refuses a bare repository): it may have no commit.
        root = (ctx.repo.main_checkout()[0] or main_worktree(ctx.repo)[0]) / root
    try:
        existing = next((p for p in (root, *root.parents) if p.exists()), None)
    except OSError as exc:  # a name too long for the file system (ENAMETOOLONG)
        raise BadInput(
            f"{where} = {brief(value)!r}: {exc.strerror}, so no worktree can be made under it. "
            f"{fix}"
        ) from exc
    if existing is not None and not existing.is_dir():
        raise BadInput(
            f"{where} = {value!r}: {existing} is a file, not a folder, so no worktree can be "
            f"made under it. {fix}"
        )
    return root


def task_worktree_path(ctx: Context, key: TaskKey) -> Path:
    """Where the task branch is checked out (the user may have moved it), else the default."""
    return ctx.repo.worktree_for_branch(task_branch(key)) or layout(ctx, key).task_path
