"""What publishing code with claims adds to ``git okstra sync`` (docs/concurrency-and-sync.md).

A clone holds N tasks, each with four done stage claims, their stage branches and a task
branch, all published by a first sync; a copy of it has the same claims but no local branches.
Interleaved round by round, each runs a steady ``git okstra sync origin`` (nothing to push:
the branch check is all the extra work), beside a plain ``git fetch`` of the same refspecs as
the floor. CPU medians of whole processes (``_proc.py``).

Usage: python bench/bench_branches.py [--tasks N] [--rounds R]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, Row, interleaved, okstra, ratio_row, run, table

GOAL = 1.25
"""A steady sync with every branch published may cost at most this × one without branches."""


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, input=stdin, text=True, capture_output=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr}")
    return proc.stdout.strip()


def world(root: Path, tasks: int) -> tuple[Path, Path]:
    """The clone with branches and its copy without, both in step with one bare remote."""
    from okstra_git.core.keys import parse_task_key
    from okstra_git.git.repo import GitRepo, RefUpdate
    from okstra_git.records.claim import Claim, claim_commit, claim_ref

    git(root, "init", "-q", "--bare", "-b", "main", str(root / "remote.git"))
    clone = root / "clone"
    git(root, "init", "-q", "-b", "main", str(clone))
    git(clone, "commit", "-q", "--allow-empty", "-m", "init")
    git(clone, "remote", "add", "origin", str(root / "remote.git"))
    repo = GitRepo.open(clone)
    head = repo.resolve_commit("HEAD")
    updates = []
    for t in range(tasks):
        key = parse_task_key(f"p:g:t{t}")
        for stage in range(1, 5):
            record = Claim(
                task_key=f"p:g:t{t}", stage=stage, run_id="implementation-001", status="done",
                started_at="2026-01-01T00:00:00+00:00", host="h", user="Bench <b@x>",
                base_commit=head, started_head_commit=head, worktree_path=f"/wt/t{t}/{stage}",
                branch=f"okstra/g/t{t}/stage-{stage}", batch=[stage], head_commit=head,
                done_at="2026-01-01T00:00:00+00:00",
            )  # fmt: skip
            commit = claim_commit(repo, key, record, None, "done")
            updates.append(RefUpdate(claim_ref(key, stage), commit, None))
            updates.append(RefUpdate(f"refs/heads/okstra/g/t{t}/stage-{stage}", head, None))
        updates.append(RefUpdate(f"refs/heads/okstra/g/t{t}/task", head, None))
    repo.update_refs(updates, "bench")
    git(clone, "pack-refs", "--all")
    run([*okstra(), "init", "--remote", "origin"], clone)
    run([*okstra(), "sync", "origin"], clone)  # publishes every claim and branch
    bare = root / "no-branches"
    shutil.copytree(clone, bare, symlinks=True)
    listed = git(bare, "for-each-ref", "--format=delete %(refname)", "refs/heads/okstra/")
    git(bare, "update-ref", "--stdin", stdin=listed + "\n")
    return clone, bare


def measure(tasks: int, rounds: int) -> tuple[list[Row], str]:
    from okstra_git.core.tracking import fetch_refspecs

    ok = okstra()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-branches-") as tmp:
        clone, bare = world(Path(tmp), tasks)
        fetch = ["git", "fetch", "-q", "origin", *fetch_refspecs("origin")]
        medians = interleaved(
            {
                "branches": lambda: run([*ok, "sync", "origin"], clone),
                "none": lambda: run([*ok, "sync", "origin"], bare),
                "fetch": lambda: run(fetch, clone),
            },
            rounds,
        )
    what = f"steady sync, {tasks * 5} task+stage branches"
    rows = [ratio_row(what, medians["branches"], medians["none"], GOAL, "sync, no branches")]
    details = (
        f"steady sync of {tasks} tasks ({tasks * 4} done claims), CPU ms: with their "
        f"{tasks * 5} branches {medians['branches']:.0f}, without {medians['none']:.0f}, "
        f"git fetch of the same refspecs {medians['fetch']:.0f}"
    )
    return rows, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    rows, details = measure(args.tasks, args.rounds)
    print(details)
    print(table(rows))


if __name__ == "__main__":
    main()
