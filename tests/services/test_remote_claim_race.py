"""Two `stage claim --remote` processes in each of three clones, all at once, through one remote:
real processes racing (conftest.race_jobs), six ready stages.

Within a clone the racers take turns (a lost race is undone before the other local racer
moves the task ref), so every loser is undone completely and either chooses again or exits 3
holding nothing; no stage is ever held by two clones, here or on the remote.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, okstra, race_jobs
from plans import plan_text
from team_world import Team

SIX = plan_text([(n, [], [f"src/part{n}.py"]) for n in range(1, 7)], steps=5)  # a batch: 1
ROUNDS = 2


@pytest.fixture
def team(tmp_path: Path) -> tuple[Team, Path, list[Path]]:
    world = Team.make(tmp_path)
    planner = world.clone("planner", "Pat")
    clones = [world.clone(name, name.title()) for name in ("ann", "bob", "cat")]
    return world, planner, clones


def publish_task(planner: Path, key: str) -> None:
    assert okstra(planner, "task", "new", key, "--type", "implementation-planning").returncode == 0
    plan = planner / "plans" / f"{key.replace(':', '-')}.md"
    plan.parent.mkdir(exist_ok=True)
    plan.write_text(SIX)
    for step in (("plan", "submit", key, str(plan)), ("plan", "approve", key)):
        proc = okstra(planner, *step)
        assert proc.returncode == 0, proc.stderr
    assert okstra(planner, "sync", "origin").returncode == 0


def claims(repo: Path, key: str) -> dict[int, dict]:
    """stage → claim.json of every claim ref of ``key`` in ``repo``."""
    prefix = f"refs/okstra/claims/g/{key.rsplit(':', 1)[1]}/"
    out = git(repo, "for-each-ref", "--format=%(refname)", prefix)
    return {
        int(ref.rsplit("-", 1)[1]): json.loads(git(repo, "show", f"{ref}:claim.json"))
        for ref in out.splitlines()
    }


@pytest.mark.slow
def test_racing_remote_claims_in_one_clone_and_across_clones_never_double_a_stage(team):
    world, planner, clones = team
    lost = 0
    for n in range(ROUNDS):
        key = f"p:g:r{n}"
        publish_task(planner, key)
        for clone in clones:
            assert okstra(clone, "sync", "origin").returncode == 0
        jobs = [(c, ["stage", "claim", key, "--remote", "origin", "--json"]) for c in clones]
        results = race_jobs(jobs + jobs)  # two racers per clone
        lost += sum("another clone claimed first" in proc.stderr for proc in results)
        on_remote = claims(world.remote, key)
        won: dict[int, Path] = {}
        for (clone, _), proc in zip(jobs + jobs, results, strict=True):
            assert "could not be undone" not in proc.stderr, proc.stderr
            assert "internal error" not in proc.stderr, proc.stderr
            assert proc.returncode in (0, 3), (proc.returncode, proc.stdout, proc.stderr)
            if proc.returncode == 0:
                (place,) = json.loads(proc.stdout)["placements"]
                stage = place["stage"]
                assert stage not in won, f"stage {stage} claimed twice"
                won[stage] = clone
                assert on_remote[stage]["runId"] == json.loads(proc.stdout)["runId"]
        assert set(won) == set(on_remote)  # every remote claim has its one winner
        for clone in clones:
            # Nothing kept that the remote does not hold: every local claim is the remote's.
            here = claims(clone, key)
            for stage, record in here.items():
                assert on_remote.get(stage) == record, (clone.name, stage)
            held = {s for s, r in here.items() if r["user"].startswith(clone.name.title())}
            assert held == {s for s, c in won.items() if c == clone}, clone.name
    assert lost > 0, "no racer lost on the remote: the undo path was never taken"
