"""What a TAB and ``--version`` cost, as whole processes.

A repository of N tasks (default 20,000, ``bench_tasks.build``, refs packed), listed once
(``task list`` makes the task-list index, as any listing does) and completed once (the keys
are kept for the next TAB). Interleaved round by round:
- ``completion words -- git-okstra stage claim bench:g1`` as the shell scripts run it on
  ``git okstra stage claim bench:g1<TAB>`` (okstra's Python without its site,
  ``views/completion.py``'s ``words_argv``), against its absolute goal, beside
  ``git for-each-ref refs/okstra/tasks/`` (the refs alone, for scale) and the same words through
  the console script (what a TAB ran before, and runs when that Python is gone);
- ``git okstra --version`` beside ``git okstra -h``.
CPU medians (``_proc.py``).

Usage: python bench/bench_completion.py [--tasks N] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, Row, absolute_row, git, interleaved, okstra, ratio_row, run, table
from bench_tasks import build

from okstra_git.core.resources import install_folder
from okstra_git.views.completion import words_argv

LIMIT_MS = 30
"""Completing a task key: at most this many CPU ms."""


def measure(rounds: int, short: bool, tasks: int | None = None) -> tuple[list[Row], str]:
    tasks = tasks or (200 if short else 20_000)
    exe = okstra()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-completion-") as tmp:
        repo = Path(tmp) / "repo"
        build(repo, tasks)
        git(repo, "pack-refs", "--all")  # as git gc leaves them
        git(repo, "config", "okstra.projectId", "bench")
        run([*exe, "task", "list"], repo)
        line = ["--", "git-okstra", "stage", "claim", "bench:g1"]
        tab = [*words_argv(sys.executable, install_folder()), *line]
        for argv in (tab, [*exe, "completion", "words", *line]):
            offered = subprocess.run(argv, cwd=repo, env=ENV, capture_output=True, text=True)
            assert offered.stdout.startswith("bench:g1"), offered.stderr  # keys, not a failure
        commands = {
            "completion of a task key": tab,
            "the same, by the console script": [*exe, "completion", "words", *line],
            "git for-each-ref refs/okstra/tasks/": ["git", "for-each-ref", "refs/okstra/tasks/"],
            "--version": [*exe, "--version"],
            "-h": [*exe, "-h"],
        }
        medians = interleaved(
            {name: (lambda argv=argv: run(argv, repo)) for name, argv in commands.items()}, rounds
        )
    rows = [
        absolute_row(
            f"completion of a task key, {tasks} tasks (whole process)",
            medians["completion of a task key"],
            LIMIT_MS,
            medians["git for-each-ref refs/okstra/tasks/"],
            3,
        ),
        ratio_row("--version (whole process)", medians["--version"], medians["-h"], 1.0, "-h", 3),
    ]
    details = [f"{tasks} tasks, CPU medians of {rounds} rounds, ms"]
    details += [f"  {name:<38} {ms:7.1f}" for name, ms in medians.items()]
    return rows, "\n".join(details)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    rounds = 1 if args.short else args.rounds
    rows, details = measure(rounds, args.short, None if args.short else args.tasks)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
