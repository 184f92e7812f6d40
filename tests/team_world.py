"""Several clones of one project sharing one remote: a bare repository on disk, also served by
a real `git daemon` on 127.0.0.1, and clones made the way a team member makes theirs."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from conftest import git, make_remote, make_repo, okstra
from plans import plan_text

from okstra_git.services import plans, tasks
from okstra_git.services.context import open_context

KEY = "p:g:i"
TASK_REF = "refs/okstra/tasks/g/i"
CLAIMS = "refs/okstra/claims/g/i/"
BRANCHES = "refs/okstra/branches/g/i/"

# Stages 1 and 2 are free, 3 needs 1, 4 needs 2; five steps each, so a batch is one stage.
FOUR_STAGES = plan_text(
    [
        (1, [], ["src/one.py"]),
        (2, [], ["src/two.py"]),
        (3, [1], ["src/three.py"]),
        (4, [2], ["src/four.py"]),
    ],
    steps=5,
)


@dataclass
class Team:
    """The shared remote and the clones made of it so far."""

    root: Path
    """Everything lives under it."""
    remote: Path
    """The bare repository."""
    daemon_url: str = ""
    """The same repository over ``git://`` (empty: no daemon in this world)."""
    facts: dict[str, object] = field(default_factory=dict)
    """What one step of a multi-step test leaves for the next."""

    @classmethod
    def make(cls, root: Path) -> Team:
        remote = root / "remote.git"
        make_remote(make_repo(root / "seed"), remote)
        return cls(root, remote)

    def clone(self, name: str, user: str, daemon: bool = False, *init: str) -> Path:
        """A clone named ``name`` for ``user``, set up with ``git okstra init --remote origin``
        and a worktree root of its own (plus ``init`` options)."""
        where = self.root / name
        source = f"{self.daemon_url}/remote.git" if daemon else str(self.remote)
        # --no-local: objects arrive only through fetches, as on another machine (a local
        # clone would hard-link every object the remote has).
        git(self.root, "clone", "-q", "--no-local", source, str(where))
        git(where, "config", "user.name", user)
        git(where, "config", "user.email", f"{user.lower()}@example.invalid")
        root = self.root / f"wt-{name}"
        proc = okstra(where, "init", "--remote", "origin", "--worktree-root", str(root), *init)
        assert proc.returncode == 0, proc.stderr
        return where

    def on_remote(self, prefix: str) -> dict[str, str]:
        out = git(self.remote, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
        return dict(line.split(" ") for line in out.splitlines())


def run_json(cwd: Path, *args: str, code: int = 0) -> dict:
    """``git okstra ARGS --json`` in ``cwd``: the one JSON object, checked for the exit code."""
    proc = okstra(cwd, *args, "--json")
    assert proc.returncode == code, (args, proc.returncode, proc.stderr, proc.stdout)
    return json.loads(proc.stdout)


def follow(cwd: Path, printed: str) -> subprocess.CompletedProcess[str]:
    """Run a command exactly as the tool printed it (one shell-quoted line)."""
    argv = shlex.split(printed)
    if argv[:2] == ["git", "okstra"]:
        return okstra(cwd, *argv[2:])
    return subprocess.run(
        argv, cwd=cwd, text=True, capture_output=True, env={**os.environ}, stdin=subprocess.DEVNULL
    )


def run_line(printed: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run one printed shell line from ``cwd`` (default: a folder of no repository, so a line
    that only works where it was printed fails): ``git -C DIR okstra …`` runs this checkout's
    CLI in DIR, anything else as it is."""
    argv = shlex.split(printed)
    where = cwd or Path("/")
    if argv[:2] == ["git", "-C"] and argv[3:4] == ["okstra"]:
        return okstra(Path(argv[2]), *argv[4:])
    return subprocess.run(argv, cwd=where, text=True, capture_output=True, stdin=subprocess.DEVNULL)


def run_step(step: dict) -> subprocess.CompletedProcess[str]:
    """Run a ``next`` object's ``argv`` in its ``cwd``, as an agent reading ``--json`` does, and
    check its text form is the same command, runnable from any folder."""
    assert step["argv"] is not None, step
    assert Path(step["cwd"]).is_absolute(), step
    argv = step["argv"]
    assert shlex.split(step["command"])[:3] == [argv[0], "-C", step["cwd"]], step
    assert shlex.split(step["command"])[3:] == argv[1:], step
    if argv[:2] == ["git", "okstra"]:
        return okstra(Path(step["cwd"]), *argv[2:])
    return subprocess.run(
        argv, cwd=step["cwd"], text=True, capture_output=True, stdin=subprocess.DEVNULL
    )


def work_on(worktree: Path, stage: int, author: str) -> str:
    """Commit the stage's file in its worktree; returns the new HEAD."""
    path = worktree / "src" / f"{['one', 'two', 'three', 'four'][stage - 1]}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"STAGE = {stage}  # by {author}\n")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", f"stage {stage} by {author}")
    return git(worktree, "rev-parse", "HEAD")


def stage_report(clone: Path, stage: int, author: str) -> str:
    """A stage report inside the clone's workspace, as an agent writes it; returns its path."""
    rel = f".okstra/tasks/g/i/runs/implementation/reports/stage-{stage}.md"
    (clone / rel).parent.mkdir(parents=True, exist_ok=True)
    (clone / rel).write_text(f"# Stage {stage}\n\nStage {stage} report by {author}.\n")
    return rel


def approve_here(repo: Path, text: str, key: str = KEY) -> str:
    """Create the task, commit its plan, submit and approve it (method B) in ``repo``; returns
    the plan's path. Nothing about worktrees is configured: the defaults are under test."""
    ctx = open_context(repo)
    task_key = ctx.key(key)
    tasks.new_task(ctx, task_key, "implementation-planning", "feature", None)
    path = repo / "plans" / f"{task_key.task_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    plans.submit_plan(ctx, task_key, str(path))
    plans.approve_plan(ctx, task_key)
    git(repo, "add", "plans")
    git(repo, "commit", "-q", "-m", "plan")
    return str(path.relative_to(repo))


TWO_FREE = plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])])
