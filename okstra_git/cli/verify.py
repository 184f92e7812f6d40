"""``git okstra verify``: the final-verification gate, and verdicts kept as git notes."""

from __future__ import annotations

import sys

import typer

from ..records.base import to_data
from ..services import verify
from ..services.context import open_context
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


def _refused(as_json: bool, exc: verify.GateRefused) -> None:
    """Print every refusal line exactly as written, then exit 1."""
    if as_json:
        emit(True, {"ok": False, "refusals": exc.lines})
    else:
        sys.stderr.write("".join(line + "\n" for line in exc.lines))
    finish(1)


@app.command("target")
def target(
    key: str = typer.Argument(..., help="project:group:id (or group:id)"),
    stage: str = STAGE_OPTION,
    worktree: str | None = WORKTREE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Resolve what a final-verification run verifies; exit 1 if the gate is not met."""
    ctx = open_context()
    try:
        resolved = verify.resolve_target(ctx, ctx.key(key), verify.parse_stage(stage), worktree)
    except verify.GateRefused as exc:
        _refused(as_json, exc)
        return
    diff = verify.diff_stat(ctx, resolved)
    if as_json:
        emit(True, {"ok": True, "target": resolved.to_data(diff)})
    else:
        emit(False, {}, verify.render_target(resolved, diff))


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
        _refused(as_json, exc)
        return
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
    ctx = open_context()
    shown = verify.show_verdicts(ctx, rev)
    for problem in shown.problems:
        typer.echo(f"git okstra: warning: {problem}", err=True)
    if as_json:
        emit(
            True,
            {
                "commit": shown.commit,
                "tree": shown.tree,
                "allowedSigners": shown.allowed_signers,
                "verdicts": [
                    {
                        **to_data(s.verdict),
                        "sameCommit": s.same_commit,
                        "signatureStatus": s.signature,
                        "signer": s.principal,
                    }
                    for s in shown.verdicts
                ],
                "problems": shown.problems,
            },
        )
        return
    if not shown.verdicts:
        emit(False, {}, f"no verdicts on {shown.commit[:12]} or on any commit with its tree")
        return
    lines = [f"verdicts for {shown.commit[:12]} (tree {shown.tree[:12]}), newest first:"]
    for s in shown.verdicts:
        v = s.verdict
        where = "this commit" if s.same_commit else f"same tree, recorded on {v.head[:12]}"
        lines.append(
            f"- {v.verdict} ({v.scope}, stages {', '.join(map(str, v.stages))}) for "
            f"{v.task_key} — {where}\n"
            f"  {v.recorded_at} by {v.recorded_by}; routing {v.routing}; "
            f"{v.blocker_count} blocker(s); report {v.report_digest[:19]}…\n"
            f"  signature: {_signature_text(s)}"
        )
    emit(False, {}, "\n".join(lines))


def _signature_text(s: verify.ShownVerdict) -> str:
    if s.signature == "good":
        return f"good by {s.principal}"
    if s.signature == "valid":
        return "intact, signer not checked (set gpg.ssh.allowedSignersFile)"
    if s.signature == "bad":
        return "BAD — the record does not match its signature"
    return "unsigned"
