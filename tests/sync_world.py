"""Two clones of one bare remote, and what a sync prints: shared by the sync and team tests."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, okstra
from hooks_world import pair

from okstra_git.services import tasks
from okstra_git.services.context import open_context

KEY = "p:g:i"


TASK_REF = "refs/okstra/tasks/g/i"


def refs(repo: Path, prefix: str) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return dict(line.split(" ") for line in out.splitlines())


def new_task(repo: Path, key: str = KEY, kind: str = "implementation-planning") -> None:
    ctx = open_context(repo)
    tasks.new_task(ctx, ctx.key(key), kind, "feature", None)


def sync_json(repo: Path, *args: str, code: int = 0) -> dict:
    proc = okstra(repo, "sync", *args, "--json")
    assert proc.returncode == code, proc.stderr
    return json.loads(proc.stdout)


def shared_between_two(root: Path) -> tuple[Path, Path, Path]:
    """Alice's and Bob's clones of one bare remote, both holding task KEY from it, and the
    remote."""
    a, remote = pair(root, "a")
    b, _ = pair(root, "b")
    for clone, name in ((a, "Alice"), (b, "Bob")):
        git(clone, "config", "user.name", name)
    new_task(a)
    sync_json(a)
    sync_json(b)
    return a, b, remote


def wide_plan(count: int) -> str:
    """``count`` independent stages of 5 effective steps: a batch (≤ 8) is one stage."""
    rows = [f"| {n} | Part {n} | 5 | (none) |" for n in range(1, count + 1)]
    steps = "".join(f"{i}. Step {i} of `src/part{{n}}.py`.\n" for i in range(1, 6))
    sections = [
        f"### Stage {n} — Part {n}\n{steps.format(n=n)}\n"
        f"#### Stage Exit Contract\n- Added/changed files (predicted): `src/part{n}.py`\n"
        for n in range(1, count + 1)
    ]
    return (
        "# Implementation plan\n\n## User Approval Request\n\n- [x] Approved\n\n"
        "## 5. Clarification Items\n\n- No clarification items.\n\n## 5.5 Stage Map\n\n"
        "| Stage | Title | Effective steps | Depends-on |\n|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\n"
        + "\n".join(sections)
    )
