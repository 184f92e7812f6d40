"""What ``task show`` and ``task list`` print."""

from __future__ import annotations

from ..records.base import to_data
from ..records.task import require_task, task_ref
from ..services import tasks
from ..services.context import Context
from . import dump


def show(ctx: Context, key_text: str, write_index: bool, as_json: bool) -> tuple[str, str]:
    """(stdout, stderr note) for ``task show``."""
    state = require_task(ctx.repo, ctx.key(key_text))
    data = to_data(state.task)
    index_path = tasks.write_index(ctx, state) if write_index else None
    note = f"wrote {index_path}\n" if index_path else ""
    if as_json:
        out = {"ref": task_ref(state.key), "commit": state.head, "task": data}
        if index_path:
            out["indexPath"] = str(index_path)
        return dump(out), ""
    from ..render import render

    return render("task-index.md.j2", task=data, ref=task_ref(state.key)), note


def list_(ctx: Context, group: str | None, as_json: bool) -> str:
    """stdout for ``task list``."""
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
    if as_json:
        return dump({"tasks": rows})
    lines = [
        f"{r['taskKey']}\t{r['currentStatus']}\t{r['currentPhase']} → {r['nextRecommendedPhase']}"
        for r in rows
    ]
    return "\n".join(lines or ["no tasks"]) + "\n"
