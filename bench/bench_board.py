"""The board of a team's worth of tasks: ``git okstra board`` over N tasks (default 1,000).

A clone holds N tasks in every state the board draws, made with okstra's own services (so
every record is one okstra writes): a fifth still in analysis, the rest with an approved plan
of four stages (1, 2 → 3 → 4; each plan its own file, so each has its own blob and approval)
and, in turn, nothing claimed, stage 1 claimed with a live lease, with a lease that has run
out, or done with a task branch. Every record is published to a bare remote and fetched
back, so each task is also compared with the remote's copy.

Times the whole process ``git okstra board --out FILE`` (CPU and wall-clock medians, beside
``git okstra task list --json`` of the same tasks), and prints the page's size. Goals: under
2 s and under 5 MB for 1,000 tasks.

Usage: python bench/bench_board.py [--tasks N] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import Row, absolute_row, git, okstra, run, table

GOAL_MS = 2000
GOAL_MB = 5
DEPENDS = {1: [], 2: [], 3: [1, 2], 4: [3]}
"""Each plan's Stage Map."""
TITLES = {
    1: "Parse the configuration file",
    2: "Cache parsed results on disk",
    3: "Wire the cache into the CLI",
    4: "Document the cache and its flags",
}


def world(root: Path, count: int) -> Path:
    """The clone holding ``count`` tasks, in step with its remote."""
    from okstra_git.services import claims, plans, tasks
    from okstra_git.services.context import open_context
    from tests.plans import plan_text

    remote, clone = root / "remote.git", root / "clone"
    git(root, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main", str(clone))
    for name, value in (("user.name", "Bench"), ("user.email", "bench@example.invalid")):
        git(clone, "config", name, value)
    git(clone, "commit", "-q", "--allow-empty", "-m", "init")
    git(clone, "remote", "add", "origin", str(remote))
    git(clone, "push", "-q", "origin", "main")
    run([*okstra(), "init", "--remote", "origin", "--worktree-root", str(root / "wt")], clone)
    (clone / "plans").mkdir()
    here = os.getcwd()
    os.chdir(clone)
    try:
        ctx = open_context(clone)
        head = ctx.repo.resolve_commit("HEAD")
        for n in range(count):
            key = ctx.key(f"bench:g{n % 20}:t{n}")
            tasks.new_task(ctx, key, "implementation-planning", "feature", None)
            kind = n % 5
            if kind == 0:
                continue
            plan = f"plans/t{n}.md"
            stages = [(s, deps, [f"src/t{n}/s{s}.py"]) for s, deps in DEPENDS.items()]
            text = plan_text(stages)
            for stage, title in TITLES.items():  # titles as long as people write them
                text = text.replace(f"Part {stage} ", f"{title} ").replace(
                    f"Part {stage}\n", f"{title}\n"
                )
            (clone / plan).write_text(text)
            plans.submit_plan(ctx, key, plan)
            plans.approve_plan(ctx, key)
            if kind == 2:
                claims.claim(ctx, key, stage=1, lease=timedelta(hours=2), worktrees=False)
            elif kind == 3:
                claims.claim(ctx, key, stage=1, lease=timedelta(seconds=1), worktrees=False)
            elif kind == 4:
                claims.claim(ctx, key, stage=1, worktrees=False)
                claims.done(ctx, key, 1, head=head)
                ctx.repo.update_refs([_branch(key.ref_suffix, head)], "bench: task branch")
    finally:
        os.chdir(here)
    run([*okstra(), "sync", "origin"], clone)  # publishes every record, fetches them back
    git(clone, "repack", "-adq")  # as git gc leaves a clone: objects and refs packed
    git(clone, "pack-refs", "--all")
    return clone


def _branch(suffix: str, head: str):
    from okstra_git.git.repo import RefUpdate

    return RefUpdate(f"refs/heads/okstra/{suffix}/task", head, None)


def measure(count: int, rounds: int) -> tuple[list[Row], str]:
    ok = okstra()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-board-") as tmp:
        started = time.perf_counter()
        clone = world(Path(tmp), count)
        built = time.perf_counter() - started
        page = Path(tmp) / "board.html"
        board, listing = [], []
        for n in range(rounds + 1):  # the first round warms the caches, uncounted
            timed = run([*ok, "board", "--out", str(page)], clone)
            listed = run([*ok, "task", "list", "--json"], clone)
            if n:
                board.append(timed)
                listing.append(listed)
        size = page.stat().st_size / 1e6
        text = page.read_text("utf-8")
        articles = text.count('<article class="task"')
        nodes = text.count('<g class="node')
        cpu = statistics.median(t.cpu for t in board)
        wall = statistics.median(t.wall for t in board)
        list_cpu = statistics.median(t.cpu for t in listing)
    if articles != count or nodes != 4 * (count - len(range(0, count, 5))):
        raise SystemExit(f"the board shows {articles} tasks and {nodes} stages, not all of them")
    rows = [
        absolute_row(f"board (whole process), {count} tasks", cpu, GOAL_MS, list_cpu),
        absolute_row(f"board, wall clock, {count} tasks", wall, GOAL_MS),
        Row(f"board page size, {count} tasks", size, None, "MB", f"≤ {GOAL_MB}", size <= GOAL_MB),
    ]
    details = (
        f"{count} tasks ({nodes} stages) built in {built:.0f} s; {rounds} round(s): "
        f"git okstra board {cpu:.0f} CPU ms ({wall:.0f} ms wall clock), beside task list --json "
        f"{list_cpu:.0f} CPU ms; the page is {size:.2f} MB ({size * 1e6 / count / 1e3:.1f} kB a "
        "task)"
    )
    return rows, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    count, rounds = (50, 1) if args.short else (args.tasks, args.rounds)
    rows, details = measure(count, rounds)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
