"""Worktree listing and teardown that never loses work (docs/workflow.md), on real worktrees."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from claims_world import KEY, approved_task, commit_in, done_stage_one, stored
from conftest import git, make_repo, okstra
from plans import plan_text

from okstra_git.core.errors import Refused
from okstra_git.services import claims, layout, worktrees
from okstra_git.services.context import open_context


def test_list_shows_task_and_stage_worktrees(repo: Path) -> None:
    folder, head = done_stage_one(repo)
    (folder / "stage-1" / "scratch.txt").write_text("?\n")
    proc = okstra(repo, "worktree", "list", KEY, "--json")
    assert proc.returncode == 0, proc.stderr
    task, stage = json.loads(proc.stdout)["worktrees"]
    assert task["kind"] == "task" and task["path"] == str(folder / "task")
    assert task["branch"] == "okstra/g/i/task" and task["exists"]
    assert task["head"] == git(repo, "rev-parse", "main")
    assert stage["stage"] == 1 and stage["head"] == head and stage["dirty"] == ["scratch.txt"]
    assert stage["claimStatus"] == "done" and stage["runId"] == "implementation-001"
    text = okstra(repo, "worktree", "list", KEY).stdout
    assert f"stage 1   {folder / 'stage-1'}  okstra/g/i/stage-1" in text
    assert "(present, 1 uncommitted) [done implementation-001]" in text


def test_prune_refuses_an_unmerged_commit_then_removes_after_merge(repo: Path) -> None:
    folder, head = done_stage_one(repo)
    before = stored(repo)
    proc = okstra(repo, "worktree", "prune", KEY)
    assert proc.returncode == 1
    assert "nothing was removed" in proc.stderr
    assert (
        f"stage 1: branch okstra/g/i/stage-1 has 1 commit(s) not in the task worktree HEAD "
        f"{git(repo, 'rev-parse', 'main')[:12]}: {head[:12]} add src/schema.py" in proc.stderr
    )
    assert f"git okstra worktree prune {KEY} --force" in proc.stderr
    assert (folder / "stage-1").is_dir() and git(repo, "rev-parse", "okstra/g/i/stage-1") == head
    assert stored(repo) == before

    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    done = okstra(repo, "worktree", "prune", KEY, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "removed": [1],
        "forcedOver": [],
        "kept": [],
        "skipped": [],
        "movedReports": [],
        "ok": True,
    }
    assert not (folder / "stage-1").exists()
    assert "stage-1" not in git(repo, "worktree", "list")
    assert git(repo, "branch", "--list", "okstra/g/i/stage-1") == ""
    assert (folder / "task" / "src" / "schema.py").exists()  # the work is in the task worktree
    again = okstra(repo, "worktree", "prune", KEY)
    assert again.returncode == 0 and again.stdout.strip() == "nothing to prune"


def test_prune_refuses_an_untracked_file_and_force_removes(repo: Path) -> None:
    folder, _ = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    (folder / "stage-1" / "notes.txt").write_text("unsaved thoughts\n")
    (folder / "stage-1" / ".okstra").mkdir()
    (folder / "stage-1" / ".okstra" / "scratch.md").write_text("ignored by the check\n")
    proc = okstra(repo, "worktree", "prune", KEY)
    assert proc.returncode == 1
    assert f"stage 1 worktree {folder / 'stage-1'} has uncommitted changes: notes.txt" in (
        proc.stderr
    )
    assert ".okstra" not in proc.stderr.split("uncommitted changes:")[1].splitlines()[0]
    assert (folder / "stage-1" / "notes.txt").exists()

    forced = okstra(repo, "worktree", "prune", KEY, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    result = json.loads(forced.stdout)
    assert result["removed"] == [1] and "notes.txt" in result["forcedOver"][0]
    assert not (folder / "stage-1").exists()
    assert git(repo, "branch", "--list", "okstra/g/i/stage-1") == ""


def test_force_removes_unmerged_work_and_started_stages_are_never_pruned(repo: Path) -> None:
    folder, _ = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    ctx = open_context(repo)
    claims.claim(ctx, ctx.key(KEY))  # stages 2 and 3, started
    commit_in(folder / "stage-2", "src/cache.py")
    result = worktrees.prune(ctx, ctx.key(KEY), force=True)
    assert result.removed == [1]  # stage 2's unmerged commit is not a done stage's: untouched
    assert (folder / "stage-2").is_dir() and (folder / "stage-3").is_dir()


def test_prune_finishes_a_teardown_cut_short(repo: Path) -> None:
    """A worktree folder deleted by hand (or by a crash mid-prune) is still pruned cleanly."""
    folder, _ = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    shutil.rmtree(folder / "stage-1")
    listed = json.loads(okstra(repo, "worktree", "list", KEY, "--json").stdout)["worktrees"]
    assert listed[1]["exists"] is False and listed[1]["head"]  # the branch head is shown
    ctx = open_context(repo)
    assert worktrees.prune(ctx, ctx.key(KEY), force=False).removed == [1]
    assert not (repo / ".git" / "worktrees" / "okstra-g-i-stage-1").exists()
    assert git(repo, "branch", "--list", "okstra/g/i/stage-1") == ""


def test_prune_refuses_a_branch_checked_out_elsewhere(repo: Path) -> None:
    folder, _ = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    git(folder / "stage-1", "checkout", "-q", "--detach")
    git(repo, "checkout", "-q", "okstra/g/i/stage-1")
    ctx = open_context(repo)
    with pytest.raises(Refused, match=r"okstra/g/i/stage-1 is checked out in .*repo"):
        worktrees.prune(ctx, ctx.key(KEY), force=True)
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "okstra/g/i/stage-1"


def test_default_root_is_under_home_one_folder_per_clone(repo: Path, tmp_path: Path) -> None:
    ctx = open_context(repo)
    lay = layout.layout(ctx, ctx.key("Proj X:Grp:Some Id"))
    root = layout.default_root(ctx)
    assert root.parent == Path.home() / ".okstra" / "worktrees"
    assert root.name.startswith("repo-") and len(root.name) == len("repo-") + 8
    assert lay.folder == root / "proj-x" / "grp" / "some-id"
    # Another clone of the same project (same folder name, too) gets another root.
    other = make_repo(tmp_path / "elsewhere" / "repo")
    assert layout.default_root(open_context(other)) not in (root, *root.parents)
    # Linked worktrees of one clone share its root.
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    assert layout.default_root(open_context(tmp_path / "linked")) == root
    assert lay.stage_name(3) == "okstra-grp-some-id-stage-3"
    assert lay.stage_branch(3) == "okstra/grp/some-id/stage-3"
    git(repo, "config", "okstra.worktreeRoot", "../trees")
    assert layout.layout(ctx, ctx.key("p:g:i")).folder == repo.parent / "trees" / "p" / "g" / "i"


def test_tasks_whose_names_join_alike_get_their_own_worktrees(repo: Path) -> None:
    """``a-b:c`` and ``a:b-c`` both make ``okstra-a-b-c-stage-1``: the second gets a suffix."""
    ctx = open_context(repo)
    first = approved_task(repo, "p:a-b:c", name="one")
    second = approved_task(repo, "p:a:b-c", name="two")
    for key in ("p:a-b:c", "p:a:b-c"):
        claims.claim(ctx, ctx.key(key))
    assert first / "stage-1" != second / "stage-1"
    for folder, branch in ((first, "okstra/a-b/c/stage-1"), (second, "okstra/a/b-c/stage-1")):
        assert git(folder / "stage-1", "rev-parse", "--abbrev-ref", "HEAD") == branch
    names = sorted(p.name for p in (repo / ".git" / "worktrees").iterdir())
    assert "okstra-a-b-c-stage-1" in names
    assert [n for n in names if n.startswith("okstra-a-b-c-stage-1-")]


def test_a_checkout_shows_git_progress_on_a_terminal_only(repo: Path) -> None:
    """On a terminal the checkout's progress meter (git's own) comes after a line naming the
    worktree; with stderr not a terminal nothing is said. GIT_PROGRESS_DELAY=0: git shows its
    meter at once instead of after two seconds."""
    import os
    import pty
    import subprocess
    import sys

    for n in range(50):
        (repo / f"f{n:02}.txt").write_text(f"{n}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "50 files")
    folder = approved_task(repo, plan=plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])], 2))
    env = {**os.environ, "GIT_PROGRESS_DELAY": "0"}
    quiet = okstra(repo, "stage", "claim", KEY, "--stage", "1", env=env)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    main, side = pty.openpty()
    claim = [sys.executable, "-m", "okstra_git", "stage", "claim", KEY, "--stage", "2"]
    proc = subprocess.Popen(claim, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=side)
    os.close(side)
    said = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        said += chunk
    os.close(main)
    assert proc.wait() == 0, said
    text = said.decode()
    assert text.startswith(f"okstra: checking out {folder / 'stage-2'}\r\n"), text
    assert "Updating files: 100% (" in text and "), done." in text, text
    assert len(list((folder / "stage-2").glob("f*.txt"))) == 50
