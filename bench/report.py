"""Every bench in one run, and every goal of issues 14 and 25 in one table.

Columns: what is measured, ours, the baseline measured in the same run, their ratio, the goal
and whether it is met. Each bench also prints its details above the table. Timings are CPU
medians of whole processes (``_proc.py``), unless the unit says otherwise.

Usage: python bench/report.py [--short] [--only NAME ...]
``--short`` runs every bench small and once: it proves they still run (CI does this through
tests/test_bench.py); its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _proc import table


def _push(short: bool):
    import bench_push

    return bench_push.measure(1 if short else 25, short)


def _cli(short: bool):
    import bench_cli

    return bench_cli.measure(1 if short else 15, short)


def _verify(short: bool):
    import bench_verify

    return bench_verify.measure(short)


def _tasks(short: bool):
    import bench_tasks

    return bench_tasks.measure(200 if short else 100_000, 1 if short else 5)


def _claims(short: bool):
    import bench_claims

    return bench_claims.measure(*((1, 2, 2) if short else (15, 40, 8)))


def _sync(short: bool):
    import bench_sync

    return bench_sync.measure(short)


def _branches(short: bool):
    import bench_branches

    return bench_branches.measure(*((3, 1) if short else (250, 9)))


def _team(short: bool):
    import bench_team

    return bench_team.measure(short)


def _board(short: bool):
    import bench_board

    return bench_board.measure(*((50, 1) if short else (1000, 3)))


def _worktrees(short: bool):
    import bench_worktrees

    return bench_worktrees.measure(1 if short else 5, short)


def _completion(short: bool):
    import bench_completion

    return bench_completion.measure(1 if short else 15, short)


def _remote(short: bool):
    import bench_remote

    return bench_remote.measure(1 if short else 7, short)


BENCHES = {
    "push": _push,
    "cli": _cli,
    "verify": _verify,
    "tasks": _tasks,
    "claims": _claims,
    "sync": _sync,
    "branches": _branches,
    "team": _team,
    "board": _board,
    "worktrees": _worktrees,
    "completion": _completion,
    "remote": _remote,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    parser.add_argument("--only", nargs="+", choices=list(BENCHES), default=list(BENCHES))
    args = parser.parse_args()
    rows = []
    for name in args.only:
        started = time.perf_counter()
        found, details = BENCHES[name](args.short)
        rows += found
        took = time.perf_counter() - started
        print(f"== {name} ({took:.0f} s)\n{details}\n", flush=True)
    print(table(rows))
    if args.short:
        print("\n(--short: small sizes, one round; the numbers are not measurements)")


if __name__ == "__main__":
    main()
