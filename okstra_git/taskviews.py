"""What ``task show`` and ``task list`` print, shared by the typer CLI and the lean entry.

Agents poll these commands, so they also run without typer (see ``lean.py``); both front
ends call these functions, so the output is defined once. No typer, jsonschema or jinja2
imports at module level.
"""

from __future__ import annotations

import json
from typing import Any

from .records.base import to_data
from .records.task import require_task, task_ref
from .services import tasks
from .services.context import Context


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


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
        return _dump(out), ""
    from .render import render

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
        return _dump({"tasks": rows})
    lines = [
        f"{r['taskKey']}\t{r['currentStatus']}\t{r['currentPhase']} → {r['nextRecommendedPhase']}"
        for r in rows
    ]
    return "\n".join(lines or ["no tasks"]) + "\n"
