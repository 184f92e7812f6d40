"""Start-up of the commands agents poll, as whole processes beside ``import pygit2``.

One repository like a real one mid-task (``bench_verify.world``: a task with a plan, done
stages merged into the task worktree), plus an accepted verdict on the task HEAD. Each read
command runs as a user runs it, interleaved with ``python -c 'import pygit2'`` — the floor of
any command that reads the repository with pygit2 — and its CPU median is compared with it;
``plan validate`` and ``--help`` also against their absolute goals, and the import check says
which read commands load jinja2 or jsonschema (none may).

Usage: python bench/bench_cli.py [--rounds R] [--short]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import PYGIT2, Row, absolute_row, interleaved, okstra, ratio_row, rounds_main, run
from bench_push import record_verdict
from bench_verify import KEY, world

LIMIT = 1.3
"""Every read command: at most this many times ``python -c 'import pygit2'``."""


def commands(head: str) -> dict[str, list[str]]:
    reads = {
        "task show --json": ["task", "show", KEY, "--json"],
        "task show": ["task", "show", KEY],
        "task list --json": ["task", "list", "--json"],
        "task list": ["task", "list"],
        "stage ready --json": ["stage", "ready", KEY, "--json"],
        "stage list --json": ["stage", "list", KEY, "--json"],
        "stage list": ["stage", "list", KEY],
        "verify target --json": ["verify", "target", KEY, "--json"],
        "verify target": ["verify", "target", KEY],
        "verify show --json": ["verify", "show", head, "--json"],
        "verify show": ["verify", "show", head],
        "plan status --json": ["plan", "status", KEY, "--json"],
        "plan validate --json": ["plan", "validate", "plan.md", "--json"],
        "plan validate": ["plan", "validate", "plan.md"],
        "clarify status --json": ["clarify", "status", "plan.md", "--json"],
        "--help": ["--help"],
    }
    from okstra_git.cli import declare

    declare.load_all()
    if ("task", "status") in declare.COMMANDS:  # the team flow's command, when it has landed
        reads["task status --json"] = ["task", "status", KEY, "--json"]
    return reads


def measure(rounds: int, short: bool) -> tuple[list[Row], str]:
    with tempfile.TemporaryDirectory(prefix="okstra-bench-cli-") as tmp:
        repo, worktree, _heads, env = world(Path(tmp), 100 if short else 2_000, 4)
        head = record_verdict(repo, KEY, worktree)
        exe = okstra()
        reads = commands(head)
        timers = {
            name: (lambda argv=argv: run([*exe, *argv], repo, env=env, ok=lambda c: c in (0, 1)))
            for name, argv in reads.items()
        }
        timers["python -c 'import pygit2'"] = lambda: run(PYGIT2, repo, env=env)
        medians = interleaved(timers, rounds, 0 if short else 1)
        heavy = []
        for name, argv in reads.items():
            if "--json" not in argv:
                continue
            proc = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "okstra_git", *argv],
                cwd=repo,
                env=env,
                capture_output=True,
            )
            lines = proc.stderr.decode().splitlines()
            loaded = {ln.split("|")[-1].strip().split(".")[0] for ln in lines if "|" in ln}
            heavy += [f"{name} loads {m}" for m in sorted({"jinja2", "jsonschema"} & loaded)]
    floor = medians["python -c 'import pygit2'"]
    rows = [
        ratio_row(f"{name} (whole process)", medians[name], floor, LIMIT, "import pygit2", 6)
        for name in reads
        if name != "--help"
    ]
    rows += [
        absolute_row("plan validate --json (whole process)", medians["plan validate --json"], 50),
        absolute_row("--help (whole process)", medians["--help"], 80),
    ]
    details = [f"CPU medians of {rounds} rounds, ms; python -c 'import pygit2': {floor:.1f}"]
    details += [f"  {name:<24} {ms:7.1f}  {ms / floor:5.2f}x" for name, ms in medians.items()]
    details.append("imports: " + ("; ".join(heavy) if heavy else "no jinja2/jsonschema on --json"))
    return rows, "\n".join(details)


if __name__ == "__main__":
    rounds_main(__doc__, measure, 15)
