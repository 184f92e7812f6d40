"""`sync` loses no event: local-only task events are replayed on the remote's chain, and only a
true conflict stops — for its task alone — naming both sides and one command per choice
(docs/concurrency-and-sync.md). Real clones of a local bare remote, the real CLI."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from claims_world import approved_task
from conftest import git, okstra
from hooks_world import pair, remote_ref
from sync_world import KEY, TASK_REF, new_task, refs, shared_between_two, sync_json, wide_plan

CLAIMS = "refs/okstra/claims/g/i/"


def events(repo: Path, ref: str = TASK_REF) -> list[str]:
    """The task's event subjects, oldest first."""
    return git(repo, "log", "--reverse", "--format=%s", ref).splitlines()


def manifest(repo: Path, ref: str = TASK_REF) -> dict:
    return json.loads(git(repo, "show", f"{ref}:task.json"))


def run_printed(cwd: Path, command: str) -> subprocess.CompletedProcess[str]:
    """Run a command exactly as okstra printed it (``git okstra …``), in ``cwd``."""
    argv = shlex.split(command)
    assert argv[:2] == ["git", "okstra"], command
    return okstra(cwd, *argv[2:])


@pytest.fixture
def shared_task(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two clones (Alice, Bob) that both hold task p:g:i from the remote."""
    return shared_between_two(tmp_path)


def start(clone: Path, phase: str, key: str = KEY) -> None:
    proc = okstra(clone, "run", "start", key, "--type", phase)
    assert proc.returncode == 0, proc.stderr


def test_runs_started_offline_on_two_clones_both_survive_sync(shared_task):
    a, b, remote = shared_task
    start(a, "requirements-discovery")
    start(b, "error-analysis")
    start(b, "implementation-planning")
    sync_json(a)
    mine = git(b, "rev-parse", TASK_REF)

    out = sync_json(b)
    (state,) = [r for r in out["refs"] if r["ref"] == TASK_REF]
    assert state["state"] == "replayed" and out["pushed"] == [TASK_REF]
    # Like `pull --rebase`: the remote's events first, then b's, none lost, none duplicated.
    assert events(b) == [
        "task new implementation-planning",
        "run start requirements-discovery",
        "run start error-analysis",
        "run start implementation-planning",
    ]
    assert remote_ref(remote, TASK_REF) == git(b, "rev-parse", TASK_REF) != mine
    # b's events keep their author (Bob); the tree holds every run; the manifest says where
    # the task stands after the last event, with both phases' states.
    assert git(b, "log", "-1", "--format=%an", TASK_REF) == "Bob"
    assert git(b, "log", "-1", "--format=%an", f"{TASK_REF}~2") == "Alice"
    task = manifest(b)
    assert task["latestRun"] == {
        "seq": "001",
        "status": "running",
        "taskType": "implementation-planning",
    }
    assert task["workflow"]["phaseStates"] == {
        "requirements-discovery": "running",
        "error-analysis": "running",
        "implementation-planning": "running",
    }
    for run in ("requirements-discovery/001", "error-analysis/001", "implementation-planning/001"):
        git(b, "cat-file", "-e", f"{TASK_REF}:runs/{run}.json")

    # a fast-forwards to the same chain; another sync anywhere changes nothing.
    assert {r["ref"]: r["state"] for r in sync_json(a)["refs"]}[TASK_REF] == "fast-forwarded"
    assert git(a, "rev-parse", TASK_REF) == git(b, "rev-parse", TASK_REF)
    assert sync_json(b)["refs"] == []


def test_the_same_run_started_on_both_is_a_conflict_with_one_command_per_choice(shared_task):
    a, b, remote = shared_task
    new_task(a, "p:other:t")  # another task, ahead on a: synced even though p:g:i conflicts
    start(a, "error-analysis")
    sync_json(a)
    start(b, "error-analysis")
    new_task(b, "p:more:u")
    before = refs(b, "refs/okstra/")
    there = remote_ref(remote, TASK_REF)

    proc = okstra(b, "sync", "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    (conflict,) = out["conflicts"]
    assert conflict["summary"] == "run error-analysis-001 was started on both sides"
    assert conflict["here"]["author"].startswith("Bob") and conflict["here"]["event"] == (
        "run start error-analysis"
    )
    assert conflict["there"]["author"].startswith("Alice")
    assert conflict["there"]["commit"] == there
    commands = [c["command"] for c in conflict["choices"]]
    assert commands == [
        "git okstra sync origin --task p:g:i --take-theirs error-analysis-001",
        "git okstra sync origin --task p:g:i --renumber error-analysis-001",
    ]
    # Nothing of p:g:i moved, here or there; the other tasks went both ways.
    assert git(b, "rev-parse", TASK_REF) == before[TASK_REF]
    assert remote_ref(remote, TASK_REF) == there
    assert remote_ref(remote, "refs/okstra/tasks/more/u") == before["refs/okstra/tasks/more/u"]
    assert git(b, "rev-parse", "refs/okstra/tasks/other/t")
    # The text names both sides too.
    text = okstra(b, "sync").stderr
    assert "here:   " in text and "(Bob <" in text and "origin: " in text and "(Alice <" in text
    assert commands[1] in text

    # Keep both: b's run becomes error-analysis-002, after a's 001.
    (b / ".okstra/tasks/g/i/runs/error-analysis/reports").mkdir(parents=True, exist_ok=True)
    report = b / ".okstra/tasks/g/i/runs/error-analysis/reports/final-report-error-analysis-001.md"
    report.write_text("b's report\n")
    proc = run_printed(b, commands[1])
    assert proc.returncode == 0, proc.stderr
    assert "renumbered your error-analysis-001 as error-analysis-002" in proc.stdout
    assert events(b)[-2:] == ["run start error-analysis", "run start error-analysis"]
    assert remote_ref(remote, TASK_REF) == git(b, "rev-parse", TASK_REF)
    ours = json.loads(git(b, "show", f"{TASK_REF}:runs/error-analysis/002.json"))
    theirs = json.loads(git(b, "show", f"{TASK_REF}:runs/error-analysis/001.json"))
    assert ours["seq"] == "002" and ours["startedBy"].startswith("Bob")
    assert ours["paths"]["report"].endswith("final-report-error-analysis-002.md")
    assert theirs["startedBy"].startswith("Alice")
    assert manifest(b)["latestRun"]["seq"] == "002"
    assert not report.exists()
    assert (report.parent / "final-report-error-analysis-002.md").read_text() == "b's report\n"
    assert sync_json(a)["refs"][0]["state"] == "fast-forwarded"


def test_take_theirs_drops_the_local_side_and_keeps_it_under_a_named_ref(shared_task):
    a, b, remote = shared_task
    start(a, "error-analysis")
    sync_json(a)
    start(b, "error-analysis")
    start(b, "requirements-discovery")  # an independent later event: it survives
    mine = git(b, "rev-parse", TASK_REF)
    proc = okstra(b, "sync", "--json")
    take = json.loads(proc.stdout)["conflicts"][0]["choices"][0]["command"]

    proc = run_printed(b, take + " --json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    kept = f"refs/okstra-dropped/tasks/g/i/{mine}"
    assert out["kept"] == [kept] and git(b, "rev-parse", kept) == mine
    assert events(b) == [
        "task new implementation-planning",
        "run start error-analysis",
        "run start requirements-discovery",
    ]
    assert git(b, "log", "-1", "--format=%an", f"{TASK_REF}~1") == "Alice"
    assert remote_ref(remote, TASK_REF) == git(b, "rev-parse", TASK_REF)


def test_a_task_created_on_both_sides_is_named_and_settled_by_taking_theirs(tmp_path: Path):
    a, remote = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    new_task(a)
    sync_json(a)
    new_task(b, kind="error-analysis")
    proc = okstra(b, "sync", "--json")
    assert proc.returncode == 1
    (conflict,) = json.loads(proc.stdout)["conflicts"]
    assert conflict["summary"] == "task p:g:i was created on both sides"
    assert [c["command"] for c in conflict["choices"]] == [
        "git okstra sync origin --task p:g:i --take-theirs task"
    ]
    assert run_printed(b, conflict["choices"][0]["command"]).returncode == 0
    assert git(b, "rev-parse", TASK_REF) == remote_ref(remote, TASK_REF)
    assert manifest(b)["taskType"] == "implementation-planning"


@pytest.fixture
def approved_on_both(tmp_path: Path) -> tuple[Path, Path, Path]:
    """An approved 4-stage task on the remote, fetched by Alice's and Bob's clones."""
    a, remote = pair(tmp_path, "a")
    approved_task(a, KEY, wide_plan(4))
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    sync_json(b)
    for clone, name in ((a, "Alice"), (b, "Bob")):
        git(clone, "config", "user.name", name)
    return a, b, remote


def claim(clone: Path, *args: str) -> dict:
    proc = okstra(clone, "stage", "claim", KEY, "--no-worktree", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_offline_claims_of_different_stages_keep_both_runs_by_renumbering(approved_on_both):
    a, b, remote = approved_on_both
    assert claim(a, "--stage", "1")["runId"] == "implementation-001"
    sync_json(a)
    assert claim(b, "--stage", "2")["runId"] == "implementation-001"  # offline: same number
    proc = okstra(b, "sync", "--json")
    assert proc.returncode == 1
    (conflict,) = json.loads(proc.stdout)["conflicts"]
    assert conflict["summary"] == "run implementation-001 was started on both sides"
    assert f"{CLAIMS}stage-2" in conflict["refs"]
    assert remote_ref(remote, f"{CLAIMS}stage-2") is None  # never published half-settled

    renumber = conflict["choices"][1]["command"]
    assert renumber.endswith("--renumber implementation-001")
    assert run_printed(b, renumber).returncode == 0
    on_remote = refs(remote, CLAIMS)
    assert set(on_remote) == {f"{CLAIMS}stage-1", f"{CLAIMS}stage-2"}
    stage2 = json.loads(git(remote, "show", f"{CLAIMS}stage-2:claim.json"))
    assert stage2["runId"] == "implementation-002" and stage2["user"].startswith("Bob")
    assert "implementation-002" in git(remote, "log", "-1", "--format=%s", f"{CLAIMS}stage-2")
    run = json.loads(git(remote, "show", f"{TASK_REF}:runs/implementation/002.json"))
    assert run["startedBy"].startswith("Bob")
    # Alice's clone sees both claims after its sync, and the stage list agrees.
    sync_json(a)
    listed = json.loads(okstra(a, "stage", "list", KEY, "--json").stdout)["stages"]
    assert [(s["stage"], s["runId"]) for s in listed] == [
        (1, "implementation-001"),
        (2, "implementation-002"),
    ]


def test_the_same_stage_claimed_on_both_offers_only_taking_theirs(approved_on_both):
    a, b, remote = approved_on_both
    claim(a, "--stage", "1")
    sync_json(a)
    claim(b, "--stage", "1")
    mine = git(b, "rev-parse", f"{CLAIMS}stage-1")
    proc = okstra(b, "sync", "--json")
    assert proc.returncode == 1
    (conflict,) = json.loads(proc.stdout)["conflicts"]
    assert [c["command"] for c in conflict["choices"]] == [
        "git okstra sync origin --task p:g:i --take-theirs implementation-001"
    ]
    assert run_printed(b, conflict["choices"][0]["command"]).returncode == 0
    assert git(b, "rev-parse", f"{CLAIMS}stage-1") == remote_ref(remote, f"{CLAIMS}stage-1")
    assert git(b, "rev-parse", f"refs/okstra-dropped/claims/g/i/stage-1/{mine}") == mine
    held = json.loads(git(b, "show", f"{CLAIMS}stage-1:claim.json"))
    assert held["user"].startswith("Alice")


def test_a_renumber_with_nothing_to_renumber_is_bad_input(shared_task):
    _a, b, _remote = shared_task
    proc = okstra(b, "sync", "--task", KEY, "--renumber", "error-analysis-001")
    assert proc.returncode == 2 and "no local-only events" in proc.stderr
    for args in (
        ("--renumber", "x-1"),
        ("--take-theirs", "error-analysis-001"),  # no --task
        ("--task", KEY, "--renumber", "task"),
    ):
        assert okstra(b, "sync", *args).returncode == 2, args
