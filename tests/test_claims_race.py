"""The race: 8 processes claim concurrently on a plan whose ready set has 5 stages, on 50 fresh
tasks. Every stage ends up claimed by exactly one run, no two runs' batches overlap, every run
recorded in a task has its claims (and the other way round), and no lock or half-made ref is
left behind.

Each racer is this file run as a script: it waits for a shared start signal, then walks the
task list in the same order as every other racer, claiming (``--no-worktree``, through the
claim service) until a task has nothing ready, and writes what it won as JSON.
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

STEPS = (3, 3, 2, 2, 1)  # batches of the run budget 8: {1, 2, 3} then {4, 5}
RACERS = 8
TASKS = 50


def five_stage_plan() -> str:
    rows = "\n".join(f"| {n} | Part {n} | {s} | (none) |" for n, s in enumerate(STEPS, 1))
    sections = "\n".join(
        f"### Stage {n} — Part {n}\n"
        + "".join(f"{i}. Step {i} of part {n}.\n" for i in range(1, s + 1))
        + f"\n#### Stage Exit Contract\n- Added/changed files (predicted): `src/part{n}.py`\n"
        for n, s in enumerate(STEPS, 1)
    )
    return (
        "# Five independent parts\n\n- [ ] Approved\n\n## 5.5 Stage Map\n\n"
        "| Stage | Title | Effective steps | Depends-on |\n|---|---|---|---|\n"
        f"{rows}\n\n{sections}"
    )


def race(repo: str, keys: list[str], go: str, out: str) -> None:
    """One racer (runs in its own process)."""
    from okstra_git.errors import Conflict, Refused
    from okstra_git.gitlayer import RefMoved
    from okstra_git.services import claims
    from okstra_git.services.context import open_context

    ctx = open_context(repo)
    parsed = [ctx.key(k) for k in keys]
    wins: list[dict[str, object]] = []
    conflicts = 0
    lost = [0]  # claim transactions that found a ref moved or locked: real collisions
    guarded = claims.update_refs_guarded

    def counting(*args: Any) -> Any:
        try:
            return guarded(*args)
        except RefMoved:
            lost[0] += 1
            raise

    claims.update_refs_guarded = counting  # type: ignore[assignment]
    while not os.path.exists(go):
        time.sleep(0.001)
    for key in parsed:
        while True:
            try:
                result = claims.claim(ctx, key, worktrees=False)
            except Refused:
                break  # nothing ready any more
            except Conflict:
                conflicts += 1
                continue
            wins.append(
                {"key": str(key), "run": result.run_id, "stages": [p.stage for p in result.stages]}
            )
    Path(out).write_text(json.dumps({"wins": wins, "conflicts": conflicts, "lost": lost[0]}))


@pytest.mark.slow
def test_eight_racers_never_share_a_stage(repo: Path, tmp_path: Path) -> None:
    from test_claims import approved_task

    from okstra_git.records.claim import load_claims
    from okstra_git.records.task import require_task
    from okstra_git.services.context import open_context

    plan = five_stage_plan()
    keys = [f"p:race:t{n:02d}" for n in range(TASKS)]
    for key in keys:
        approved_task(repo, key, plan)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                str(repo),
                json.dumps(keys),
                str(go),
                str(tmp_path / f"racer-{i}.json"),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(RACERS)
    ]
    time.sleep(0.5)  # let every racer import and open the repository before the start
    go.write_text("go")
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    outcomes = [json.loads((tmp_path / f"racer-{i}.json").read_text()) for i in range(RACERS)]

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
        assert sorted(by_run.values()) == [[1, 2, 3], [4, 5]]
        # The task records exactly these runs, all running: no run without its claims.
        task = require_task(ctx.repo, key)
        recorded = {
            f"implementation-{name[:-5]}"
            for name in ctx.repo.list_dir(task.head, "runs/implementation")
        }
        assert recorded == set(by_run) == runs_per_task[key_text]
    git_dir = repo / ".git"
    assert not [*(git_dir / "refs").rglob("*.lock"), *git_dir.glob("packed-refs.lock")]
    assert sum(o["conflicts"] for o in outcomes) == 0
    # The processes really raced: several won, and claim transactions collided.
    assert racers_that_won >= 2 and sum(o["lost"] for o in outcomes) > 0


if __name__ == "__main__":
    race(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4])
