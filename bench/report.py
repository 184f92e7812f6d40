"""Every goal of issue 25 (goals 1–6) in one table, from one run.

Columns: the goal's number, what is measured, its unit, ours, the baseline measured in the same
run, their ratio, the goal and whether it is met. The rows of issue 25's goals come first, in
its order; then the rest the same benches measure (details, and goals of earlier issues). Each
bench prints its details above the table, with the machine's load (``/proc/loadavg``) when it
started: on a shared machine read the ratios, not the absolute times. Timings are CPU medians
of whole processes (``_proc.py``) unless the row says wall.

Usage: python bench/report.py [--short] [--all] [--only NAME ...] [--installed] [--markdown F]

- ``--short``: every bench small and once. It proves they still run (CI does this through
  tests/test_bench.py, with no timing asserted); its numbers mean nothing.
- ``--all``: also the benches of issue 14's other goals (branches, team, board).
- ``--markdown F``: also write the header and the table, as Markdown, to F.
- ``--installed``: time the okstra installed in the Python running this script (a wheel in a
  venv), not the checkout's: the checkout only lends the benches and ``tests/plans.py``. The
  report stops if ``okstra_git`` would still come from the checkout.

The full report on a wheel install, as issue 25 asks (from the checkout's top folder)::

    rm -rf /tmp/wheel /tmp/benchvenv
    python3 -m pip wheel --no-deps -w /tmp/wheel .
    python3 -m venv /tmp/benchvenv && /tmp/benchvenv/bin/pip install -U pip
    /tmp/benchvenv/bin/pip install /tmp/wheel/*.whl
    env -u PYTHONPATH /tmp/benchvenv/bin/python bench/report.py --installed --markdown table.md

The venv's pip is brought up to date first, because pip writes the ``git-okstra`` console
script that every whole-process row starts: before pip 25.0 (and so with the pip that Python
3.11's and 3.12's ``venv`` bundle) that script imports ``re`` and compiles a pattern before
okstra's first line, ~26M instructions, 8 ms of ``ci check``'s 40. pip 25.0 and later, uv
and pipx (which keeps its pip current) write a script without it. The header names the script
the report timed.

Sizes of the full run: a 30,000-file tree (goal 1), 20,000 task refs for sync (10,000 each
way, goal 2) and completion (goal 3), 8 racing claimers in 3 races of each kind (goal 4),
500 other tasks on the remote (goal 5), a 50,000-commit history at 50 and 200 stages and
100,000 tasks for ``task list`` (goal 6). It takes about half an hour on a 2-core machine.
"""

from __future__ import annotations

import os
import sys

if "--installed" in sys.argv:  # before _proc puts the checkout on sys.path: after the venv's
    os.environ["OKSTRA_BENCH_INSTALLED"] = "1"

import argparse
import platform
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ROOT, Row, okstra, table


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

    return bench_claims.measure(*((1, 2, 2, 1) if short else (15, 40, 8, 3)))


def _sync(short: bool):
    import bench_sync

    return bench_sync.measure(short, None if short else 20_000)


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

    return bench_worktrees.measure(1 if short else 6, short)


def _completion(short: bool):
    import bench_completion

    return bench_completion.measure(1 if short else 15, short)


def _remote(short: bool):
    import bench_remote

    return bench_remote.measure(1 if short else 7, short)


Bench = Callable[[bool], tuple[list[Row], str]]
BENCHES: dict[str, Bench] = {
    "worktrees": _worktrees,  # goal 1
    "sync": _sync,  # goal 2
    "completion": _completion,  # goal 3
    "claims": _claims,  # goal 4
    "remote": _remote,  # goal 5
    "push": _push,  # goal 6: the hook, ci check
    "cli": _cli,  # goal 6: read commands
    "verify": _verify,  # goal 6
    "tasks": _tasks,  # goal 6: task list at 100k
}
"""The benches of issue 25's goals, in the order of its goals."""
OTHERS: dict[str, Bench] = {"branches": _branches, "team": _team, "board": _board}
"""The benches of issue 14's other goals (``--all``)."""


def load() -> str:
    """The load averages (1, 5, 15 minutes) and the number of processors."""
    with open("/proc/loadavg") as fh:
        one, five, fifteen = fh.read().split()[:3]
    return f"load {one} {five} {fifteen} on {os.cpu_count()} cpus"


def which_okstra(installed: bool) -> str:
    """Which okstra is timed, said in one line; with ``installed``, stops on the checkout's."""
    import okstra_git

    where = Path(okstra_git.__file__).resolve()
    exe = okstra()
    if installed and (where.is_relative_to(ROOT) or not where.is_relative_to(sys.prefix)):
        raise SystemExit(
            f"--installed: okstra_git comes from {where}, not from {sys.prefix}'s site-packages "
            "(unset PYTHONPATH, and run this with the venv's python)"
        )
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    return (
        f"okstra {okstra_git.__version__} from {where.parent} (runs as {' '.join(exe)}"
        f"{console_script(exe[0])}); Python {platform.python_version()}; {git}"
    )


def console_script(exe: str) -> str:
    """Whether the console script imports ``re`` (pip before 25.0 writes one that does),
    said in a few words; nothing when ``exe`` is no Python script."""
    try:
        with open(exe, "rb") as script:
            head = script.read(4096)
    except OSError:
        return ""
    if not head.startswith(b"#!") or b"python" not in head.split(b"\n", 1)[0]:
        return ""
    if b"\nimport re\n" in head:
        return ", a console script that imports re: pip < 25.0 wrote it"
    return ", a console script without re"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    parser.add_argument("--all", action="store_true", help="also issue 14's other benches")
    every = {**BENCHES, **OTHERS}
    parser.add_argument("--only", nargs="+", choices=list(every), help="these benches alone")
    parser.add_argument("--installed", action="store_true", help="time the installed okstra")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown here")
    args = parser.parse_args()
    names = args.only or [*BENCHES, *(OTHERS if args.all else ())]
    header = [
        which_okstra(args.installed),
        f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}; {platform.node()}; {load()} at the start",
    ]
    print("\n".join(header) + "\n", flush=True)
    rows: list[Row] = []
    for name in names:
        started, at_start = time.perf_counter(), load()
        found, details = every[name](args.short)
        rows += found
        took = time.perf_counter() - started
        print(f"== {name} ({took:.0f} s; {at_start} at its start)\n{details}\n", flush=True)
    header.append(f"{load()} at the end")
    ordered = sorted((r for r in rows if r.number), key=lambda r: r.number or 0)
    ordered += [r for r in rows if not r.number]
    print(header[-1] + "\n\n" + table(ordered))
    met = [r for r in ordered if r.number and r.met is not None]
    summary = f"issue 25: {sum(1 for r in met if r.met)} of {len(met)} goal rows met"
    print("\n" + summary)
    if args.short:
        print("\n(--short: small sizes, one round; the numbers are not measurements)")
    if args.markdown:
        body = [*header, "", table(ordered, markdown=True), "", summary]
        if args.short:
            body.append("(--short: small sizes, one round; the numbers are not measurements)")
        args.markdown.write_text("\n".join(body) + "\n")


if __name__ == "__main__":
    main()
