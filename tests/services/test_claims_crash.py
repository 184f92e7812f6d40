"""kill -9 in the middle of a claim: afterwards the batch is fully claimed or not at all, no
stage worktree exists without its claim, and a retry succeeds.

The claim process kills itself with SIGKILL at a named point (``OKSTRA_TEST_CRASH_AT``, read in
one place, ``gitlayer.crash_point``): ``in-transaction`` (every ref of the claim transaction
locked, none written) and ``after-refs`` (the transaction landed, no stage worktree yet).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

from claims_world import CLAIMS, KEY, TASK_REF, approved_task, claim_refs, commit_in
from conftest import git, okstra

from okstra_git.services import claims
from okstra_git.services.context import open_context


def crashing_claim(repo: Path, point: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "okstra_git", "stage", "claim", KEY],
        cwd=repo,
        text=True,
        capture_output=True,
        env={**os.environ, "OKSTRA_TEST_CRASH_AT": point},
    )


def locks(repo: Path) -> list[Path]:
    """Ref lock files (the approval gate's own lock file under .git/okstra-locks is not one)."""
    git_dir = repo / ".git"
    return sorted([*(git_dir / "refs").rglob("*.lock"), *git_dir.glob("packed-refs.lock")])


def stage_two_and_three_ready(repo: Path) -> Path:
    """Diamond plan with stage 1 done and merged: the next claim takes the batch 2, 3."""
    folder = approved_task(repo)
    ctx = open_context(repo)
    key = ctx.key(KEY)
    claims.claim(ctx, key)
    commit_in(folder / "stage-1", "schema.py")
    claims.done(ctx, key, 1)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    return folder


def test_killed_inside_the_transaction_claims_nothing(repo: Path) -> None:
    folder = stage_two_and_three_ready(repo)
    refs_before = claim_refs(repo)
    task_before = git(repo, "rev-parse", TASK_REF)

    proc = crashing_claim(repo, "in-transaction")
    assert proc.returncode == -signal.SIGKILL

    # Not claimed: no claim ref moved, the task has no new run, no stage worktree exists.
    assert claim_refs(repo) == refs_before
    assert git(repo, "rev-parse", TASK_REF) == task_before
    assert not (folder / "stage-2").exists() and not (folder / "stage-3").exists()
    assert "stage-2" not in git(repo, "worktree", "list")
    # The killed writer left one lock per ref it held: both claims and the task.
    held = locks(repo)
    assert sorted(p.name for p in held) == ["i.lock", "stage-2.lock", "stage-3.lock"]

    # The first retry is blocked by the stale locks, knows their writer is gone (its writer
    # record is unlocked) and says exactly what to remove.
    blocked = okstra(repo, "stage", "claim", KEY)
    assert blocked.returncode == 3
    gone = f"left by okstra process [0-9]+ on {re.escape(socket.gethostname())}, which was killed"
    assert re.search(gone, blocked.stderr), blocked.stderr
    rm = blocked.stderr.split("Remove them: ")[1].splitlines()[0]
    assert shlex.split(rm) == ["rm", *map(str, held)]
    assert f"hint: {rm}\n" in blocked.stderr  # the same command, alone on its line
    assert claim_refs(repo) == refs_before
    for lock in held:
        lock.unlink()

    retry = okstra(repo, "stage", "claim", KEY, "--json")
    assert retry.returncode == 0, retry.stderr
    # The killed writer's record went with its locks; no record is left behind.
    assert list((repo / ".git" / "okstra-locks" / "writers").iterdir()) == []
    data = json.loads(retry.stdout)
    assert data["stages"] == [2, 3] and data["runId"] == "implementation-002"
    assert (folder / "stage-2").is_dir() and (folder / "stage-3").is_dir()
    assert not locks(repo)


def test_killed_after_the_transaction_is_fully_claimed_and_resumes(repo: Path) -> None:
    folder = stage_two_and_three_ready(repo)

    proc = crashing_claim(repo, "after-refs")
    assert proc.returncode == -signal.SIGKILL

    # Fully claimed: both stages, one run, the run recorded; no worktree yet, no lock left.
    refs = claim_refs(repo)
    assert set(refs) == {f"{CLAIMS}stage-{n}" for n in (1, 2, 3)}
    for n in (2, 3):
        data = json.loads(git(repo, "show", f"{CLAIMS}stage-{n}:claim.json"))
        assert data["status"] == "started" and data["runId"] == "implementation-002"
        assert data["batch"] == [2, 3]
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/002.json"))
    assert run["status"] == "running"
    assert not (folder / "stage-2").exists() and not (folder / "stage-3").exists()
    assert not locks(repo)

    # A plain retry takes nothing held and points at the interrupted run.
    again = okstra(repo, "stage", "claim", KEY)
    assert again.returncode == 1
    resume = f"git okstra stage claim {KEY} --resume implementation-002"
    assert f"make them with: {resume}\n" in again.stderr
    # The hint runs from anywhere (the trial's polish: an own fix is made absolute).
    assert f"hint: git -C {repo} okstra stage claim {KEY} --resume implementation-002\n" in (
        again.stderr
    )

    resumed = okstra(repo, "stage", "claim", KEY, "--resume", "implementation-002", "--json")
    assert resumed.returncode == 0, resumed.stderr
    data = json.loads(resumed.stdout)
    assert data["resumed"] and data["stages"] == [2, 3]
    assert "Execute exactly these Stage Map stages" in data["directive"]
    base = git(folder / "task", "rev-parse", "HEAD")
    for n in (2, 3):
        assert git(folder / f"stage-{n}", "rev-parse", "HEAD") == base
        assert git(folder / f"stage-{n}", "rev-parse", "--abbrev-ref", "HEAD") == (
            f"okstra/g/i/stage-{n}"
        )
    # Idempotent: resuming again changes nothing.
    again = okstra(repo, "stage", "claim", KEY, "--resume", "implementation-002")
    assert again.returncode == 0 and claim_refs(repo) == refs
    unknown = okstra(repo, "stage", "claim", KEY, "--resume", "implementation-009")
    assert unknown.returncode == 1 and "holds no started claim" in unknown.stderr
