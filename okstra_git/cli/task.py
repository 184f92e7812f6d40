"""``git okstra task``: create, list, show and follow tasks."""

from __future__ import annotations

import typer

from ..records.base import to_data
from ..records.task import require_task, task_ref
from ..services import tasks
from ..services.context import open_context
from .output import JSON_OPTION, emit

app = typer.Typer(help="Tasks, stored as refs/okstra/tasks/<group>/<id>.", no_args_is_help=True)


@app.command("new")
def new(
    key: str = typer.Argument(..., help="project:group:id (or group:id)"),
    task_type: str = typer.Option(..., "--type", help="The task's entry phase."),
    brief: str | None = typer.Option(None, "--brief", help="A Markdown brief to snapshot."),
    category: str = typer.Option("feature", "--category", help="Work category."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Create a task."""
    ctx = open_context()
    state = tasks.new_task(ctx, ctx.key(key), task_type, category, brief)
    emit(
        as_json,
        {"taskKey": state.task.task_key, "ref": task_ref(state.key), "commit": state.head},
        f"created task {state.task.task_key} at {task_ref(state.key)} ({state.head[:12]})",
    )


@app.command("list")
def list_(
    group: str | None = typer.Option(None, "--group", help="Only this task group."),
    as_json: bool = JSON_OPTION,
) -> None:
    """List tasks."""
    found = tasks.list_tasks(open_context(), group)
    rows = [
        {
            "taskKey": s.task.task_key,
            "ref": s.ref,
            "taskType": s.task.task_type,
            "currentPhase": s.task.workflow.current_phase,
            "currentStatus": s.task.current_status,
            "nextRecommendedPhase": s.task.workflow.next_recommended_phase,
        }
        for s in found
    ]
    text = "\n".join(
        f"{r['taskKey']}\t{r['currentStatus']}\t{r['currentPhase']} → {r['nextRecommendedPhase']}"
        for r in rows
    )
    emit(as_json, {"tasks": rows}, text or "no tasks")


@app.command("show")
def show(
    key: str = typer.Argument(...),
    write_index: bool = typer.Option(
        False, "--write-index", help="Also write .okstra/tasks/<group>/<id>/task-index.md."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show a task's manifest."""
    ctx = open_context()
    state = require_task(ctx.repo, ctx.key(key))
    data = to_data(state.task)
    index_path = None
    if write_index:
        index_path = tasks.write_index(ctx, state)
    if as_json:
        emit(
            True,
            {
                "ref": task_ref(state.key),
                "commit": state.head,
                "task": data,
                **({"indexPath": str(index_path)} if index_path else {}),
            },
        )
        return
    from ..render import render

    emit(False, {}, render("task-index.md.j2", task=data, ref=task_ref(state.key)))
    if index_path:
        typer.echo(f"wrote {index_path}", err=True)


@app.command("log")
def log(key: str = typer.Argument(...), as_json: bool = JSON_OPTION) -> None:
    """The task's timeline, newest first."""
    ctx = open_context()
    events = tasks.task_log(ctx, ctx.key(key))
    emit(
        as_json,
        {"events": [e.__dict__ for e in events]},
        "\n".join(f"{e.commit[:12]} {e.time} {e.summary}  ({e.author})" for e in events),
    )
