"""Seed table E1–E3 end to end: the real `git okstra` commands as a user types them — plan
submit/approve, stage claim/done in real worktrees, merges by the user, verify, ci check."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import okstra
from task_world import Task, ok, report
from verify_world import KEY

from okstra_git.core.shell import command


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
    # The hint integrates (docs/workflow.md): one merge commit per stage the task branch lacks.
    integrate = command("git", "-C", task.repo.resolve(), "okstra", "integrate", KEY)
    assert proc.stderr == (
        f"final-verification(whole-task): stage 2 done commit {head2} not merged into task "
        f"worktree HEAD — merge stage branches then retry\nhint: {integrate}\n"
    )
    assert okstra(task.repo, "integrate", KEY).returncode == 0
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
