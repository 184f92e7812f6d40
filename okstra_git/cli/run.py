"""``git okstra run``: start and finish runs of a phase."""

from __future__ import annotations

import typer

from ..records.base import to_data
from ..services import runs
from ..services.context import open_context
from .output import JSON_OPTION, emit

app = typer.Typer(help="Runs: one execution of a phase for a task.", no_args_is_help=True)


@app.command("start")
def start(
    key: str = typer.Argument(...),
    task_type: str = typer.Option(..., "--type", help="The phase to run."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Allocate the next run number for a phase and record the run."""
    ctx = open_context()
    state, record = runs.start_run(ctx, ctx.key(key), task_type)
    lines = [f"started {record.task_type} run {record.seq} of {record.task_key}"]
    lines += [f"  {kind}: {path}" for kind, path in record.paths.items()]
    emit(as_json, {"run": to_data(record), "commit": state.head}, "\n".join(lines))


@app.command("finish")
def finish(
    key: str = typer.Argument(...),
    task_type: str = typer.Option(..., "--type"),
    seq: str = typer.Option(..., "--seq", help="The run number, e.g. 001."),
    status: str = typer.Option(..., "--status", help="completed, error or timeout."),
    report: str | None = typer.Option(None, "--report", help="The run's final report."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Record how a run ended and move the task's workflow."""
    ctx = open_context()
    state, record = runs.finish_run(ctx, ctx.key(key), task_type, seq, status, report)
    flow = state.task.workflow
    emit(
        as_json,
        {"run": to_data(record), "workflow": to_data(flow), "commit": state.head},
        f"{record.task_type} run {record.seq}: {record.status}; next: "
        f"{flow.next_recommended_phase} ({flow.routing_status})",
    )
