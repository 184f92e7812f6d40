"""The commands served by git's plumbing (git/plumbed.py) — ``stage claim --remote``, ``stage
done``, ``stage claim --no-worktree`` — in real processes: they do their work (the remote
holds the claim, then the done) and never import pygit2, whose loading alone would cost them
their speed goal (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git
from team_world import Team
from test_remote_claim_race import claims, publish_task

from okstra_git.records.base import CHECK_OWN_RECORDS

PROBE = """
import runpy, sys
sys.argv = ["git-okstra", *sys.argv[1:]]
try:
    runpy.run_module("okstra_git", run_name="__main__")
finally:
    sys.stderr.write("pygit2 loaded\\n" if "pygit2" in sys.modules else "no pygit2\\n")
"""


def probed(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``git okstra ARGS`` in a process of its own, its stderr ending in whether it loaded
    pygit2."""
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def test_remote_claims_and_dones_and_lone_claims_load_no_pygit2(tmp_path: Path) -> None:
    world = Team.make(tmp_path)
    planner = world.clone("planner", "Pat")
    ann = world.clone("ann", "Ann")
    key = "p:g:plumbed"
    publish_task(planner, key)
    assert probed(ann, "sync", "origin").returncode == 0

    claimed = probed(ann, "stage", "claim", key, "--stage", "1", "--remote", "origin",
                     "--no-worktree", "--json")  # fmt: skip
    assert claimed.returncode == 0, claimed.stderr
    assert claimed.stderr.endswith("no pygit2\n"), claimed.stderr
    run = json.loads(claimed.stdout)["runId"]
    assert claims(world.remote, key)[1]["runId"] == run == "implementation-001"
    assert claims(ann, key)[1] == claims(world.remote, key)[1]

    work = git(ann, "commit-tree", git(ann, "rev-parse", "HEAD^{tree}"), "-p", "HEAD", "-m", "w")
    done = probed(ann, "stage", "done", key, "--stage", "1", "--head", work, "--remote", "origin")
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("no pygit2\n"), done.stderr
    on_remote = claims(world.remote, key)[1]
    assert on_remote["status"] == "done" and on_remote["headCommit"] == work
    assert git(world.remote, "rev-parse", "refs/okstra/branches/g/plumbed/stage-1") == work

    lone = probed(ann, "stage", "claim", key, "--stage", "2", "--no-worktree")
    assert lone.returncode == 0, lone.stderr
    assert lone.stderr.endswith("no pygit2\n"), lone.stderr
    assert claims(ann, key)[2]["runId"] == "implementation-002"
    assert 2 not in claims(world.remote, key)  # claimed here alone
    assert git(ann, "fsck", "--strict", "--no-dangling") == ""


HEAVY = ("typing", "tempfile", "shutil", "random", "threading", "subprocess")
"""Modules a claim or done through a remote does without: together ~10% of its own process
(instruction counts, issue 25 goal 5): typing through annotations only, tempfile (and shutil,
random) for a temp file's name, threading for one thread-local."""

LISTED = f"""
import runpy, sys
sys.argv = ["git-okstra", *sys.argv[1:]]
try:
    runpy.run_module("okstra_git", run_name="__main__")
finally:
    sys.stderr.write("loaded: " + " ".join(m for m in {HEAVY!r} if m in sys.modules) + "\\n")
"""


def test_remote_claims_and_dones_load_no_typing_tempfile_or_threading(tmp_path: Path) -> None:
    world = Team.make(tmp_path)
    planner = world.clone("planner", "Pat")
    ann = world.clone("ann", "Ann")
    key = "p:g:lean"
    publish_task(planner, key)
    assert probed(ann, "sync", "origin").returncode == 0

    def listed(*args: str) -> subprocess.CompletedProcess[str]:
        # -S: no site, whose .pth files may load any of them first (sys.path is passed on);
        # and as a user runs it, without the suite's schema check of its own records.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), CHECK_OWN_RECORDS: ""}
        argv = [sys.executable, "-S", "-c", LISTED, *args]
        return subprocess.run(argv, cwd=ann, capture_output=True, text=True, env=env)

    claimed = listed("stage", "claim", key, "--stage", "1", "--remote", "origin", "--no-worktree")
    assert claimed.returncode == 0, claimed.stderr
    assert claimed.stderr.endswith("loaded: \n"), claimed.stderr
    assert claims(world.remote, key)[1]["runId"] == "implementation-001"  # it wrote its files
    manifests = ann / ".okstra" / "tasks" / "g" / "lean" / "runs" / "implementation" / "manifests"
    assert [p.name for p in manifests.iterdir()] == ["run-manifest-implementation-001.json"]

    work = git(ann, "commit-tree", git(ann, "rev-parse", "HEAD^{tree}"), "-p", "HEAD", "-m", "w")
    done = listed("stage", "done", key, "--stage", "1", "--head", work, "--remote", "origin")
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("loaded: \n"), done.stderr
    assert claims(world.remote, key)[1]["status"] == "done"


SYNCING = ("okstra_git.services.sync.engine", "okstra_git.services.sync.reconcile")


def test_a_claim_in_step_with_its_task_reads_that_task_alone(tmp_path: Path) -> None:
    """A claim through a remote that holds the task's refs (task, claims, branches) and the
    notes as this clone fetched them last fetches nothing and loads no sync engine: one
    for-each-ref of the task's refs, not a listing of every task's. Once the remote moved the
    task (another clone claimed a stage), the next claim fetches and reconciles: it never
    takes the other's stage, and its lease is on what the remote holds. A task that moved
    only on the remote is not this claim's to fetch: ``sync`` brings it."""
    world = Team.make(tmp_path)
    planner = world.clone("planner", "Pat")
    ann, bob = world.clone("ann", "Ann"), world.clone("bob", "Bob")
    key, other = "p:g:step", "p:g:other"
    publish_task(planner, key)
    publish_task(planner, other)
    for clone in (ann, bob):
        assert probed(clone, "sync", "origin").returncode == 0
    # -S and no record schema check: as a user runs it (see the test above)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), CHECK_OWN_RECORDS: ""}
    probe = LISTED.replace(repr(HEAVY), repr(SYNCING))

    def claim(clone: Path, stage: int, on: str = key) -> subprocess.CompletedProcess[str]:
        argv = ["stage", "claim", on, "--stage", str(stage), "--remote", "origin", "--no-worktree"]
        return subprocess.run(
            [sys.executable, "-S", "-c", probe, *argv],
            cwd=clone,
            capture_output=True,
            text=True,
            env=env,
        )

    first = claim(ann, 1)
    assert first.returncode == 0, first.stderr
    assert first.stderr.endswith("loaded: \n"), first.stderr  # in step: nothing fetched
    assert claims(world.remote, key)[1] == claims(ann, key)[1]

    # bob claims stage 2 of the task, and of the other task stage 1: ann's copies are behind.
    for stage, on in ((2, key), (1, other)):
        assert claim(bob, stage, on).returncode == 0
    tracked_other = "refs/okstra-remotes/origin/claims/g/other/stage-1"
    assert git(ann, "for-each-ref", tracked_other) == ""
    third = claim(ann, 3)
    assert third.returncode == 0, third.stderr
    assert "okstra_git.services.sync.engine" in third.stderr  # the task moved: fetched
    mine, remote = claims(ann, key), claims(world.remote, key)
    assert mine[2] == remote[2] and mine[2]["runId"] != mine[3]["runId"]  # bob's, known here
    assert remote[3] == mine[3] and remote[1] == mine[1]
    assert git(ann, "for-each-ref", tracked_other) != ""  # the fetch brought every task

    assert claim(bob, 2, other).returncode == 0  # only the other task moves on the remote
    fourth = claim(ann, 4)
    assert fourth.returncode == 0 and fourth.stderr.endswith("loaded: \n"), fourth.stderr
    assert claims(world.remote, key)[4] == claims(ann, key)[4]
    later = tracked_other.replace("stage-1", "stage-2")
    assert git(ann, "for-each-ref", later) == ""
    assert probed(ann, "sync", "origin").returncode == 0
    assert git(ann, "for-each-ref", later) != ""
    assert git(ann, "fsck", "--strict", "--no-dangling") == ""
