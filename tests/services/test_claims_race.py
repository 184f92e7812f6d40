"""The race: 8 processes claim concurrently on a plan whose ready set has 5 stages, on 20 fresh
tasks. Every stage ends up claimed by exactly one run, no two runs' batches overlap, every run
recorded in a task has its claims (and the other way round), and no lock or half-made ref is
left behind. A smaller race with worktrees on shows that racers all making a task's worktree
queue for it instead of failing.

Each racer is this file run as a script: it waits for a shared start signal, then walks the
task list in the same order as every other racer, claiming (through the claim service) until a
task has nothing ready, and writes what it won as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from plans import plan_text

# Five independent stages of 2 steps: the run budget 8 makes the batches {1, 2, 3, 4} then {5}.
FIVE_STAGE_PLAN = plan_text([(n, [], [f"src/part{n}.py"]) for n in range(1, 6)], steps=2)
BATCHES = [[1, 2, 3, 4], [5]]
RACERS = 8
TESTS = str(Path(__file__).resolve().parents[1])  # the racers import the test worlds
TASKS = 20


def race(
    repo: str, keys: list[str], go: str, out: str, worktrees: bool, plumbed: bool = False
) -> None:
    """One racer (runs in its own process); ``plumbed``: through git's plumbing backend."""
    from okstra_git.core.errors import Conflict, Refused
    from okstra_git.git.repo import GitRepo, RefMoved
    from okstra_git.services import claims
    from okstra_git.services.context import open_context

    ctx = open_context(repo, plumbed=plumbed)
    backend = type(ctx.repo)
    assert issubclass(backend, GitRepo) and (backend is not GitRepo) == plumbed
    parsed = [ctx.key(k) for k in keys]
    wins: list[dict[str, object]] = []
    conflicts = 0
    refusals: list[str] = []  # other than "nothing ready": a racer tripped over another
    lost = [0]  # claim transactions that collided with another (counted below)
    guarded = backend.update_refs_guarded

    def counting(self: GitRepo, *args: Any) -> Any:
        try:
            return guarded(self, *args)
        except RefMoved:
            lost[0] += 1
            raise

    backend.update_refs_guarded = counting  # type: ignore[method-assign]
    while not os.path.exists(go):
        time.sleep(0.001)
    for key in parsed:
        while True:
            try:
                result = claims.claim(ctx, key, worktrees=worktrees)
            except Refused as refused:
                if "is ready to claim" not in str(refused):
                    refusals.append(str(refused))
                break  # nothing ready any more
            except Conflict:
                conflicts += 1
                continue
            wins.append(
                {"key": str(key), "run": result.run_id, "stages": [p.stage for p in result.stages]}
            )
    from okstra_git.git.reflocks import waited

    # A collision: a ref found moved or locked, or another writer ahead in the writers' queue.
    lost[0] += waited[0]
    result = {"wins": wins, "conflicts": conflicts, "lost": lost[0], "refusals": refusals}
    Path(out).write_text(json.dumps(result))


def run_racers(
    repo: Path, tmp_path: Path, keys: list[str], racers: int, worktrees: bool, plumbed: bool = False
) -> list[dict[str, Any]]:
    """Approve a five-stage plan on every task, start the racers at once, collect outcomes."""
    from claims_world import approved_task

    for key in keys:
        approved_task(repo, key, FIVE_STAGE_PLAN)
    go = tmp_path / "go"
    outs = [tmp_path / f"racer-{i}.json" for i in range(racers)]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, str(repo), json.dumps(keys), str(go), str(out)]
            + (["--worktrees"] if worktrees else [])
            + (["--plumbed"] if plumbed else []),
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([TESTS, *sys.path])},
            text=True,
        )
        for out in outs
    ]
    time.sleep(0.5)  # let every racer import and open the repository before the start
    go.write_text("go")
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    outcomes = [json.loads(out.read_text()) for out in outs]
    assert [r for o in outcomes for r in o["refusals"]] == []
    assert sum(o["conflicts"] for o in outcomes) == 0
    return outcomes


@pytest.mark.slow
@pytest.mark.parametrize("plumbed", [False, True], ids=["pygit2", "plumbed"])
def test_eight_racers_never_share_a_stage(repo: Path, tmp_path: Path, plumbed: bool) -> None:
    from okstra_git.records.claim import load_claims
    from okstra_git.records.task import require_task
    from okstra_git.services.context import open_context

    keys = [f"p:race:t{n:02d}" for n in range(TASKS)]
    outcomes = run_racers(repo, tmp_path, keys, RACERS, worktrees=False, plumbed=plumbed)

    ctx = open_context(repo)
    won_by: dict[tuple[str, int], str] = {}
    runs_per_task: dict[str, set[str]] = defaultdict(set)
    for outcome in outcomes:
        for win in outcome["wins"]:
            runs_per_task[win["key"]].add(win["run"])
            for stage in win["stages"]:
                other = won_by.setdefault((win["key"], stage), win["run"])
                assert other == win["run"], f"{win['key']} stage {stage}: {other} and {win['run']}"
    racers_that_won = sum(1 for o in outcomes if o["wins"])
    for key_text in keys:
        key = ctx.key(key_text)
        stored = load_claims(ctx.repo, key)
        # Every stage claimed, by exactly the run whose process reported winning it.
        assert sorted(stored) == [1, 2, 3, 4, 5]
        by_run: dict[str, list[int]] = defaultdict(list)
        for number, state in sorted(stored.items()):
            assert state.claim.status == "started"
            assert won_by[(key_text, number)] == state.claim.run_id
            by_run[state.claim.run_id].append(number)
        # Each run's batch is exactly the stages it holds: no overlap, nothing half-claimed.
        for run, numbers in by_run.items():
            for number in numbers:
                assert stored[number].claim.batch == sorted(numbers), (key_text, run)
        assert sorted(by_run.values()) == BATCHES
        # The task records exactly these runs, all running: no run without its claims.
        task = require_task(ctx.repo, key)
        recorded = {
            f"implementation-{name[:-5]}"
            for name in ctx.repo.list_dir(task.head, "runs/implementation")
        }
        assert recorded == set(by_run) == runs_per_task[key_text]
    git_dir = repo / ".git"
    assert not [*(git_dir / "refs").rglob("*.lock"), *git_dir.glob("packed-refs.lock")]
    # The processes really raced: several won, and claim transactions collided.
    assert racers_that_won >= 2 and sum(o["lost"] for o in outcomes) > 0


@pytest.mark.slow
def test_racers_making_one_task_worktree_queue_for_it(repo: Path, tmp_path: Path) -> None:
    """Every racer's first claim of a task makes the task worktree (before the transaction):
    they wait for the first maker, then find its worktree."""
    from conftest import git

    keys = [f"p:wt:t{n}" for n in range(5)]
    outcomes = run_racers(repo, tmp_path, keys, 4, worktrees=True)
    batches = sorted((w["key"], tuple(w["stages"])) for o in outcomes for w in o["wins"])
    assert batches == [(k, tuple(b)) for k in keys for b in BATCHES]
    for n in range(len(keys)):
        folder = repo.parent / "wt" / "p" / "wt" / f"t{n}"
        for leaf in ("task", "stage-1", "stage-2", "stage-3", "stage-4", "stage-5"):
            branch = git(folder / leaf, "rev-parse", "--abbrev-ref", "HEAD")
            assert branch == f"okstra/wt/t{n}/{leaf}"


if __name__ == "__main__":
    race(
        sys.argv[1],
        json.loads(sys.argv[2]),
        sys.argv[3],
        sys.argv[4],
        "--worktrees" in sys.argv,
        "--plumbed" in sys.argv,
    )


def test_a_task_s_writers_share_one_queue_and_other_tasks_mostly_another(tmp_path: Path):
    from okstra_git.git.reflocks import QUEUE_BUCKETS, queue_path

    task = "refs/okstra/tasks/g/one"
    assert queue_path(tmp_path, task) == queue_path(tmp_path, task)
    buckets = {queue_path(tmp_path, f"refs/okstra/tasks/g/t{n}") for n in range(200)}
    assert len(buckets) > QUEUE_BUCKETS // 2  # spread: claims of other tasks go side by side
