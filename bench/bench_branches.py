"""What publishing code with claims adds to ``git okstra sync`` (SPEC §14).

A clone holds N tasks, each with four done stage claims, their stage branches and a task
branch, all published once; a copy of it has the same claims but no local branches. In the
same run, interleaved round by round, each runs a steady ``git okstra sync origin`` (nothing to
push: the branch check is all the extra work), beside a plain ``git fetch`` of the same
refspecs as the floor. Medians in milliseconds (wall, whole process), side by side; then the
first sync that publishes every branch. Usage: python bench/bench_branches.py [--tasks N]
[--rounds R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from okstra_git.records.claim import Claim, claim_json  # noqa: E402
from okstra_git.tracking import fetch_refspecs  # noqa: E402

ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
OKSTRA = [sys.executable, "-m", "okstra_git"]


def run(cwd: Path, *argv: str, stdin: str | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=ENV, input=stdin, text=True, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{proc.stderr}")
    return proc.stdout.strip()


def timed(cwd: Path, *argv: str) -> float:
    start = time.perf_counter()
    run(cwd, *argv)
    return (time.perf_counter() - start) * 1000


def world(root: Path, tasks: int) -> tuple[Path, Path]:
    """The clone with branches and its copy without; both synced with one bare remote."""
    run(root, "git", "init", "-q", "--bare", "-b", "main", str(root / "remote.git"))
    clone = root / "clone"
    run(root, "git", "init", "-q", "-b", "main", str(clone))
    (clone / "f").write_text("x\n")
    run(clone, "git", "add", "f")
    run(clone, "git", "commit", "-q", "-m", "init")
    run(clone, "git", "remote", "add", "origin", str(root / "remote.git"))
    head = run(clone, "git", "rev-parse", "HEAD")
    lines = []
    for t in range(tasks):
        for stage in range(1, 5):
            ref = f"refs/okstra/claims/g/t{t}/stage-{stage}"
            record = Claim(
                task_key=f"p:g:t{t}", stage=stage, run_id="implementation-001", status="done",
                started_at="2026-01-01T00:00:00+00:00", host="h", user="Bench <b@x>",
                base_commit=head, started_head_commit=head, worktree_path=f"/wt/t{t}/{stage}",
                branch=f"okstra/g/t{t}/stage-{stage}", batch=[stage], head_commit=head,
                done_at="2026-01-01T00:00:00+00:00",
            )  # fmt: skip
            text = claim_json(record, ref).decode()
            blob = run(clone, "git", "hash-object", "-w", "--stdin", stdin=text)
            tree = run(clone, "git", "mktree", stdin=f"100644 blob {blob}\tclaim.json\n")
            commit = run(clone, "git", "commit-tree", tree, "-m", "done")
            branch = f"refs/heads/okstra/g/t{t}/stage-{stage}"
            lines += [f"create {ref} {commit}", f"create {branch} {head}"]
        lines.append(f"create refs/heads/okstra/g/t{t}/task {head}")
    run(clone, "git", "update-ref", "--stdin", stdin="\n".join(lines) + "\n")
    run(clone, "git", "pack-refs", "--all")
    run(clone, *OKSTRA, "init", "--remote", "origin")
    first = timed(clone, *OKSTRA, "sync", "origin")
    print(f"first sync, publishing {tasks * 4} claims and {tasks * 5} branches: {first:.0f} ms")
    bare = root / "no-branches"
    shutil.copytree(clone, bare, symlinks=True)
    listed = run(bare, "git", "for-each-ref", "--format=delete %(refname)", "refs/heads/okstra/")
    run(bare, "git", "update-ref", "--stdin", stdin=listed + "\n")
    return clone, bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=250)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-branches-") as tmp:
        clone, bare = world(Path(tmp), args.tasks)
        fetch = ["git", "fetch", "-q", "origin", *fetch_refspecs("origin")]
        rows: dict[str, list[float]] = {"with branches": [], "no branches": [], "git fetch": []}
        for _ in range(args.rounds):
            rows["with branches"].append(timed(clone, *OKSTRA, "sync", "origin"))
            rows["no branches"].append(timed(bare, *OKSTRA, "sync", "origin"))
            rows["git fetch"].append(timed(clone, *fetch))
        print(f"steady sync, {args.tasks} tasks, median of {args.rounds} (wall ms):")
        for name, times in rows.items():
            print(f"  {name:<14} {statistics.median(times):7.0f}")
        extra = statistics.median(rows["with branches"]) - statistics.median(rows["no branches"])
        print(f"  the branch check adds {extra:.0f} ms for {args.tasks * 5} local branches")


if __name__ == "__main__":
    main()
