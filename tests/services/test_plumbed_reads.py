"""The read commands served by git's plumbing (git/plumbed.py) — task show, task list, task
status, stage ready, stage list, verify target, verify show, plan status, plan show — in real
processes: each prints what it prints through GitRepo (pygit2), byte for byte, and never
imports pygit2, whose loading alone is most of their time (issue 25)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_repo
from verify_world import KEY, make_world

PROBE = """
import runpy, sys
backend, *args = sys.argv[1:]
sys.argv = ["git-okstra", *args]
if backend == "pygit2":  # the same command through GitRepo, to compare with
    from okstra_git.services import context
    opened = context.open_context
    context.open_context = lambda start=None, plumbed=False: opened(start)
try:
    runpy.run_module("okstra_git", run_name="__main__")
finally:
    sys.stderr.write("pygit2 loaded\\n" if "pygit2" in sys.modules else "no pygit2\\n")
"""


def probed(cwd: Path, backend: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, backend, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.mark.slow
def test_read_commands_answer_as_gitrepo_does_without_pygit2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    world = make_world(repo, 3)
    world.do_stage(1)
    world.do_stage(2)
    world.merge(1)  # stage 2 done, not merged; stage 3 open
    (world.task_wt / "notes.txt").write_text("uncommitted\n")
    (world.task_wt / "sub").mkdir()
    reads = [
        ("task", "show", KEY),
        ("task", "show", KEY, "--json"),
        ("task", "list"),
        ("task", "list", "--json"),
        ("task", "status", KEY),
        ("task", "status", KEY, "--json"),
        ("stage", "ready", KEY, "--json"),
        ("stage", "list", KEY),
        ("verify", "target", KEY),
        ("verify", "target", KEY, "--json"),
        ("verify", "target", KEY, "--stage", "1", "--json"),
        ("verify", "show", "HEAD"),
        ("plan", "status", KEY, "--json"),
        ("plan", "show", KEY),
    ]
    for where in (repo, world.task_wt / "sub"):
        for argv in reads:
            plumbed = probed(where, "plumbed", *argv)
            through_pygit2 = probed(where, "pygit2", *argv)
            assert plumbed.returncode == through_pygit2.returncode, (argv, plumbed.stderr)
            assert plumbed.stdout == through_pygit2.stdout, argv
            said = plumbed.stderr.rpartition("no pygit2\n")[0]
            assert said == through_pygit2.stderr.rpartition("pygit2 loaded\n")[0], argv
            assert plumbed.stdout.strip() or said.strip(), argv  # it ran (or refused)
            assert plumbed.stderr.endswith("no pygit2\n"), (argv, plumbed.stderr)
            assert through_pygit2.stderr.endswith("pygit2 loaded\n"), argv
    refused = probed(repo, "plumbed", "verify", "target", KEY)
    assert refused.returncode == 1 and "uncommitted" in refused.stderr  # refused: notes.txt
    world.merge(2)
    git(world.task_wt, "add", "notes.txt")
    git(world.task_wt, "commit", "-q", "-m", "notes")
    world.do_stage(3)
    world.merge(3)
    whole = probed(repo, "plumbed", "verify", "target", KEY)
    assert whole.returncode == 0, whole.stderr
    assert whole.stdout == probed(repo, "pygit2", "verify", "target", KEY).stdout
    assert "notes.txt" in whole.stdout and whole.stderr.endswith("no pygit2\n")
