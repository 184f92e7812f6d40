"""Teardown never loses a commit (issue 9): detached HEADs, locked worktrees, stage reports,
released claims and a deleted ``.git`` file, on real worktrees through the real CLI."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from claims_world import KEY, approved_task, commit_in, done_stage_one, show_claim, stored
from conftest import git, okstra

from okstra_git.records.claim import claim_commit, claim_ref, load_claim
from okstra_git.services.context import open_context

KEPT = "refs/okstra-kept/g/i/stage-1/"


def reachable(repo: Path, commit: str) -> bool:
    """``commit`` is reachable from some ref (so no gc can drop it)."""
    out = git(repo, "for-each-ref", "--contains", commit, "--format=%(refname)")
    return bool(out.strip())


def test_a_detached_done_commit_is_never_pruned_away(repo: Path) -> None:
    """The done commit sits on a detached HEAD; the stage branch is still at the base, which
    the task branch trivially contains. The old prune checked only the branch."""
    folder = approved_task(repo)
    okstra(repo, "stage", "claim", KEY).check_returncode()
    stage = folder / "stage-1"
    git(stage, "checkout", "-q", "--detach")
    work = commit_in(stage, "src/schema.py")
    assert okstra(stage, "stage", "done", KEY, "--stage", "1").returncode == 0
    assert show_claim(repo, 1)["headCommit"] == work
    before = stored(repo)

    refused = okstra(repo, "worktree", "prune", KEY)
    assert refused.returncode == 1, refused.stderr
    assert f"stage 1: worktree HEAD {work[:12]} has 1 commit(s) not in the task worktree" in (
        refused.stderr
    )
    assert stage.is_dir() and stored(repo) == before

    forced = okstra(repo, "worktree", "prune", KEY, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    data = json.loads(forced.stdout)
    assert data["removed"] == [1] and data["kept"] == [KEPT + work]
    assert not stage.exists() and git(repo, "rev-parse", KEPT + work) == work
    assert reachable(repo, work)


def test_a_kept_commit_counts_as_safe_and_a_rerun_finishes(repo: Path) -> None:
    """Commits already pinned under refs/okstra-kept are reachable from a ref that stays, so
    a prune (forced or not) goes on from there: the resume path after a killed forced prune."""
    folder, head = done_stage_one(repo)
    git(repo, "update-ref", KEPT + head, head)
    done = okstra(repo, "worktree", "prune", KEY, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] == [1]
    assert not (folder / "stage-1").exists() and reachable(repo, head)


def test_a_branch_moved_past_the_done_commit_keeps_both(repo: Path) -> None:
    folder, done_head = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    later = commit_in(folder / "stage-1", "after-done.py")
    refused = okstra(repo, "worktree", "prune", KEY)
    assert refused.returncode == 1
    assert "stage 1: branch okstra/g/i/stage-1 has 1 commit(s)" in refused.stderr
    assert f"{later[:12]} add after-done.py" in refused.stderr
    forced = json.loads(okstra(repo, "worktree", "prune", KEY, "--force", "--json").stdout)
    assert forced["kept"] == [KEPT + later]  # the done commit is merged: only `later` is pinned
    assert reachable(repo, later) and reachable(repo, done_head)


def test_a_locked_worktree_is_skipped_and_named_even_with_force(repo: Path) -> None:
    folder, _ = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    git(repo, "worktree", "lock", "--reason", "on a usb disk", str(folder / "stage-1"))
    for args in ((), ("--force",)):
        proc = okstra(repo, "worktree", "prune", KEY, *args, "--json")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["removed"] == [] and len(data["skipped"]) == 1
        (skipped,) = data["skipped"]
        assert f"stage 1 worktree {folder / 'stage-1'} is locked (on a usb disk)" in skipped
        unlock = skipped.split("unlock it first: ")[1]
        assert shlex.split(unlock) == ["git", "worktree", "unlock", str(folder / "stage-1")]
    assert (folder / "stage-1" / "src" / "schema.py").exists()
    assert git(repo, "branch", "--list", "okstra/g/i/stage-1")
    subprocess.run(shlex.split(unlock), cwd=repo, check=True)
    assert json.loads(okstra(repo, "worktree", "prune", KEY, "--json").stdout)["removed"] == [1]


def test_the_stage_report_a_claim_names_is_moved_out_first(repo: Path) -> None:
    folder = approved_task(repo)
    okstra(repo, "stage", "claim", KEY).check_returncode()
    stage = folder / "stage-1"
    commit_in(stage, "src/schema.py")
    rel = ".okstra/tasks/g/i/runs/implementation/reports/stage-1.md"
    (stage / rel).parent.mkdir(parents=True)
    (stage / rel).write_text("# stage 1 report\n")
    done = okstra(stage, "stage", "done", KEY, "--stage", "1", "--report", rel)
    assert done.returncode == 0, done.stderr
    assert show_claim(repo, 1)["reportPath"] == rel  # relative to where `stage done` ran
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text("another file at the same place\n")

    proc = okstra(repo, "worktree", "prune", KEY, "--json")
    assert proc.returncode == 0, proc.stderr
    (moved,) = json.loads(proc.stdout)["movedReports"]
    kept = repo / rel.replace("stage-1.md", "stage-1.stage-1.md")
    assert moved == f"stage 1 report {stage / rel} -> {kept}"
    assert kept.read_text() == "# stage 1 report\n"
    assert (repo / rel).read_text() == "another file at the same place\n"  # never overwritten
    assert not stage.exists()


def test_release_keeps_the_worktree_and_its_commits(repo: Path) -> None:
    folder = approved_task(repo)
    okstra(repo, "stage", "claim", KEY).check_returncode()
    stage = folder / "stage-1"
    git(stage, "checkout", "-q", "--detach")
    work = commit_in(stage, "half.py")
    released = okstra(
        repo, "stage", "release", KEY, "--stage", "1", "--reason", "later",
        "--run", "implementation-001",
    )  # fmt: skip
    assert released.returncode == 0, released.stderr
    assert f"its worktree {stage} is kept; the next claim continues there" in released.stdout
    # The run holds nothing now; it is not finished behind the user's back, but named.
    note = released.stdout.splitlines()[-1]
    assert note.startswith("run implementation-001 holds no started stage now")
    finish = shlex.split(note.split("still running; ")[1])
    assert finish[2:] == [
        "run", "finish", KEY, "--type", "implementation", "--seq", "001", "--status", "error"
    ]  # fmt: skip
    assert git(stage, "rev-parse", "HEAD") == work
    assert okstra(repo, "worktree", "prune", KEY, "--force").stdout.strip() == "nothing to prune"
    assert git(stage, "rev-parse", "HEAD") == work


def test_a_worktree_without_its_git_file_is_bad_input_with_the_repair(repo: Path) -> None:
    folder = approved_task(repo)
    okstra(repo, "stage", "claim", KEY).check_returncode()
    stage = folder / "stage-1"
    commit_in(stage, "src/schema.py")
    (stage / "unsaved.py").write_text("work in progress\n")
    (stage / ".git").unlink()
    before = stored(repo)

    def refused_with_repair(*args: str) -> list[str]:
        proc = okstra(repo, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "internal error" not in proc.stderr
        assert f"{stage} is registered as git worktree 'okstra-g-i-stage-1'" in proc.stderr
        repair = proc.stderr.split("Repair it with: ")[1].splitlines()[0]
        assert f"hint: {repair}\n" in proc.stderr
        return shlex.split(repair)

    repair = refused_with_repair("stage", "done", KEY, "--stage", "1")
    assert repair == ["git", "-C", str(repo), "worktree", "repair", str(stage)]
    assert refused_with_repair("stage", "claim", KEY, "--resume", "implementation-001") == repair
    assert stored(repo) == before and (stage / "unsaved.py").exists()
    listed = json.loads(okstra(repo, "worktree", "list", KEY, "--json").stdout)["worktrees"]
    assert listed[1]["broken"] and "worktree repair" in listed[1]["repair"]

    subprocess.run(repair, cwd=repo, capture_output=True)  # git 2.39 repairs, yet exits 1
    assert git(stage, "status", "--short") == "?? unsaved.py"
    (stage / "unsaved.py").unlink()
    assert okstra(repo, "stage", "done", KEY, "--stage", "1").returncode == 0
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    (stage / ".git").unlink()
    assert refused_with_repair("worktree", "prune", KEY, "--force") == repair
    assert refused_with_repair("verify", "target", KEY, "--stage", "1") == repair
    assert stage.is_dir()


def test_a_done_commit_this_clone_lacks_does_not_break_prune(repo: Path) -> None:
    """A claim fetched from another clone may name a done commit that is not here: there is
    nothing of it to lose here, and prune goes on (not an internal error)."""
    folder, _ = done_stage_one(repo)
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    ctx = open_context(repo)
    key = ctx.key(KEY)
    state = load_claim(ctx.repo, key, 1)
    assert state is not None
    state.claim.head_commit = "ab" * 20
    commit = claim_commit(ctx.repo, key, state.claim, state.head, "done elsewhere")
    git(repo, "update-ref", claim_ref(key, 1), commit)
    proc = okstra(repo, "worktree", "prune", KEY, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["removed"] == [1]


def test_a_commit_held_only_by_the_worktrees_own_refs_is_never_pruned_away(repo: Path) -> None:
    """refs/worktree/* (and refs/bisect/*) belong to one worktree and go with it: a commit only
    they hold would be lost with the worktree."""
    folder, _ = done_stage_one(repo)
    stage = folder / "stage-1"
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    tried = commit_in(stage, "experiment.py")
    git(stage, "update-ref", "refs/worktree/experiment", tried)
    git(stage, "reset", "-q", "--hard", "HEAD~1")  # the branch is merged; only the ref holds it
    refused = okstra(repo, "worktree", "prune", KEY)
    assert refused.returncode == 1, refused.stderr
    assert "refs/worktree/experiment" in refused.stderr and tried[:12] in refused.stderr
    assert stage.is_dir()
    forced = okstra(repo, "worktree", "prune", KEY, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["kept"] == [KEPT + tried]
    assert not stage.exists() and reachable(repo, tried)
