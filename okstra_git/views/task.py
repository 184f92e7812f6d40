"""What ``task show`` and ``task list`` print."""

from __future__ import annotations

from ..records.base import to_data
from ..records.task import require_task, task_ref
from ..services import tasks
from ..services.context import Context
from . import Output


def show(ctx: Context, key_text: str, write_index: bool) -> Output:
    """The manifest as JSON; as text, the task index (a Jinja template, rendered only then)."""
    state = require_task(ctx.repo, ctx.key(key_text))
    task = to_data(state.task)
    ref = task_ref(state.key)
    data = {"ref": ref, "commit": state.head, "task": task}
    index_path = tasks.write_index(ctx, state) if write_index else None
    if index_path:
        data["indexPath"] = str(index_path)

    def text() -> str:
        from ..render import render

        return render("task-index.md.j2", task=task, ref=ref)

    return Output(data, text, err=f"wrote {index_path}\n" if index_path else "")


def list_(ctx: Context, group: str | None) -> Output:
    rows = [
        {
            "taskKey": s.task.task_key,
            "ref": s.ref,
            "taskType": s.task.task_type,
            "currentPhase": s.task.workflow.current_phase,
            "currentStatus": s.task.current_status,
            "nextRecommendedPhase": s.task.workflow.next_recommended_phase,
        }
        for s in tasks.list_tasks(ctx, group)
    ]
    lines = [
        f"{r['taskKey']}\t{r['currentStatus']}\t{r['currentPhase']} → {r['nextRecommendedPhase']}"
        for r in rows
    ]
    return Output({"tasks": rows}, "\n".join(lines or ["no tasks"]))
