"""What ``worktree prune`` says of a done stage it left as it is: services/worktrees.py hands
each as a Skipped value and views/worktree.py words it as the service did (issue 19);
test_prune_safety sees the locked one on a real repository."""

from __future__ import annotations

from pathlib import Path

from okstra_git.services.worktrees import PruneResult, Skipped
from okstra_git.views.worktree import pruned, skipped

OWN = Path("/r/.okstra/worktrees/g/i/stage-2")


def test_a_claim_naming_another_clone_s_folder():
    skip = Skipped(2, Path("/elsewhere/stage-2"), None, OWN, "okstra/g/i/stage-2")
    assert skipped(skip) == (
        "stage 2's claim names the worktree /elsewhere/stage-2, which is not this clone's (not "
        "/r/.okstra/worktrees/g/i/stage-2, nor a worktree of this repository on "
        "okstra/g/i/stage-2), so it was left alone"
    )


def test_a_locked_worktree_with_and_without_a_reason():
    path = Path("/r/my trees/stage-2")
    locked = Skipped(2, path, "on a usb disk", OWN, "okstra/g/i/stage-2", path)
    assert skipped(locked) == (
        "stage 2 worktree /r/my trees/stage-2 is locked (on a usb disk), so it and its branch "
        "were kept; to prune it, unlock it first: git worktree unlock '/r/my trees/stage-2'"
    )
    plain = locked.replace(locked="")
    assert skipped(plain) == (
        "stage 2 worktree /r/my trees/stage-2 is locked, so it and its branch were kept; to "
        "prune it, unlock it first: git worktree unlock '/r/my trees/stage-2'"
    )
    out = pruned(PruneResult([], [], skipped=[plain]))
    assert out.data["skipped"] == [skipped(plain)]
    assert out.render_text() == f"skipped: {skipped(plain)}"


def test_what_a_task_worktree_was_made_from():
    """services/worktrees.py hands where a task worktree started as a MadeFrom value; the view
    words it as the service did, in the text and --json's madeFrom."""
    from okstra_git.services.worktrees import MadeFrom, TaskWorktree
    from okstra_git.views.worktree import made_from, task_worktree

    assert made_from(MadeFrom("here", "okstra/g/i/task")) == "the task branch okstra/g/i/task here"
    assert made_from(MadeFrom("published", "origin")) == "the task branch published on origin"
    assert made_from(MadeFrom("base")) == "the task's implementation base"
    assert made_from(MadeFrom("main")) == "the main worktree HEAD"
    made = TaskWorktree(Path("/t"), "okstra/g/i/task", "a" * 40, MadeFrom("published", "origin"))
    out = task_worktree(made)
    assert out.data["madeFrom"] == "the task branch published on origin"
    assert out.render_text() == (
        "task worktree /t on okstra/g/i/task at aaaaaaaaaaaa (made from the task branch "
        "published on origin)"
    )
    there = task_worktree(made.replace(made_from=None))
    assert there.data["madeFrom"] is None and there.render_text().endswith("(already there)")
