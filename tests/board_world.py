"""A repository whose board shows every stage state: built with the real CLI.

``p:g:plain`` has no plan. ``p:g:work`` has an approved plan 1, 2 → 3 → 4 (3 needs 1, 4 needs
2 and 3; a title holds markup that must stay text): stage 1 done and merged into the task
worktree, stage 2 claimed with a one-second lease that has run out, stage 3 ready, stage 4
blocked. ``p:g:<b>x</b>`` (a key holding markup) has a plan and nothing claimed.
"""

from __future__ import annotations

import time
from pathlib import Path

from conftest import git, make_repo, okstra
from plans import plan_text

PLAIN, WORK, MARKUP = "p:g:plain", "p:g:work", "p:g:<b>x</b>"
HOSTILE_TITLE = '<img src=x onerror="window.__pwned = 1">'
MD_TITLE = "Keep the `approval_state` row **open**"
"""A stage title with inline Markdown (the plan reader drops the ``**``): the board's table shows
the code span as code, its graph the text."""
DEPENDS = {1: [], 2: [], 3: [1], 4: [2, 3]}
STATES = {1: "merged", 2: "started", 3: "ready", 4: "blocked"}
USER = "Test User <test@example.invalid>"
"""Who claims (the identity conftest gives every test)."""


def run(cwd: Path, *args: str) -> str:
    proc = okstra(cwd, *args)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def in_flight(root: Path) -> Path:
    repo = make_repo(root / "repo")
    run(repo, "init", "--project-id", "p", "--worktree-root", str(root / "wt"))
    plan = plan_text([(n, deps, [f"src/s{n}.py"]) for n, deps in DEPENDS.items()])
    plan = plan.replace("| 3 | Part 3 |", f"| 3 | Part 3 {HOSTILE_TITLE} |")
    (repo / "plans").mkdir()
    (repo / "plans" / "work.md").write_text(plan)
    markup = plan_text([(1, [], ["src/m.py"])])
    (repo / "plans" / "markup.md").write_text(
        markup.replace("| 1 | Part 1 |", f"| 1 | {MD_TITLE} |")
    )
    git(repo, "add", "plans")
    git(repo, "commit", "-q", "-m", "plans")
    for key, path in ((PLAIN, None), (WORK, "plans/work.md"), (MARKUP, "plans/markup.md")):
        run(repo, "task", "new", key, "--type", "implementation-planning")
        if path is not None:
            run(repo, "plan", "submit", key, path)
            run(repo, "plan", "approve", key)
    run(repo, "stage", "claim", WORK, "--stage", "1")
    stage_1 = root / "wt" / "p" / "g" / "work" / "stage-1"
    (stage_1 / "src").mkdir()
    (stage_1 / "src" / "s1.py").write_text("ONE = 1\n")
    git(stage_1, "add", "-A")
    git(stage_1, "commit", "-q", "-m", "stage 1")
    run(repo, "stage", "done", WORK, "--stage", "1")
    git(root / "wt" / "p" / "g" / "work" / "task", "merge", "-q", "okstra/g/work/stage-1")
    run(repo, "stage", "claim", WORK, "--stage", "2", "--lease", "1s", "--no-worktree")
    time.sleep(1.1)  # the lease runs out
    return repo
