"""The final-verification gate on real repositories and worktrees (seed table U1–U6 and more).

Gate checks run in-process (the service is what the CLI calls); the CLI is exercised where
its streams and exit codes are the point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, okstra
from verify_world import KEY, World, make_world

from okstra_git.core.errors import BadInput
from okstra_git.core.shell import okstra as okstra_command
from okstra_git.services import layout, verify


def not_done(n: int) -> str:
    return (
        f"final-verification(whole-task): stage {n} not done — run implementation --stage {n} first"
    )


def not_merged(n: int, sha: str) -> str:
    return (
        f"final-verification(whole-task): stage {n} done commit {sha} not merged into task "
        "worktree HEAD — merge stage branches then retry"
    )


DIRTY = (
    "final-verification: worktree has uncommitted source changes (outside .okstra/) — commit "
    "or stash before verifying"
)


def refusals(world: World, stage: int | None = None, worktree: str | None = None) -> list[str]:
    with pytest.raises(verify.GateRefused) as caught:
        verify.resolve_target(world.ctx, world.key, stage, worktree)
    return caught.value.lines


@pytest.fixture
def world(repo: Path) -> World:
    return make_world(repo, stages=2)


def test_u1_whole_task_all_done_merged_clean(world: World):
    world.do_stage(1)
    world.do_stage(2)
    head = world.merge(1, 2)
    target = verify.resolve_target(world.ctx, world.key, None)
    assert (target.scope, target.base, target.head) == ("whole-task", world.base, head)
    assert Path(target.worktree).resolve() == world.task_wt.resolve()
    assert [(s.number, s.status) for s in target.stages] == [(1, "done"), (2, "done")]
    assert target.stages[1].report_path == ".okstra/reports/stage-2.md"
    assert target.head_tree == git(world.task_wt, "rev-parse", "HEAD^{tree}")
    diff = verify.diff_stat(world.ctx, target)
    assert sorted((e.path, e.added) for e in diff) == [("src/stage1.py", 1), ("src/stage2.py", 1)]


def test_u2_a_stage_not_done(world: World):
    world.do_stage(1)
    world.merge(1)
    assert refusals(world) == [not_done(2)]
    world.start_stage(2)  # started is not done either
    assert refusals(world) == [not_done(2)]


def test_u3_a_done_stage_not_merged(world: World):
    world.do_stage(1)
    head2 = world.do_stage(2)
    world.merge(1)
    assert refusals(world) == [not_merged(2, head2)]


def test_u4_dirty_outside_okstra_staged_unstaged_or_untracked(world: World):
    world.do_stage(1)
    world.do_stage(2)
    world.merge(1, 2)
    wt = world.task_wt
    (wt / "stray.txt").write_text("untracked\n")
    assert refusals(world) == [DIRTY]
    git(wt, "add", "stray.txt")
    assert refusals(world) == [DIRTY]
    git(wt, "commit", "-q", "-m", "stray")
    (wt / "README.md").write_text("changed\n")
    assert refusals(world) == [DIRTY]
    git(wt, "checkout", "--", "README.md")
    (wt / ".gitignore").write_text("*.log\n")
    git(wt, "add", ".gitignore")
    git(wt, "commit", "-q", "-m", "ignore logs")
    (wt / "build.log").write_text("ignored files do not count\n")
    verify.resolve_target(world.ctx, world.key, None)


def test_u4b_changes_only_inside_okstra_pass(world: World):
    world.do_stage(1)
    world.do_stage(2)
    world.merge(1, 2)
    report = world.task_wt / ".okstra" / "tasks" / "grp" / "feat" / "report.md"
    report.parent.mkdir(parents=True)
    report.write_text("a report being written\n")
    verify.resolve_target(world.ctx, world.key, None)


def test_every_offence_reported_together_by_the_cli(world: World):
    head1 = world.do_stage(1)
    (world.task_wt / "stray.txt").write_text("x\n")
    proc = okstra(world.repo, "verify", "target", KEY)
    assert proc.returncode == 1, proc.stderr
    # The hint is the task's next step, as `task status` gives it (stage 2 first), never a
    # merge by hand of the task branch that integrate publishes.
    step = json.loads(okstra(world.repo, "task", "status", KEY, "--json").stdout)["next"]
    hint = step["command"]
    assert "merge" not in hint
    assert proc.stderr.splitlines() == [not_merged(1, head1), not_done(2), DIRTY, f"hint: {hint}"]
    assert proc.stdout == ""
    as_json = okstra(world.repo, "verify", "target", KEY, "--json")
    assert as_json.returncode == 1
    refusals = [not_merged(1, head1), not_done(2), DIRTY]
    assert json.loads(as_json.stdout) == {
        "ok": False,
        "refusals": refusals,
        "error": "\n".join(refusals),
        "exitCode": 1,
        "hint": hint,
        "next": step,
        "remoteLag": [],
    }


def test_u5_single_stage_done_gives_its_base_and_head(world: World):
    world.do_stage(1)
    world.commit_in_stage(1, "more\n")  # several commits in the stage
    head1 = world.finish_stage(1)
    # Stage 2 unclaimed, the task worktree dirty and unmerged: irrelevant for stage 1 alone.
    (world.task_wt / "stray.txt").write_text("x\n")
    target = verify.resolve_target(world.ctx, world.key, 1)
    assert (target.scope, target.base, target.head) == ("single-stage", world.base, head1)
    assert Path(target.worktree) == world.stage_wt(1)
    assert [s.number for s in target.stages] == [1]
    assert not target.all_stages_done


def test_u6_single_stage_not_done(world: World):
    world.start_stage(1)
    world.commit_in_stage(1)
    assert refusals(world, 1) == [
        "final-verification(single-stage): stage 1 not done — run implementation --stage 1 first"
    ]


def test_single_stage_with_its_worktree_removed_suggests_whole_task(world: World):
    world.do_stage(1)
    git(world.repo, "worktree", "remove", str(world.stage_wt(1)))
    [line] = refusals(world, 1)
    assert line == (
        f"final-verification(single-stage): stage 1 worktree {world.stage_wt(1)} no longer "
        "exists — verify the whole task instead: "
        + okstra_command("verify", "target", KEY, "--stage", "auto")
    )


def test_single_stage_worktree_moved_past_its_done_commit(world: World):
    done = world.do_stage(1)
    later = world.commit_in_stage(1, "after done\n")
    [line] = refusals(world, 1)
    assert later in line and done in line


def test_octopus_merge_counts(repo: Path):
    world = make_world(repo, stages=3)
    for n in (1, 2, 3):
        world.do_stage(n)
    head = world.merge(1, 2, 3)
    assert (
        len(git(world.task_wt, "rev-list", "--parents", "-n1", "HEAD").split()) == 5
    )  # HEAD + 4 parents
    assert verify.resolve_target(world.ctx, world.key, None).head == head


def test_fast_forward_merge_counts(repo: Path):
    world = make_world(repo, stages=1)
    done = world.do_stage(1)
    assert world.merge(1, ff=True) == done  # HEAD is the done commit itself
    assert verify.resolve_target(world.ctx, world.key, None).head == done


def test_cherry_picked_stage_commit_is_not_merged(world: World):
    world.do_stage(1)
    head2 = world.do_stage(2)
    world.merge(1)
    git(world.task_wt, "cherry-pick", head2)
    assert refusals(world) == [not_merged(2, head2)]


def test_worktree_override_and_bad_stage(world: World, tmp_path: Path):
    world.do_stage(1)
    world.do_stage(2)
    world.merge(1, 2)
    other = world.root / "other"
    git(world.repo, "worktree", "add", "-q", "--detach", str(other), world.base)
    # The other worktree sits on the base: neither stage is merged there.
    assert len(refusals(world, None, str(other))) == 2
    foreign = tmp_path / "foreign"
    git(tmp_path, "init", "-q", str(foreign))
    with pytest.raises(BadInput, match="not of this repository"):
        verify.resolve_target(world.ctx, world.key, None, str(foreign))
    with pytest.raises(BadInput, match="has stages 1, 2"):
        verify.resolve_target(world.ctx, world.key, 7)
    proc = okstra(world.repo, "verify", "target", KEY, "--stage", "two")
    assert proc.returncode == 2 and "--stage 'two'" in proc.stderr


def test_task_worktree_missing(world: World):
    world.do_stage(1)
    git(world.repo, "worktree", "remove", "--force", str(world.task_wt))
    lines = refusals(world)
    default = layout.default_root(world.ctx) / "proj" / "grp" / "feat" / "task"
    assert lines[0].startswith(f"final-verification(whole-task): task worktree {default} does")
    assert "--worktree PATH" in lines[0]
    assert lines[1:] == [not_done(2)]


def test_target_block_lists_scope_worktree_base_head_diff_and_reports(world: World):
    world.do_stage(1)
    world.do_stage(2)
    head = world.merge(1, 2)
    proc = okstra(world.repo, "verify", "target", KEY)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("## VERIFICATION_TARGET\n")
    for expected in (
        "**Verification scope:** `whole-task`",
        f"**Base:** `{world.base}`",
        f"**HEAD:** `{head}`",
        "src/stage1.py | +1 -0",
        "2 files changed, 2 insertions(+), 0 deletions(-)",
        "| 2 | done |",
        "`.okstra/reports/stage-2.md`",
    ):
        assert expected in out, expected
    data = json.loads(okstra(world.repo, "verify", "target", KEY, "--json").stdout)
    assert data["ok"] is True
    assert data["target"]["diffStat"]["filesChanged"] == 2
    assert [s["reportPath"] for s in data["target"]["stages"]] == [
        ".okstra/reports/stage-1.md",
        ".okstra/reports/stage-2.md",
    ]


def test_a_work_tree_of_another_clone_is_not_taken(world: World, tmp_path: Path):
    """Worktree roots can be shared by clones: the default task worktree path may belong to
    another clone of the project, whose HEAD this repository may not even have."""
    from okstra_git.git.worktrees import worktree_head

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(world.repo), str(clone))
    assert worktree_head(clone) == git(clone, "rev-parse", "HEAD")
    assert worktree_head(clone, world.ctx.repo) is None
    assert worktree_head(world.task_wt, world.ctx.repo) == git(world.task_wt, "rev-parse", "HEAD")
    assert worktree_head(world.repo / "docs", world.ctx.repo) is None  # not a work tree root
