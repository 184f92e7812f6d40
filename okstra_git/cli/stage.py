"""``git okstra stage``: ready set, claims, done, release and the consumers view (SPEC §5)."""

from __future__ import annotations

import typer

from ..batch import RUN_STEP_BUDGET
from ..errors import BadInput
from ..records.base import to_data
from ..services import claims
from ..services.context import open_context
from .output import JSON_OPTION, emit

app = typer.Typer(
    help="Stage claims: refs/okstra/claims/<group>/<id>/stage-<N>.", no_args_is_help=True
)


def _stage_choice(text: str) -> int | None:
    if text == "auto":
        return None
    if text.isdigit() and int(text) > 0:
        return int(text)
    raise BadInput(f"--stage {text!r}: 'auto' or a stage number such as 2")


@app.command("ready")
def ready(
    key: str = typer.Argument(...),
    take_over_expired: bool = typer.Option(
        False, "--take-over-expired", help="Count stages whose claim lease expired as ready."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show the ready set and the batch a claim would take, without claiming."""
    ctx = open_context()
    found = claims.readiness(ctx, ctx.key(key), take_over_expired)
    sel = found.selection
    lines = [
        f"ready: {', '.join(map(str, sel.ready)) or 'none'}",
        f"batch: {', '.join(map(str, sel.batch)) or 'none'}"
        + (f" ({sel.steps} of {RUN_STEP_BUDGET} steps)" if sel.batch else ""),
    ]
    if sel.blocked:
        lines.append("not ready:")
        lines += [f"  stage {n}: {why}" for n, why in sorted(sel.blocked.items())]
    emit(
        as_json,
        {
            "ready": list(sel.ready),
            "batch": list(sel.batch),
            "batchSteps": sel.steps,
            "budget": RUN_STEP_BUDGET,
            "takeOver": list(sel.take_over),
            "blocked": {str(n): why for n, why in sorted(sel.blocked.items())},
            "planPath": found.plan_path,
        },
        "\n".join(lines),
    )


@app.command("claim")
def claim(
    key: str = typer.Argument(...),
    stage: str = typer.Option("auto", "--stage", help="'auto' (the batch) or one stage number."),
    lease: str | None = typer.Option(
        None, "--lease", help="Lease duration (90s, 30m, 2h, 1d); past it others may take over."
    ),
    take_over_expired: bool = typer.Option(
        False, "--take-over-expired", help="Take stages whose claim lease expired (recorded)."
    ),
    no_worktree: bool = typer.Option(
        False, "--no-worktree", help="Claim only; make no task or stage worktree."
    ),
    resume: str | None = typer.Option(
        None,
        "--resume",
        metavar="RUN",
        help="Make the missing worktrees of RUN's claims (after an interrupted claim).",
    ),
    remote: str | None = typer.Option(
        None,
        "--remote",
        metavar="REMOTE",
        help="Claim through this shared remote: fetch, claim, push atomically with leases; "
        "if another machine won, undo, re-fetch and choose again.",
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Claim the ready batch (all stages or none) and print the run directive."""
    ctx = open_context()
    task_key = ctx.key(key)
    if resume is not None:
        result = claims.resume(ctx, task_key, resume)
    elif remote is not None:
        from ..services.sync import claim_via_remote

        result = claim_via_remote(
            ctx,
            remote,
            task_key,
            _stage_choice(stage),
            lease,
            take_over_expired,
            worktrees=not no_worktree,
        )
    else:
        result = claims.claim(
            ctx,
            task_key,
            _stage_choice(stage),
            lease,
            take_over_expired,
            worktrees=not no_worktree,
        )
    emit(as_json, result.to_data(), result.directive())


@app.command("done")
def done(
    key: str = typer.Argument(...),
    stage: int = typer.Option(..., "--stage", min=1, help="The stage to mark done."),
    report: str | None = typer.Option(None, "--report", help="The stage's report file."),
    carry: str | None = typer.Option(
        None, "--carry", help="The stage carry sidecar (a JSON object, e.g. carry/stage-N.json)."
    ),
    head: str | None = typer.Option(
        None, "--head", help="The head commit you expect; it must match the stage worktree."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Record a stage done with its worktree HEAD, report and carry sidecar."""
    ctx = open_context()
    result = claims.done(ctx, ctx.key(key), stage, report, carry, head)
    c = result.claim
    lines = [f"stage {c.stage} done at {c.head_commit} ({c.run_id})"]
    if result.run_finished:
        lines.append(f"every stage of {c.run_id} is done: the run is finished (completed)")
    if result.run_note:
        lines.append(result.run_note)
    emit(
        as_json,
        {"claim": to_data(c), "runFinished": result.run_finished, "runNote": result.run_note},
        "\n".join(lines),
    )


@app.command("release")
def release(
    key: str = typer.Argument(...),
    stage: int = typer.Option(..., "--stage", min=1),
    reason: str = typer.Option(..., "--reason", help="Why (kept in the claim for audit)."),
    run: str | None = typer.Option(
        None, "--run", help="The run releasing its own claim, e.g. implementation-002."
    ),
    force: bool = typer.Option(False, "--force", help="Release another run's claim (recorded)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """End a started claim without done; the stage becomes ready again."""
    ctx = open_context()
    c = claims.release(ctx, ctx.key(key), stage, reason, run, force)
    emit(
        as_json,
        {"claim": to_data(c)},
        f"stage {c.stage} released ({c.run_id}) by {c.released_by}: {c.release_reason}",
    )


@app.command("list")
def list_(key: str = typer.Argument(...), as_json: bool = JSON_OPTION) -> None:
    """The consumers view: stage, status, run, head, report, lease."""
    ctx = open_context()
    rows = claims.list_claims(ctx, ctx.key(key))
    header = f"{'stage':>5}  {'status':<8}  {'run':<18}  {'head':<12}  {'lease':<25}  report"
    lines = [header]
    for row in rows:
        c = row.claim
        lines.append(
            f"{c.stage:>5}  {row.state:<8}  {c.run_id:<18}  {(c.head_commit or '-')[:12]:<12}  "
            f"{c.lease_expires_at or '-':<25}  {c.report_path or '-'}"
        )
    if not rows:
        lines = ["no stage of this task is claimed yet"]
    emit(as_json, {"stages": [row.to_data() for row in rows]}, "\n".join(lines))
