"""Seed table E1–E3 end to end: the real `git okstra` commands as a user types them — plan
submit/approve, stage claim/done in real worktrees, merges by the user, verify, ci check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, okstra
from reports_data import verdict_report
from verify_world import KEY, make_plan

from okstra_git.core.shell import command
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

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        plan = repo / "docs" / "plan.md"
        plan.parent.mkdir()
        plan.write_text(make_plan(2).replace("- [x] Approved", "- [ ] Approved"))
        git(repo, "add", "docs")
        git(repo, "commit", "-q", "-m", "plan")
        ok(repo, "task", "new", KEY, "--type", "implementation-planning")
        ok(repo, "plan", "submit", KEY, "docs/plan.md")
        ok(repo, "plan", "approve", KEY)
        self.task_wt: Path | None = None

    def implement(self, stage: int) -> tuple[Path, str]:
        """Claim the stage, commit its file in its worktree, mark it done with a report."""
        claimed = ok(self.repo, "stage", "claim", KEY, "--stage", str(stage))
        self.task_wt = Path(claimed["taskWorktree"])
        wt = Path(claimed["placements"][0]["worktreePath"])
        (wt / "src").mkdir(exist_ok=True)
        (wt / "src" / f"stage{stage}.py").write_text(f"VALUE = {stage}\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", f"stage {stage}")
        notes = self.repo / f"stage-{stage}-report.md"
        notes.write_text(f"stage {stage} report\n")
        done = ok(self.repo, "stage", "done", KEY, "--stage", str(stage), "--report", str(notes))
        return wt, done["claim"]["headCommit"]

    def merge(self, stage: int) -> str:
        assert self.task_wt is not None
        git(self.task_wt, "merge", "-q", "--no-ff", "-m", f"merge stage {stage}",
            f"okstra/grp/feat/stage-{stage}")  # fmt: skip
        return git(self.task_wt, "rev-parse", "HEAD")


@pytest.fixture
def task(repo: Path) -> Task:
    return Task(repo)


def test_e1_two_stages_done_and_merged_accepted_allows_release_handoff(task: Task, tmp_path: Path):
    task.implement(1)
    task.implement(2)
    task.merge(1)
    head = task.merge(2)
    target = ok(task.repo, "verify", "target", KEY)["target"]
    assert (target["scope"], target["head"]) == ("whole-task", head)
    assert [s["reportPath"] for s in target["stages"]] == [
        "stage-1-report.md",
        "stage-2-report.md",
    ]
    data = report(task.repo, tmp_path / "data.json")
    recorded = ok(task.repo, "verify", "record", KEY, "--verdict", "accepted",
                  "--report", data, "--expect-head", head)  # fmt: skip
    assert recorded["verdict"]["routing"] == "release-handoff"
    assert recorded["nextPhase"] == "release-handoff"
    shown = ok(task.repo, "task", "show", KEY)["task"]["workflow"]
    assert shown["nextRecommendedPhase"] == "release-handoff"
    assert okstra(task.repo, "ci", "check", head).returncode == 0


def test_e2_stage_2_unmerged_is_refused_with_the_text(task: Task):
    task.implement(1)
    _wt, head2 = task.implement(2)
    task.merge(1)
    proc = okstra(task.repo, "verify", "target", KEY)
    assert proc.returncode == 1
    merge = command("git", "-C", task.task_wt, "merge", "okstra/grp/feat/stage-2")
    assert proc.stderr == (
        f"final-verification(whole-task): stage 2 done commit {head2} not merged into task "
        f"worktree HEAD — merge stage branches then retry\nhint: {merge}\n"
    )
    task.merge(2)
    assert okstra(task.repo, "verify", "target", KEY).returncode == 0


def test_e3_single_stage_right_after_stage_1_passes_but_not_to_release(task: Task, tmp_path: Path):
    wt, head1 = task.implement(1)
    target = ok(task.repo, "verify", "target", KEY, "--stage", "1")["target"]
    assert (target["scope"], target["head"], target["worktree"]) == (
        "single-stage",
        head1,
        str(wt),
    )
    data = report(task.repo, tmp_path / "data.json", stage=1)
    recorded = ok(task.repo, "verify", "record", KEY, "--stage", "1", "--verdict", "accepted",
                  "--report", data)  # fmt: skip
    assert recorded["verdict"]["routing"] == "done"
    assert recorded["nextPhase"] == "implementation"  # stage 2 is not done yet
    assert okstra(task.repo, "ci", "check", head1).returncode == 1  # single-stage opens nothing
    # The whole task is not verifiable yet.
    whole = okstra(task.repo, "verify", "target", KEY)
    assert whole.returncode == 1 and "stage 2 not done" in whole.stderr


def test_a_final_verification_run_finishes_where_its_verdict_routed(task: Task, tmp_path: Path):
    task.implement(1)
    task.implement(2)
    task.merge(1)
    head = task.merge(2)
    run = ok(task.repo, "run", "start", KEY, "--type", "final-verification")["run"]
    data = report(task.repo, tmp_path / "data.json")
    finish = ("run", "finish", KEY, "--type", "final-verification", "--seq", run["seq"],
              "--status", "completed", "--report", data)  # fmt: skip
    early = okstra(task.repo, *finish)
    assert early.returncode == 1 and "has no verdict yet" in early.stderr
    blocked = report(task.repo, tmp_path / "blocked.json", token="blocked")
    ok(task.repo, "verify", "record", KEY, "--verdict", "blocked", "--report", blocked,
       "--expect-head", head)  # fmt: skip
    flow = ok(task.repo, *finish)["workflow"]
    assert (flow["nextRecommendedPhase"], flow["lastCompletedPhase"]) == (
        "implementation",
        "final-verification",
    )
