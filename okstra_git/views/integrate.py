"""What ``integrate`` prints."""

from __future__ import annotations

from ..services.integrate import IntegrateResult, Merged
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..logic.nextstep import Step


def integrated(done: IntegrateResult, step: Step) -> Output:
    """What integrate did, then the task's next step (``next`` in ``--json``)."""
    return Output(
        {**data(done), "next": step.to_data()},
        lambda: f"{text(done)}\nnext ({step.kind}, {step.who}): {step.command or step.why}",
    )


def data(done: IntegrateResult) -> dict[str, Any]:
    """``integrate --json`` (without ``next``)."""
    return {
        "taskKey": str(done.key),
        "taskWorktree": done.task_worktree,
        "taskBranch": done.task_branch,
        "head": done.head,
        "merged": [_merged(m) for m in done.merged],
        "brought": done.brought,
        "taskEvent": done.event,
        "remote": done.remote,
        "published": done.published,
        "attempts": done.attempts,
    }


def _merged(m: Merged) -> dict[str, Any]:
    return {
        "stage": m.stage,
        "runId": m.run_id,
        "doneCommit": m.done_commit,
        "claimCommit": m.claim_commit,
        "mergeCommit": m.merge_commit,
    }


def text(done: IntegrateResult) -> str:
    lines = [f"task branch {done.task_branch} at {done.head[:12]} ({done.task_worktree})"]
    for m in done.merged:
        lines.append(
            f"  merged stage {m.stage} ({m.run_id}, done {m.done_commit[:12]}) as "
            f"{m.merge_commit[:12]}"
        )
    if not done.merged:
        lines.append("  every done stage was in it already")
    if done.remote is not None:
        lines.append(
            f"published to {done.remote} with task event {done.event[:12]}"
            if done.published and done.event
            else f"in step with the task branch {done.remote} published"
        )
    elif done.event:
        lines.append(f"recorded as task event {done.event[:12]} (no remote shares the task)")
    if done.attempts > 1:
        lines.append(f"({done.attempts} rounds: another clone integrated first)")
    return "\n".join(lines)
