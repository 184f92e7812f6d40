"""What ``git okstra sync`` prints for a report: the summary by kind of ref, the refs a person
must act on named in it too, and every ref with ``-v``."""

from __future__ import annotations

from okstra_git.services.branches import BranchState
from okstra_git.services.sync.engine import SyncReport
from okstra_git.services.sync.state import RefState
from okstra_git.views.sync import kind, text

A, B, C = "a" * 40, "b" * 40, "c" * 40


def test_the_kinds_of_refs():
    assert kind("refs/okstra/tasks/g/i") == "tasks"
    assert kind("refs/okstra/claims/g/i/stage-1") == "claims"
    assert kind("refs/notes/okstra/verdicts") == "notes"
    assert kind("refs/okstra/branches/g/i/task") == "branches"


def test_a_summary_counts_each_kind_and_names_what_needs_a_person():
    tasks = [RefState(f"refs/okstra/tasks/g/t{n}", None, A, "fetched", A) for n in range(2000)]
    report = SyncReport(
        "origin",
        fetched=True,
        refs=[
            *tasks,
            RefState("refs/okstra/tasks/h/x", A, B, "fast-forwarded", B),
            RefState("refs/okstra/tasks/h/y", A, None, "local-only", A),
            RefState("refs/okstra/claims/h/y/stage-1", A, B, "conflict"),
            RefState("refs/okstra/claims/h/z/stage-1", None, C, "invalid"),
            RefState("refs/notes/okstra/verdicts", A, B, "merged", C),
        ],
        unchanged=7,
        pushed=["refs/okstra/tasks/h/y", "refs/notes/okstra/verdicts", "refs/okstra/branches/t1"],
        attempts=2,
        branches=[
            BranchState("refs/okstra/branches/t1", A, None, "ahead"),
            BranchState("refs/okstra/branches/t2", A, None, "ahead"),
            BranchState("refs/okstra/branches/t3", A, B, "behind"),
            BranchState("refs/okstra/branches/t4", A, A, "same"),
        ],
    )
    assert text(report).splitlines() == [
        "okstra sync with origin (fetched, 2 attempts)",
        "  tasks: 2000 fetched, 1 fast-forwarded, 1 only here; 1 pushed",
        "  claims: 1 in conflict, 1 not adopted",
        "  notes: 1 merged; 1 pushed",
        f"  refs/okstra/claims/h/y/stage-1: CONFLICT: left as it was (here {A[:12]}, remote "
        f"{B[:12]})",
        f"  refs/okstra/claims/h/z/stage-1: NOT ADOPTED: the remote's {C[:12]} fails its checks",
        "  branches: 1 published, 1 to publish",
        f"  refs/okstra/branches/t3: the remote's {B[:12]} has more than yours ({A[:12]}): "
        "refs/okstra-remotes/origin/branches/t3",
        "7 ref(s) already in step; 3 pushed",
    ]
    every = text(report, verbose=True).splitlines()
    assert len(every) == 1 + 2000 + 5 + 3 + 1  # head, each ref, each branch not in step, sum
    assert every[1] == f"  refs/okstra/tasks/g/t0: fetched {A[:12]}"
    assert every[-4] == f"  refs/okstra/branches/t1: published {A[:12]}"
    assert every[-3] == f"  refs/okstra/branches/t2: to publish {A[:12]}"


def test_a_conflicts_choices_say_what_each_does():
    """The sync service hands each choice as a kind and its command (services/sync/conflicts.py);
    the view words it as the service did."""
    from okstra_git.views.sync import choice_words

    assert choice_words("take-theirs", "origin") == (
        "keep origin's side and drop yours (kept under refs/okstra-dropped/)"
    )
    assert choice_words("renumber", "origin") == (
        "keep both: yours moves to the next free number after origin's"
    )


def test_a_branch_held_back_names_both_sides_and_the_command():
    """services/branches.held_back hands each branch both clones moved with its fix; the view
    words it as the service did (test_team_flow finds it on a real sync's stderr)."""
    from okstra_git.services.branches import HeldBack
    from okstra_git.views.sync import held_words, synced

    branch = BranchState("refs/okstra/branches/g/i/task", A, B, "diverged")
    held = HeldBack(branch, "origin", "git okstra integrate G-1 --remote origin")
    words = (
        f"not published: refs/okstra/branches/g/i/task here ({A[:12]}) and on origin "
        f"({B[:12]}) have both moved; publish both with: git okstra integrate G-1 --remote origin"
    )
    assert held_words(held) == words
    assert held_words(HeldBack(BranchState(branch.ref, None, None, "diverged"), "o", "x")) == (
        f"not published: {branch.ref} here (-) and on o (-) have both moved; publish both with: x"
    )
    out = synced(SyncReport("origin", fetched=True, refs=[], branches=[branch]), [held])
    assert out.code == 1 and out.error == words and out.err == f"git okstra: {words}\n"


def test_a_branch_the_remote_has_more_of_names_the_step_that_brings_it_here():
    """services/branches.branch_steps hands the command for a task branch behind the remote's
    (integrate, run from any folder); the line and ``--json`` carry it. Without one (a branch
    no task here names) the line names the remote's copy, as it did."""
    from okstra_git.views.sync import data

    task, stage = "refs/okstra/branches/g/i/task", "refs/okstra/branches/g/i/stage-1"
    step = "git -C /c okstra integrate p:g:i --remote origin"
    report = SyncReport(
        "origin",
        fetched=True,
        refs=[],
        branches=[BranchState(task, A, B, "behind"), BranchState(stage, A, C, "behind")],
    )
    lines = text(report, steps={task: step}).splitlines()
    assert lines[1:3] == [
        f"  {task}: the remote's {B[:12]} has more than yours ({A[:12]}): bring it here with: "
        + step,
        f"  {stage}: the remote's {C[:12]} has more than yours ({A[:12]}): "
        "refs/okstra-remotes/origin/branches/g/i/stage-1",
    ]
    said = data(report, {task: step})["branches"]
    assert [b["command"] for b in said] == [step, None]  # type: ignore[index]
