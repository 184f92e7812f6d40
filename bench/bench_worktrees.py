"""Making a stage worktree of a large tree, beside ``git worktree add`` of the same commit.

A repository whose one commit holds N files (default 30,000, in folders of 100) and a task
whose plan has independent stages, approved, its task worktree made. Interleaved round by
round: ``git okstra stage claim KEY --stage K`` (the claim, and the stage worktree made whole
at its hidden sibling, then moved into place) beside ``git worktree add -q -b BRANCH PATH
COMMIT``. CPU medians of whole processes with their children (``_proc.py``), and wall
medians; each new worktree is deleted after its round, untimed, and the disk synced before
each command (the checkout is nearly all kernel time: the writeback of 30k files made or
deleted just before would be charged to whichever command runs next).

Usage: python bench/bench_worktrees.py [--files N] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, Row, Timed, git, okstra, run, table

GOAL = 1.2
"""A stage worktree: at most this × ``git worktree add`` of the same tree."""

KEY = "bench:wt:big"


def big_commit(repo: Path, files: int) -> str:
    """One commit of ``files`` small files, written by ``git fast-import`` (no checkout)."""
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    lines = [b"commit refs/heads/main\nmark :1\n", b"committer Bench <b@x> 1700000000 +0000\n"]
    lines.append(b"data 4\nbig\n")
    for n in range(files):
        body = f"folder {n // 100} file {n % 100}\n".encode() * 8
        lines.append(f"M 100644 inline d{n // 100:04d}/f{n % 100:03d}.txt\n".encode())
        lines.append(b"data %d\n%s\n" % (len(body), body))
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, env=ENV, input=b"".join(lines), check=True
    )
    git(repo, "reset", "-q", "--hard", "main")
    return git(repo, "rev-parse", "HEAD")


def approve(repo: Path, stages: int, env: dict[str, str]) -> None:
    """The task with ``stages`` independent one-step stages, approved, as a user does it."""
    from tests.plans import plan_text

    plan = repo / "plans" / "big.md"
    plan.parent.mkdir()
    plan.write_text(plan_text([(n, [], [f"src/p{n}.py"]) for n in range(1, stages + 1)], 1))
    exe = okstra()
    for argv in (
        ["task", "new", KEY, "--type", "implementation-planning", "--category", "feature"],
        ["plan", "submit", KEY, str(plan)],
        ["plan", "approve", KEY],
    ):
        run([*exe, *argv], repo, env=env)


def measure(rounds: int, short: bool, files: int | None = None) -> tuple[list[Row], str]:
    files = files or (200 if short else 30_000)
    exe = okstra()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-worktrees-") as tmp:
        root = Path(tmp)
        repo = root / "repo"
        env = {**ENV, "HOME": str(root)}
        commit = big_commit(repo, files)
        git(repo, "config", "okstra.worktreeRoot", str(root / "wt"))
        approve(repo, rounds + 2, env)
        folder = root / "wt" / "bench" / "wt" / "big"
        run([*exe, "stage", "claim", KEY, "--stage", "1"], repo, env=env)  # the task worktree
        samples: dict[str, list[Timed]] = {"ours": [], "git": []}
        for n in range(rounds + 1):
            stage = n + 2
            plain = root / "plain" / f"s{stage}"
            ours = [*exe, "stage", "claim", KEY, "--stage", str(stage)]
            theirs = ["git", "worktree", "add", "-q", "-b", f"plain-{stage}", str(plain), commit]
            for name, argv in (("ours", ours), ("git", theirs))[:: 1 if n % 2 else -1]:
                # The disk's writeback of the last checkout (or of the last round's deletes)
                # lands now, untimed: else whichever command comes next pays for it in sys time.
                os.sync()
                timed = run(argv, repo, env=env)
                if n:  # the first round warms the caches, uncounted
                    samples[name].append(timed)
            made = folder / f"stage-{stage}"
            assert sum(1 for _ in made.glob("d*/*.txt")) == files, made
            for path in (made, plain):
                shutil.rmtree(path)
            git(repo, "worktree", "prune")
    med = {
        (name, what): statistics.median(getattr(t, what) for t in timed)
        for name, timed in samples.items()
        for what in ("cpu", "wall")
    }
    rows = [
        Row(
            f"stage worktree, {files} files (whole process)",
            med[("ours", "cpu")],
            med[("git", "cpu")],
            "ms",
            f"≤ {GOAL:g}× git worktree add",
            med[("ours", "cpu")] <= GOAL * med[("git", "cpu")],
            number=1,
        ),
        Row(
            f"stage worktree, {files} files (wall)",
            med[("ours", "wall")],
            med[("git", "wall")],
            "ms",
            f"≤ {GOAL:g}× git worktree add",
            med[("ours", "wall")] <= GOAL * med[("git", "wall")],
            number=1,
        ),
    ]
    details = (
        f"{files} files, {rounds} round(s), medians in ms (cpu / wall): "
        f"stage claim {med[('ours', 'cpu')]:.0f} / {med[('ours', 'wall')]:.0f}; "
        f"git worktree add {med[('git', 'cpu')]:.0f} / {med[('git', 'wall')]:.0f}"
    )
    return rows, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=30_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    rounds = 1 if args.short else args.rounds
    rows, details = measure(rounds, args.short, None if args.short else args.files)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
