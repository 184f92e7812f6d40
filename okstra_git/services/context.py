"""Opening the repository and turning what the user typed into a task key."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..gitlayer import GitRepo
from ..keys import TaskKey, parse_task_key


@dataclass(frozen=True)
class Context:
    """The repository a command works in."""

    repo: GitRepo
    """The opened repository (possibly through a linked worktree)."""

    @property
    def default_project(self) -> str:
        """``okstra.projectId``, else the main worktree's folder name (SPEC §1)."""
        configured = self.repo.config_get("okstra.projectId")
        if configured:
            return configured
        common = self.repo.common_dir
        folder = common.parent if common.name == ".git" else common
        return folder.name.removesuffix(".git") or "project"

    def key(self, text: str) -> TaskKey:
        return parse_task_key(text, self.default_project)

    @property
    def workdir(self) -> Path | None:
        return self.repo.workdir


def open_context(start: str | os.PathLike[str] = ".") -> Context:
    return Context(GitRepo.open(start))
