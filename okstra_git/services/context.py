"""Opening the repository and turning what the user typed into a task key."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ..core.keys import TaskKey, check_project_id, parse_task_key
from ..core.values import Value, remember
from ..git.repo import GitRepo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..gate.config import GateConfig


class Context(Value):
    """The repository a command works in."""

    _memo = ("_gate_config",)
    repo: GitRepo
    """The opened repository (possibly through a linked worktree)."""

    def gate_config(self) -> GateConfig:
        """The gate's config here (``okstra.protect``, match mode, signers), read once per
        command (``git config`` is a process: the board judges every task's verdict)."""
        try:
            return self._gate_config  # type: ignore[attr-defined]  # a slot, not a field
        except AttributeError:
            from ..gate.config import GateConfig

            found = GateConfig.load(self.repo.workdir or self.repo.git_dir)
            return remember(self, "_gate_config", found)

    @property
    def default_project(self) -> str:
        """``okstra.projectId``, else the main worktree's folder name (docs/workflow.md); refused
        with the fix when no task key could hold it."""
        configured = self.repo.config_get("okstra.projectId")
        if configured is not None:
            return check_project_id(configured, "config okstra.projectId")
        common = self.repo.common_dir
        folder = common.parent if common.name == ".git" else common
        name = folder.name.removesuffix(".git") or "project"
        return check_project_id(name, f"the repository folder name (no okstra.projectId), {folder}")

    def key(self, text: str) -> TaskKey:
        """The key typed; a two-part ``group:id`` takes the default project (read only then)."""
        return parse_task_key(text, self.default_project if text.count(":") == 1 else None)

    @property
    def workdir(self) -> Path | None:
        return self.repo.workdir

    @property
    def clone_dir(self) -> str:
        """This clone's main worktree (absolute, resolved): where the commands okstra prints
        run (``git -C <it> okstra …``), whichever of the clone's worktrees printed them."""
        common = self.repo.common_dir.resolve()
        if common.name == ".git":
            return str(common.parent)
        return str(self.workdir.resolve()) if self.workdir is not None else str(common)


_WHERE: ContextVar[str] = ContextVar("okstra_where", default=".")
"""The folder a command opens its repository from when it names none: the working directory
for the CLI, the ``repository`` a tool call names in ``git okstra mcp`` (cli/mcp.py)."""


def open_context(start: str | os.PathLike[str] | None = None, plumbed: bool = False) -> Context:
    """The repository at ``start`` (default: where commands work). ``plumbed``: served by
    git's plumbing where it can be (``git.plumbed``), for a command whose whole run must cost
    little more than the git it starts; every service works on either."""
    where = _WHERE.get() if start is None else start
    if plumbed:
        from ..git.plumbed import open_plumbed

        return Context(open_plumbed(where))
    return Context(GitRepo.open(where))


@contextmanager
def working_in(folder: str) -> Iterator[None]:
    """Commands run in this block open the repository at ``folder``, as ``git -C FOLDER``
    would, without changing the process's working directory (a server's calls share it)."""
    token = _WHERE.set(folder)
    try:
        yield
    finally:
        _WHERE.reset(token)
