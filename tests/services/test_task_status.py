"""`task status` (SPEC §14): one overview and the exact next command — followed verbatim here
from plan to release-handoff — and phase routing: `run start --type release-handoff` needs an
accepted whole-task verdict on the task's HEAD, `--type final-verification` runs the gate."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import pair
from sync_world import sync_json
from task_world import Task, ok, report
from verify_world import KEY

from okstra_git.logic import nextstep


def status(repo: Path) -> dict:
    return ok(repo, "task", "status", KEY)


def run_next(repo: Path) -> dict:
    """Run the command `task status` prints as next, exactly as printed; the new status."""
    step = status(repo)["next"]
    argv = shlex.split(step["command"])
    if argv[:2] == ["git", "okstra"]:
        proc = okstra(repo, *argv[2:])
    else:
        proc = subprocess.run(argv, cwd=repo, text=True, capture_output=True)
    assert proc.returncode == 0, (step, proc.stderr)
    return status(repo)


@pytest.fixture
def task(repo: Path) -> Task:
    return Task(repo)


def test_following_next_takes_a_task_from_its_plan_to_release_handoff(task: Task, tmp_path: Path):
    first = status(task.repo)
    assert first["plan"]["approved"] is True and first["plan"]["method"] == "B"
    assert [(s["stage"], s["state"]) for s in first["stages"]] == [(1, "ready"), (2, "ready")]
    assert first["next"]["command"] == f"git okstra stage claim {KEY}"
    assert first["verdict"] is None and first["remoteLag"] == []

    claimed = run_next(task.repo)
    (one, two) = claimed["stages"]
    assert one["state"] == "started" and two["state"] == "started"  # one batch of two
    assert one["holder"] == {
        "host": socket.gethostname(),
        "user": "Test User <test@example.invalid>",
        "runId": "implementation-001",
        "mine": True,
    }
    assert claimed["next"]["command"] == (f"git okstra stage done {KEY} --stage 1 --report REPORT")
    assert claimed["next"]["also"] == [f"git okstra stage done {KEY} --stage 2 --report REPORT"]
    task_wt = Path(claimed["taskWorktree"]["path"])
    for n in (1, 2):
        wt = Path(claimed["stages"][n - 1]["worktree"])
        (wt / "src").mkdir(exist_ok=True)
        (wt / "src" / f"stage{n}.py").write_text(f"VALUE = {n}\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", f"stage {n}")
        (task.repo / f"r{n}.md").write_text("report\n")
        ok(task.repo, "stage", "done", KEY, "--stage", str(n), "--report", f"r{n}.md")

    done = status(task.repo)
    assert [(s["state"], s["merged"]) for s in done["stages"]] == [("done", False)] * 2
    assert done["stages"][0]["doneCommit"] == git(task.repo, "rev-parse", "okstra/grp/feat/stage-1")
    assert done["next"]["who"] == "human"
    assert done["next"]["command"] == (
        f"git -C {task_wt} merge okstra/grp/feat/stage-1 okstra/grp/feat/stage-2"
    )
    merged = run_next(task.repo)
    assert [s["merged"] for s in merged["stages"]] == [True, True]
    assert merged["next"]["command"] == f"git okstra run start {KEY} --type final-verification"

    verifying = run_next(task.repo)
    assert verifying["phase"]["latestRun"]["taskType"] == "final-verification"
    assert verifying["next"]["command"] == f"git okstra verify target {KEY}"
    head = git(task_wt, "rev-parse", "HEAD")
    data = report(task.repo, tmp_path / "data.json")
    ok(task.repo, "verify", "record", KEY, "--verdict", "accepted", "--report", data)

    recorded = status(task.repo)
    assert recorded["verdict"]["verdict"] == "accepted" and recorded["verdict"]["opensGate"]
    assert recorded["verdict"]["recordedOn"] == head
    finish = shlex.split(recorded["next"]["command"])
    assert finish[:8] == ["git", "okstra", "run", "finish", KEY, "--type", "final-verification",
                          "--seq"]  # fmt: skip
    (task.repo / finish[-1]).write_text("the final verification report\n")
    verified = run_next(task.repo)
    assert verified["next"]["command"] == f"git okstra run start {KEY} --type release-handoff"
    handing = run_next(task.repo)
    assert handing["phase"]["latestRun"]["taskType"] == "release-handoff"
    assert handing["next"]["command"].startswith(
        f"git okstra run finish {KEY} --type release-handoff --seq 001 --status completed"
    )
    text = okstra(task.repo, "task", "status", KEY).stdout
    assert f"task {KEY} — active" in text
    assert "verdict: accepted (whole-task)" in text and "opens the gate" in text
    assert "  1 done" in text and "merged" in text
    assert "next (agent): git okstra run finish" in text


def test_release_handoff_needs_an_accepted_whole_task_verdict_on_the_tasks_head(
    task: Task, tmp_path: Path
):
    handoff = ("run", "start", KEY, "--type", "release-handoff")
    proc = okstra(task.repo, *handoff, "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert "has no task branch" in out["error"]
    assert out["hint"] == f"git okstra run start {KEY} --type final-verification"
    task.implement(1)
    task.implement(2)
    task.merge(1)
    head = task.merge(2)
    proc = okstra(task.repo, *handoff)
    assert proc.returncode == 1
    assert f"accepted whole-task verdict on the task's HEAD {head[:12]}" in proc.stderr
    assert "found: no verdict" in proc.stderr

    blocked = report(task.repo, tmp_path / "blocked.json", token="blocked")
    ok(task.repo, "verify", "record", KEY, "--verdict", "blocked", "--report", blocked)
    proc = okstra(task.repo, *handoff)
    assert proc.returncode == 1 and "found: blocked whole-task verdict" in proc.stderr
    single = report(task.repo, tmp_path / "one.json", stage=1)
    ok(task.repo, "verify", "record", KEY, "--stage", "1", "--verdict", "accepted", "--report",
       single)  # fmt: skip
    assert okstra(task.repo, *handoff).returncode == 1  # single-stage never opens it

    accepted = report(task.repo, tmp_path / "data.json")
    ok(task.repo, "verify", "record", KEY, "--verdict", "accepted", "--report", accepted)
    assert task.task_wt is not None
    (task.task_wt / "late.txt").write_text("after the verdict\n")
    git(task.task_wt, "add", "late.txt")
    git(task.task_wt, "commit", "-q", "-m", "a change after the verdict")
    proc = okstra(task.repo, *handoff)
    assert proc.returncode == 1 and "found: no verdict" in proc.stderr  # HEAD moved on
    git(task.task_wt, "reset", "-q", "--hard", head)
    assert okstra(task.repo, *handoff).returncode == 0


def test_final_verification_runs_the_gate_and_refuses_with_its_texts(task: Task):
    fv = ("run", "start", KEY, "--type", "final-verification")
    _, head1 = task.implement(1)
    task.merge(1)
    proc = okstra(task.repo, *fv)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "final-verification(whole-task): stage 2 not done — run implementation --stage 2 first"
    ]
    assert okstra(task.repo, *fv, "--stage", "1").returncode == 0  # single-stage: its gate
    task.implement(2)
    proc = okstra(task.repo, *fv, "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["refusals"][0].startswith(
        "final-verification(whole-task): stage 2 done commit"
    )
    assert okstra(task.repo, "run", "start", KEY, "--type", "error-analysis", "--stage", "1")\
        .returncode == 2  # fmt: skip
    task.merge(2)
    assert okstra(task.repo, *fv).returncode == 0
    assert head1


def test_next_is_sync_when_a_fetch_brought_newer_records(tmp_path: Path):
    a, _remote = pair(tmp_path, "a")
    assert okstra(a, "task", "new", KEY, "--type", "error-analysis").returncode == 0
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    assert okstra(b, "init", "--remote", "origin").returncode == 0
    git(b, "fetch", "-q")
    proc = okstra(b, "task", "status", KEY, "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["hint"] == "git okstra sync origin"
    sync_json(b)
    assert status(b)["next"]["command"] == f"git okstra run start {KEY} --type error-analysis"
    assert okstra(a, "run", "start", KEY, "--type", "error-analysis").returncode == 0
    sync_json(a)
    git(b, "fetch", "-q")
    behind = status(b)
    assert behind["next"]["command"] == "git okstra sync origin"
    assert behind["remoteLag"][0]["state"] == "behind"


@pytest.mark.parametrize(
    ("situation", "command", "who"),
    [
        (nextstep.Situation("p:g:i", "done", "done"), None, "human"),
        (
            nextstep.Situation("p:g:i", "active", "implementation"),
            "git okstra plan submit p:g:i FILE",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "awaiting-approval",
                "implementation",
                plan_submitted=True,
                plan_path="docs/p.md",
                approval_reasons=("marker-missing",),
            ),
            "git okstra plan approve p:g:i",
            "human",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "implementation",
                plan_submitted=True,
                plan_path="docs/p.md",
                approval_reasons=("blockers-open",),
            ),
            "git okstra clarify status docs/p.md",
            "human",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "implementation",
                plan_submitted=True,
                remote="origin",
                stages=(nextstep.StageView(1, "expired", holder="implementation-001 by B"),),
            ),
            "git okstra stage claim p:g:i --take-over-expired --remote origin",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "implementation",
                plan_submitted=True,
                remote="origin",
                stages=(nextstep.StageView(1, "started", holder="implementation-001 by B"),),
            ),
            "git okstra sync origin",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "implementation",
                plan_submitted=True,
                remote="origin",
                stages=(nextstep.StageView(1, "done", merged=None, merge_ref="ab" * 20),),
            ),
            "git okstra sync origin",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "error-analysis",
                running=("error-analysis", "002"),
                run_report=".okstra/r it's.md",
            ),
            "git okstra run finish p:g:i --type error-analysis --seq 002 --status completed "
            "--report '.okstra/r it'\"'\"'s.md'",
            "agent",
        ),
    ],
)
def test_next_step_rules(situation: nextstep.Situation, command: str | None, who: str):
    step = nextstep.next_step(situation)
    assert (step.command, step.who) == (command, who)
