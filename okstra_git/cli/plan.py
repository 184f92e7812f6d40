"""``git okstra plan``: validate, submit, approve and inspect a task's plan (SPEC §3, §4)."""

from __future__ import annotations

from typing import Any

import typer

from ..planfile import validate_plan_file
from ..records.base import to_data
from ..services import plans
from ..services.context import open_context
from ..stagemap import Finding
from .output import JSON_OPTION, emit, finish

app = typer.Typer(
    help="Plans: Stage Map validation, submission and the approval gate.", no_args_is_help=True
)


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "check": finding.check,
        "stages": list(finding.stages),
        "line": finding.line,
        "message": finding.message,
    }


@app.command("validate")
def validate(
    file: str = typer.Argument(..., help="The plan (Markdown)."), as_json: bool = JSON_OPTION
) -> None:
    """Check the plan's Stage Map (S1–S7, S9); exit 1 listing every failure."""
    result = validate_plan_file(file)
    stage_map = result.stage_map
    if result.valid:
        text = f"{file}: valid — {len(stage_map.stages)} stage(s)"
    else:
        text = f"{result.report()}\n{file}: {len(result.findings)} failed check(s)"
    emit(
        as_json,
        {
            "file": file,
            "valid": result.valid,
            "stageMap": stage_map.to_data(),
            "findings": [_finding(f) for f in result.findings],
        },
        text,
    )
    finish(0 if result.valid else 1)


@app.command("submit")
def submit(
    key: str = typer.Argument(...),
    file: str = typer.Argument(..., help="The plan (Markdown), inside the work tree."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Validate the plan, snapshot it into the task and wait for the user's approval."""
    ctx = open_context()
    done = plans.submit_plan(ctx, ctx.key(key), file)
    plan = done.plan
    snapshot = plans.snapshot_path(plan.seq)
    text = (
        f"submitted {plan.path} as {snapshot} of {done.state.task.task_key} (blob {plan.blob[:12]})"
        if done.created
        else f"{plan.path} is already the plan of {done.state.task.task_key} ({snapshot})"
    )
    if done.created and done.state.task.workflow.awaiting_approval:
        text += f"\nawaiting approval: git okstra plan approve '{done.state.task.task_key}'"
    emit(
        as_json,
        {
            "taskKey": done.state.task.task_key,
            "plan": to_data(plan),
            "snapshot": snapshot,
            "created": done.created,
            "workflow": to_data(done.state.task.workflow),
            "commit": done.state.head,
        },
        text,
    )


@app.command("approve")
def approve(
    key: str = typer.Argument(...),
    file: str | None = typer.Argument(None, help="The plan; default: the task's latest plan."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Check §5, tick `- [x] Approved`, add the audit line and record the approval note."""
    ctx = open_context()
    done = plans.approve_plan(ctx, ctx.key(key), file)
    if done.already:
        text = (
            f"{done.path} is already approved for {done.approval.task_key} "
            f"(blob {done.blob[:12]}, by {done.approval.approved_by} at "
            f"{done.approval.approved_at}); nothing changed"
        )
    else:
        text = (
            f"approved {done.path} for {done.approval.task_key}: blob {done.blob[:12]}, "
            f"note in refs/notes/okstra/approvals"
            + ("; ticked the marker and added the audit line" if done.changed_file else "")
        )
    emit(
        as_json,
        {
            "taskKey": done.approval.task_key,
            "path": done.path,
            "blob": done.blob,
            "approval": to_data(done.approval),
            "changedFile": done.changed_file,
            "alreadyApproved": done.already,
            "commit": done.state.head,
        },
        text,
    )


@app.command("status")
def status(key: str = typer.Argument(...), as_json: bool = JSON_OPTION) -> None:
    """Say whether the task's plan is approved, and why not; exit 1 when it is not."""
    ctx = open_context()
    result = plans.plan_status(ctx, ctx.key(key))
    plan = result.plan
    if result.approved:
        first = result.approvals[0]
        text = (
            f"{result.key}: approved — {result.relpath} (blob {plan.blob[:12] if plan else ''}; "
            f"method {first.method}, by {first.approved_by} at {first.approved_at})"
        )
    else:
        text = f"{result.key}: not approved ({', '.join(result.reasons)})\n" + "\n".join(
            result.messages
        )
    emit(
        as_json,
        {
            "taskKey": str(result.key),
            "approved": result.approved,
            "reasons": result.reasons,
            "messages": result.messages,
            "path": result.relpath,
            "readFrom": result.source,
            "blob": plan.blob if plan else None,
            "approvedBlob": result.approved_blob,
            "approvals": [to_data(a) for a in result.approvals],
            "blockers": [
                {"id": item.id, "status": item.status, "line": item.line}
                for item in result.blockers
            ],
            "latestPlan": to_data(result.state.task.latest_plan),
        },
        text,
    )
    finish(0 if result.approved else 1)
