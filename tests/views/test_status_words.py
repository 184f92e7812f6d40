"""What ``task status`` says when the next step waits for another clone: who holds the stage,
or who started the running run, in the step's ``who`` and ``why`` (text and --json). Two real
clones of a bare remote."""

from __future__ import annotations

import json
from pathlib import Path

from claims_world import approved_task
from conftest import git, okstra
from hooks_world import pair
from sync_world import KEY, TASK_REF, new_task, sync_json, wide_plan

from okstra_git.core.tracking import tracking_name

STAGE1 = "refs/okstra/claims/g/i/stage-1"


def waits(clone: Path) -> tuple[dict, str]:
    """``task status``'s next step (--json) and the text's lines about it."""
    proc = okstra(clone, "task", "status", KEY, "--json")
    step = json.loads(proc.stdout)["next"]
    assert step["kind"] == "wait", step
    text = okstra(clone, "task", "status", KEY).stdout.splitlines()
    return step, "\n".join(line for line in text if line.startswith(("next (", "  why: ")))


def test_a_stage_another_clone_holds(tmp_path: Path):
    a, _ = pair(tmp_path, "a")
    approved_task(a, KEY, wide_plan(1))
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    assert okstra(b, "init", "--remote", "origin").returncode == 0
    sync_json(b)
    proc = okstra(a, "stage", "claim", KEY, "--no-worktree", "--stage", "1", "--remote", "origin")
    assert proc.returncode == 0, proc.stderr
    sync_json(b)
    claim = json.loads(git(b, "show", f"{tracking_name('origin', STAGE1)}:claim.json"))
    assert claim["clone"]
    who = f"implementation-001 by {claim['user']} on {claim['host']} (clone {claim['clone']})"
    step, text = waits(b)
    why = f"waiting for stage 1 ({who}); sync later to see it"
    assert (step["who"], step["why"]) == (who, why)
    assert text == f"next (wait, {who}): git -C {b.resolve()} okstra sync origin\n  why: {why}"


def test_a_run_another_clone_started(tmp_path: Path):
    a, _ = pair(tmp_path, "a")
    new_task(a, kind="error-analysis")
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    assert okstra(b, "init", "--remote", "origin").returncode == 0
    sync_json(b)
    proc = okstra(a, "run", "start", KEY, "--type", "error-analysis", "--remote", "origin")
    assert proc.returncode == 0, proc.stderr
    sync_json(b)
    run = json.loads(git(b, "show", f"{TASK_REF}:runs/error-analysis/001.json"))
    assert run["clone"]
    who = f"{run['startedBy']} (clone {run['clone']})"
    step, text = waits(b)
    why = (
        f"error-analysis run 001 is running in another clone ({who}): its work and its finish "
        "are that clone's; sync later to see it"
    )
    assert (step["who"], step["why"]) == (who, why)
    assert text == f"next (wait, {who}): git -C {b.resolve()} okstra sync origin\n  why: {why}"
