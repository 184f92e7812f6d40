"""What every bench shares: timing whole processes by the CPU they use, and the result rows.

A process is timed by the CPU time the kernel accounts to it and to every child it waited for
(``RUSAGE_CHILDREN`` before and after): on a shared, loaded machine that is far steadier than
the wall clock, and a ``git push`` is charged for its hook. Commands compared with each other
run interleaved, round by round, so drift hits them alike; medians are quoted.

Byte-code: an installed package has its ``.pyc`` files; a sandbox that sets
``PYTHONDONTWRITEBYTECODE`` would time the compiler, so ``ENV`` drops it.

Which okstra is timed: importing this module puts the checkout (``ROOT``) on ``sys.path`` —
first, so the benches time the checkout's ``okstra_git``; or, when ``OKSTRA_BENCH_INSTALLED=1``
(``report.py --installed`` sets it), last, so ``okstra_git`` is the one installed in the
running Python (a wheel in a venv) and only the test suite's helpers (``tests/plans.py``) come
from the checkout. Every ``git okstra`` a bench starts is that Python's (``okstra()``).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALLED = os.environ.get("OKSTRA_BENCH_INSTALLED") == "1"
if str(ROOT) not in sys.path:
    if INSTALLED:
        sys.path.append(str(ROOT))
    else:
        sys.path.insert(0, str(ROOT))
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0000",  # the same work makes the same commits
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}
PYGIT2 = [sys.executable, "-c", "import pygit2"]
"""The floor of every command that reads a repository with pygit2."""


def okstra() -> list[str]:
    """argv that runs this installation's ``git okstra``."""
    from okstra_git.core.resources import okstra_command

    return okstra_command()


@dataclass
class Timed:
    cpu: float
    """CPU milliseconds (user + system) of the process and the children it waited for."""
    wall: float
    """Wall-clock milliseconds."""
    out: bytes = b""
    """What the process printed on stdout."""


def run(
    argv: Sequence[str],
    cwd: Path,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    ok: Callable[[int], bool] = lambda code: code == 0,
) -> Timed:
    """Run ``argv`` once; its exit code must satisfy ``ok``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=cwd, env=env or ENV, input=stdin, capture_output=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not ok(proc.returncode):
        raise SystemExit(
            f"{' '.join(argv)} exited {proc.returncode} in {cwd}:\n{proc.stderr.decode()[-2000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(cpu * 1000, wall, proc.stdout)


def interleaved(
    commands: dict[str, Callable[[], Timed]], rounds: int, warmup: int = 1
) -> dict[str, float]:
    """Median CPU ms of each command, run in turn round by round (the first rounds uncounted)."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for n in range(warmup + rounds):
        names = list(commands) if n % 2 else list(reversed(commands))
        for name in names:
            timed = commands[name]()
            if n >= warmup:
                samples[name].append(timed.cpu)
    return {name: statistics.median(values) for name, values in samples.items()}


@dataclass
class Row:
    """One line of the report: what, ours, the baseline, their ratio and the goal."""

    what: str
    ours: float
    baseline: float | None
    unit: str
    goal: str
    met: bool | None
    note: str = ""
    number: int | None = None
    """The goal of issue 25 this row measures (1–6), or None: another issue's, or a detail."""

    @property
    def ratio(self) -> float | None:
        return self.ours / self.baseline if self.baseline else None


def ratio_row(
    what: str, ours: float, baseline: float, limit: float, base_name: str, number: int | None = None
) -> Row:
    """``ours`` must be at most ``limit`` × ``baseline``."""
    met = ours <= limit * baseline
    return Row(what, ours, baseline, "ms", f"≤ {limit:g}× {base_name}", met, number=number)


def absolute_row(
    what: str,
    ours: float,
    limit: float,
    baseline: float | None = None,
    number: int | None = None,
    note: str = "",
) -> Row:
    """``ours`` must be at most ``limit`` ms."""
    return Row(what, ours, baseline, "ms", f"≤ {limit:g} ms", ours <= limit, note, number)


def table(rows: Sequence[Row], markdown: bool = False) -> str:
    """The rows as a fixed-width text table, or (``markdown``) a GitHub-flavoured one."""
    cells = []
    for row in rows:
        cells.append(
            (
                str(row.number) if row.number is not None else "",
                row.what,
                row.unit,
                f"{row.ours:.1f}",
                f"{row.baseline:.1f}" if row.baseline is not None else "—",
                f"{row.ratio:.2f}x" if row.ratio is not None else "—",
                row.goal,
                {True: "yes", False: "NO", None: "—"}[row.met],
                row.note,
            )
        )
    names = ("#", "what", "unit", "ours", "baseline", "ratio", "goal", "met?", "note")
    if markdown:
        lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
        for cell in cells:
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cell) + " |")
        return "\n".join(lines)
    widths = [max(len(c[i]) for c in [names, *cells]) for i in range(len(names) - 1)]
    right = {3, 4, 5}

    def line(cell: Sequence[str]) -> str:
        parts = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i])
            for i, c in enumerate(cell[:-1])
        ]
        return ("  ".join(parts) + (f"  ({cell[-1]})" if cell[-1] else "")).rstrip()

    head = line((*names[:-1], ""))
    return "\n".join([head, "-" * len(head), *(line(c) for c in cells)])


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=ENV, input=stdin, capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr.decode()}")
    return proc.stdout.decode().strip()


def rounds_main(
    doc: str, measure: Callable[[int, bool], tuple[list[Row], str]], rounds: int
) -> None:
    """The command line of a bench measured in ``rounds`` rounds (``--short``: one, small)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    rows, details = measure(1 if args.short else args.rounds, args.short)
    print(details + "\n\n" + table(rows))
