"""Three clones race for the same batch through one remote, 20 rounds (docs/workflow.md,
docs/concurrency-and-sync.md): exactly one winner per stage, the losers' local state clean after
every round, and no event lost once everyone has synced — each clone also records task events
offline between rounds, which its next claim replays onto the remote's chain before publishing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claims_world import approved_task
from conftest import git, okstra
from hooks_world import pair
from sync_world import KEY, TASK_REF, refs, sync_json, wide_plan

CLAIMS = "refs/okstra/claims/g/i/"
ROUNDS = 20
NAMES = ("Alice", "Bob", "Carol")
OFFLINE = {"Alice": "requirements-discovery", "Carol": "error-analysis"}
"""The run each of these clones starts offline before every round (Bob records nothing)."""


@pytest.mark.slow
def test_three_clones_race_for_the_same_batch_for_20_rounds(tmp_path: Path):
    first, remote = pair(tmp_path, "Alice")
    approved_task(first, KEY, wide_plan(ROUNDS * len(NAMES)))
    sync_json(first)
    clones = {"Alice": first}
    for name in NAMES[1:]:
        clones[name], _ = pair(tmp_path, name)
        sync_json(clones[name])
    for name, clone in clones.items():
        git(clone, "config", "user.name", name)
    env = {**os.environ, "OKSTRA_DEBUG": ""}
    argv = [sys.executable, "-m", "okstra_git", "stage", "claim", KEY, "--remote", "origin"]
    argv += ["--no-worktree", "--json"]
    winners: dict[int, str] = {}
    chose_again = 0
    for round_ in range(ROUNDS):
        for name, phase in OFFLINE.items():
            proc = okstra(clones[name], "run", "start", KEY, "--type", phase)
            assert proc.returncode == 0, proc.stderr
        procs = {
            name: subprocess.Popen(argv, cwd=clone, env=env, text=True, stdout=-1, stderr=-1)
            for name, clone in clones.items()
        }
        taken = []
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, (round_, name, err)
            chose_again += "choosing again" in err
            (stage,) = json.loads(out)["stages"]
            assert stage not in winners, f"round {round_}: stage {stage} won twice"
            winners[stage] = name
            taken.append(stage)
        # All three went for the same batch (the lowest ready stage); one won it, the others
        # lost on the remote and took the next ones.
        first_ready = round_ * len(NAMES) + 1
        assert sorted(taken) == list(range(first_ready, first_ready + len(NAMES)))
        on_remote = refs(remote, CLAIMS)
        for name, clone in clones.items():
            # A loser undid its local claim exactly: no claim the remote does not hold.
            assert refs(clone, CLAIMS).items() <= on_remote.items(), (round_, name)
    assert sorted(winners) == list(range(1, ROUNDS * len(NAMES) + 1))

    for clone in clones.values():
        sync_json(clone)
    for clone in clones.values():
        sync_json(clone)
    tip = git(remote, "rev-parse", TASK_REF)
    for name, clone in clones.items():
        assert git(clone, "rev-parse", TASK_REF) == tip, name
        assert refs(clone, CLAIMS) == refs(remote, CLAIMS), name
    subjects = git(remote, "log", "--format=%an %s", TASK_REF).splitlines()
    claimed = [s for s in subjects if " run start implementation " in s]
    assert len(claimed) == ROUNDS * len(NAMES)  # one event per claim, none twice
    for name, phase in OFFLINE.items():
        assert subjects.count(f"{name} run start {phase}") == ROUNDS, name  # none lost
    runs = git(remote, "ls-tree", "--name-only", f"{TASK_REF}:runs/implementation").split()
    assert runs == [f"{n:03d}.json" for n in range(1, ROUNDS * len(NAMES) + 1)]
    for stage, name in winners.items():
        record = json.loads(git(remote, "show", f"{CLAIMS}stage-{stage}:claim.json"))
        assert record["user"].startswith(name) and record["status"] == "started"
        run = record["runId"].removeprefix("implementation-")
        started = json.loads(git(remote, "show", f"{TASK_REF}:runs/implementation/{run}.json"))
        assert started["startedBy"].startswith(name)
    print(f"{chose_again} claims lost on the remote and chose again")
