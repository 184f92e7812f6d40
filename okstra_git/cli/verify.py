"""``git okstra verify``: the final-verification gate, and verdicts kept as git notes."""

from __future__ import annotations

import sys

import typer

from ..records.base import to_data
from ..services import verify
from ..services.context import open_context
from ..views import verify as views
from .output import JSON_OPTION, emit, finish

app = typer.Typer(
    help="Final verification: resolve the target, record verdicts, show them.",
    no_args_is_help=True,
)

STAGE_OPTION = typer.Option(
    "auto", "--stage", help="'auto' verifies the whole task; N verifies stage N alone."
)
WORKTREE_OPTION = typer.Option(
    None, "--worktree", help="Verify this work tree instead of the resolved one."
)


def _write(out: str, err: str) -> None:
    sys.stderr.write(err)
    sys.stdout.write(out)


@app.command("target")
def target(
    key: str = typer.Argument(..., help="project:group:id (or group:id)"),
    stage: str = STAGE_OPTION,
    worktree: str | None = WORKTREE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Resolve what a final-verification run verifies; exit 1 if the gate is not met."""
    out, err, code = views.target(open_context(), key, stage, worktree, as_json)
    _write(out, err)
    finish(code)


@app.command("record")
def record(
    key: str = typer.Argument(..., help="project:group:id (or group:id)"),
    verdict: str = typer.Option(..., "--verdict", help="accepted, conditional-accept or blocked."),
    report: str = typer.Option(..., "--report", help="The run's report data (data.json)."),
    stage: str = STAGE_OPTION,
    worktree: str | None = WORKTREE_OPTION,
    expect_head: str | None = typer.Option(
        None, "--expect-head", help="Refuse unless the target HEAD is still this commit."
    ),
    sign: bool = typer.Option(
        False, "--sign", help="Sign the record with git's user.signingKey (ssh)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Re-check the gate and the report, then add the verdict to the note on HEAD."""
    ctx = open_context()
    try:
        done = verify.record_verdict(
            ctx,
            ctx.key(key),
            verdict,
            report,
            verify.parse_stage(stage),
            worktree,
            expect_head,
            sign,
        )
    except verify.GateRefused as exc:
        _write(*views.refusal(exc.lines, as_json))
        raise typer.Exit(1) from None
    v = done.verdict
    what = "recorded" if done.added else "already recorded"
    text = (
        f"{what}: {v.verdict} ({v.scope}, stages {', '.join(map(str, v.stages))}) on "
        f"{v.head[:12]} (tree {v.head_tree[:12]}){' — signed' if v.signature else ''}\n"
        f"routing: {v.routing}; next phase: {done.next_phase}\n"
        f"see: git okstra verify show {v.head[:12]}"
    )
    emit(
        as_json,
        {
            "added": done.added,
            "verdict": to_data(v),
            "nextPhase": done.next_phase,
            "taskCommit": done.task_head,
        },
        text,
    )


@app.command("show")
def show(
    rev: str = typer.Argument("HEAD", help="The commit (default HEAD)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Verdicts on a commit and on commits with the same tree, newest first."""
    _write(*views.show(open_context(), rev, as_json))
