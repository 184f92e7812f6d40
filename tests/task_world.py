"""A two-stage task driven through the real CLI, as a user types it: shared by the end-to-end
verify, status and remote-record tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import git, okstra
from reports_data import verdict_report
from verify_world import KEY, make_plan

from okstra_git.services.context import open_context


def ok(cwd: Path, *args: str) -> dict:
    proc = okstra(cwd, *args, "--json")
    assert proc.returncode == 0, f"{args}: {proc.stderr}"
    return json.loads(proc.stdout)


def report(repo: Path, path: Path, token: str = "accepted", stage: int | None = None) -> str:
    """Valid final-verification data for the task, as `report init` starts it."""
    ctx = open_context(repo)
    return str(verdict_report(ctx, ctx.key(KEY), path, token, stage=stage))


class Task:
    """A two-stage task driven through the CLI."""

    def __init__(self, repo: Path, plan_text: str | None = None) -> None:
        self.repo = repo
        plan = repo / "docs" / "plan.md"
        plan.parent.mkdir()
        text = plan_text if plan_text is not None else make_plan(2)
        plan.write_text(text.replace("- [x] Approved", "- [ ] Approved"))
        git(repo, "add", "docs")
        git(repo, "commit", "-q", "-m", "plan")
        ok(repo, "task", "new", KEY, "--type", "implementation-planning")
        ok(repo, "plan", "submit", KEY, "docs/plan.md")
        ok(repo, "plan", "approve", KEY)
        self.task_wt: Path | None = None
        self.last_done: dict = {}
        """What the last ``stage done --json`` printed."""

    def implement(
        self, stage: int, notes: Path | Callable[[int], Path] | None = None
    ) -> tuple[Path, str]:
        """Claim the stage, commit its file in its worktree, mark it done with a report
        (``notes``, or what ``notes(stage)`` writes once the stage is claimed; default a
        one-line Markdown file)."""
        claimed = ok(self.repo, "stage", "claim", KEY, "--stage", str(stage))
        self.task_wt = Path(claimed["taskWorktree"])
        wt = Path(claimed["placements"][0]["worktreePath"])
        (wt / "src").mkdir(exist_ok=True)
        (wt / "src" / f"stage{stage}.py").write_text(f"VALUE = {stage}\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", f"stage {stage}")
        if callable(notes):
            notes = notes(stage)
        if notes is None:
            notes = self.repo / f"stage-{stage}-report.md"
            notes.write_text(f"stage {stage} report\n")
        done = ok(self.repo, "stage", "done", KEY, "--stage", str(stage), "--report", str(notes))
        self.last_done = done
        return wt, done["claim"]["headCommit"]

    def merge(self, stage: int) -> str:
        assert self.task_wt is not None
        git(self.task_wt, "merge", "-q", "--no-ff", "-m", f"merge stage {stage}",
            f"okstra/grp/feat/stage-{stage}")  # fmt: skip
        return git(self.task_wt, "rev-parse", "HEAD")
