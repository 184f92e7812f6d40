"""Several clones, one remote (SPEC §14): each bullet of issue 10's "what broke" list that the
team-code work owns, reproduced with real clones and real pushes, now giving the right answer."""

from __future__ import annotations

from pathlib import Path

from conftest import git, okstra
from hooks_world import pair
from plans import plan_text

from okstra_git.services import plans, tasks, worktrees
from okstra_git.services.context import open_context

KEY = "p:g:i"


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


def test_two_clones_of_one_project_on_one_machine_never_share_a_worktree_folder(tmp_path: Path):
    # Same folder name, same project id: only the clone tells them apart.
    a, _ = pair(tmp_path, "one/calc")
    b, _ = pair(tmp_path, "two/calc")
    approve_here(a, TWO_FREE)
    assert okstra(a, "sync", "origin").returncode == 0
    assert okstra(b, "sync", "origin").returncode == 0
    roots = [worktrees.default_root(open_context(c)) for c in (a, b)]
    assert roots[0] != roots[1]
    for clone in (a, b):
        proc = okstra(clone, "stage", "claim", KEY, "--stage", "1")
        assert proc.returncode == 0, proc.stderr
    for clone, root in zip((a, b), roots, strict=True):
        stage = root / "p" / "g" / "i" / "stage-1"
        assert Path(git(stage, "rev-parse", "--git-common-dir")).resolve() == (clone / ".git")

    # A clone pointed at the other's root by hand is told whose folder it met, and never to
    # remove it.
    git(b, "config", "okstra.worktreeRoot", str(roots[0]))
    git(b, "worktree", "remove", "--force", str(roots[1] / "p" / "g" / "i" / "task"))
    proc = okstra(b, "stage", "claim", KEY, "--stage", "2")
    assert proc.returncode == 1
    assert f"is a worktree of another repository ({(a / '.git').resolve()})" in proc.stderr
    assert "okstra leaves it alone" in proc.stderr and "git config okstra.worktreeRoot" in proc.stderr
    assert "remove" not in proc.stderr.replace("okstra leaves", "")
    assert (roots[0] / "p" / "g" / "i" / "task").is_dir()
