"""The final-verification gate and verdict rules (docs/workflow.md), as pure functions (no git).

The service answers the git questions (which stages are done, which done commits HEAD does
not contain, whether the worktree is clean) and these functions turn the answers into the
exact refusal lines and route the task (report data has its own rules, okstra_git.logic.reports).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ..core.shell import okstra

WHOLE_TASK = "whole-task"
SINGLE_STAGE = "single-stage"
VERDICTS = ("accepted", "conditional-accept", "blocked")

DIRTY = (
    "final-verification: worktree has uncommitted source changes (outside .okstra/) "
    "— commit or stash before verifying"
)


def not_done(stage: int, scope: str = WHOLE_TASK) -> str:
    return (
        f"final-verification({scope}): stage {stage} not done "
        f"— run implementation --stage {stage} first"
    )


def not_merged(stage: int, sha: str) -> str:
    return (
        f"final-verification(whole-task): stage {stage} done commit {sha} not merged into "
        "task worktree HEAD — merge stage branches then retry"
    )


def not_here(stage: int, sha: str, fetch: str) -> str:
    return (
        f"final-verification(whole-task): stage {stage} done commit {sha} is not in this clone "
        f"— fetch it with: {fetch}"
    )


def task_worktree_missing(path: str, make: str) -> str:
    return (
        f"final-verification(whole-task): task worktree {path} does not exist (or is not a "
        f"work tree of this repository) — make it with: {make}, or name the work tree to "
        "verify with --worktree PATH"
    )


def stage_worktree_gone(stage: int, path: str, key: str) -> str:
    return (
        f"final-verification(single-stage): stage {stage} worktree {path} no longer exists "
        f"— verify the whole task instead: {okstra('verify', 'target', key, '--stage', 'auto')}"
    )


def stage_head_moved(stage: int, head: str, done_head: str) -> str:
    return (
        f"final-verification(single-stage): stage {stage} worktree HEAD {head} is not its done "
        f"commit {done_head} — put the worktree back on {done_head[:12]}, or verify the whole "
        "task with --stage auto"
    )


def whole_task_refusals(
    stages: Sequence[int],
    done_heads: Mapping[int, str],
    unmerged: Collection[str],
    dirty: bool,
) -> list[str]:
    """Every whole-task offence at once: one line per offending stage (in stage order), then
    the dirty-worktree line. ``done_heads`` maps each done stage to its head commit and
    ``unmerged`` holds the done heads that HEAD does not contain."""
    lines = []
    for stage in sorted(set(stages)):
        head = done_heads.get(stage)
        if head is None:
            lines.append(not_done(stage))
        elif head in unmerged:
            lines.append(not_merged(stage, head))
    if dirty:
        lines.append(DIRTY)
    return lines


def single_stage_refusals(
    stage: int,
    key: str,
    done_head: str | None,
    worktree: str,
    worktree_head: str | None,
    dirty: bool,
) -> list[str]:
    """Stage N alone: done, its worktree still there and on the done commit, and clean.
    ``worktree_head`` is None when the worktree is gone; other stages never matter."""
    if done_head is None:
        return [not_done(stage, SINGLE_STAGE)]
    if worktree_head is None:
        return [stage_worktree_gone(stage, worktree, key)]
    lines = []
    if worktree_head != done_head:
        lines.append(stage_head_moved(stage, worktree_head, done_head))
    if dirty:
        lines.append(DIRTY)
    return lines


def routing(scope: str, verdict: str) -> str:
    """Where the task goes after a verdict: ``release-handoff`` only for an accepted whole-task
    verdict; a single-stage verdict never goes there (docs/workflow.md)."""
    if verdict == "blocked":
        return "implementation"
    if scope == WHOLE_TASK:
        return "release-handoff" if verdict == "accepted" else "implementation"
    return "done" if verdict == "accepted" else "implementation"


def next_phase(route: str, all_stages_done: bool) -> str:
    """The task's next recommended phase. A single-stage ``done`` finishes that stage only: the
    task goes on implementing, or to a whole-task verification once every stage is done."""
    if route == "done":
        return "final-verification" if all_stages_done else "implementation"
    return route
