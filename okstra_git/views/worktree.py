"""What ``worktree list``, ``worktree task`` and ``worktree prune`` print."""

from __future__ import annotations

from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..services.worktrees import MadeFrom, PruneResult, Skipped, TaskWorktree, WorktreeEntry


def listed(entries: list[WorktreeEntry]) -> Output:
    """``worktree list``: one line a worktree (and how to repair a broken one)."""
    lines = []
    for e in entries:
        what = "task" if e.kind == "task" else f"stage {e.stage}"
        state = (
            "present"
            if e.exists
            else "broken"
            if e.repair
            else f"in another clone: {e.elsewhere}"
            if e.elsewhere
            else "missing"
        )
        extra = f", {len(e.dirty)} uncommitted" if e.dirty else ""
        claim = f" [{e.claim_status} {e.run_id}]" if e.claim_status else ""
        lines.append(
            f"{what:<9} {e.path}  {e.branch}  {(e.head or '-')[:12]}  ({state}{extra}){claim}"
        )
        if e.repair:
            lines.append(f"          {e.repair}")
    return Output({"worktrees": [entry_data(e) for e in entries]}, "\n".join(lines))


def entry_data(e: WorktreeEntry) -> dict[str, object]:
    """One worktree of ``worktree list --json``."""
    return {
        "kind": e.kind,
        "stage": e.stage,
        "path": e.path,
        "branch": e.branch,
        "exists": e.exists,
        "head": e.head,
        "dirty": e.dirty,
        "claimStatus": e.claim_status,
        "runId": e.run_id,
        "broken": e.repair is not None,
        "repair": e.repair,
        "elsewhere": e.elsewhere,
    }


def task_worktree(found: TaskWorktree) -> Output:
    """``worktree task``: where the task worktree is and how it came to be."""
    made = made_from(found.made_from) if found.made_from is not None else None
    how = f"made from {made}" if made else "already there"
    return Output(
        {
            "path": str(found.path),
            "branch": found.branch,
            "head": found.head,
            "madeFrom": made,
        },
        f"task worktree {found.path} on {found.branch} at {(found.head or '-')[:12]} ({how})",
    )


def made_from(made: MadeFrom) -> str:
    """What a task worktree made now started from, as ``worktree task`` says it."""
    return {
        "here": f"the task branch {made.name} here",
        "published": f"the task branch published on {made.name}",
        "base": "the task's implementation base",
        "main": "the main worktree HEAD",
    }[made.kind]


def pruned(result: PruneResult) -> Output:
    """``worktree prune``: what it removed, moved, kept and skipped."""
    moved = [f"stage {m.stage} report {m.source} -> {m.target}" for m in result.moved_reports]
    lines = [f"moved {m}" for m in moved]
    lines += [f"removed the worktree and branch of stage {n}" for n in result.removed]
    lines += [f"removed despite: {p}" for p in result.problems]
    lines += [f"kept unmerged commit as {ref}" for ref in result.kept]
    skips = [skipped(s) for s in result.skipped]
    lines += [f"skipped: {s}" for s in skips]
    return Output(
        {
            "removed": result.removed,
            "forcedOver": result.problems,
            "kept": result.kept,
            "skipped": skips,
            "movedReports": moved,
        },
        "\n".join(lines) or "nothing to prune",
    )


def skipped(skip: Skipped) -> str:
    """Why prune left a done stage's worktree as it is, and (locked) how to free it."""
    from ..core.shell import command

    if skip.locked is None:
        return (
            f"stage {skip.stage}'s claim names the worktree {skip.path}, which is not this "
            f"clone's (not {skip.own}, nor a worktree of this repository on {skip.branch}), so "
            "it was left alone"
        )
    why = f" ({skip.locked})" if skip.locked else ""
    return (
        f"stage {skip.stage} worktree {skip.found} is locked{why}, so it and its branch were "
        f"kept; to prune it, unlock it first: {command('git', 'worktree', 'unlock', skip.path)}"
    )
