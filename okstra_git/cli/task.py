"""``git okstra task``: create, list, show and follow tasks."""

from __future__ import annotations

import typer

from ..records.task import task_ref
from ..services import tasks
from ..services.context import open_context
from ..views import task as taskviews
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
    typer.echo(taskviews.list_(open_context(), group, as_json), nl=False)


@app.command("show")
def show(
    key: str = typer.Argument(...),
    write_index: bool = typer.Option(
        False, "--write-index", help="Also write .okstra/tasks/<group>/<id>/task-index.md."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show a task's manifest (Markdown summary, or the manifest itself with --json)."""
    out, note = taskviews.show(open_context(), key, write_index, as_json)
    typer.echo(out, nl=False)
    if note:
        typer.echo(note, nl=False, err=True)


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
