"""What ``verify target``, ``verify record`` and ``verify show`` print."""

from __future__ import annotations

from ..core.errors import Refused
from ..records.base import to_data
from ..services import verify
from ..services.context import Context
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..git.repo import DiffStatEntry
    from ..logic.nextstep import Step
    from ..records.claim import StoredReport


def refusal(
    exc: verify.GateRefused, key: str | None = None, refused: tuple[str, ...] = ()
) -> Output:
    """A refused gate: every line exactly as written, on stderr (and in ``refusals``), then
    the hint: the task's next step (``key``: the task, whose step ``next`` gives as well), as
    every refusal's is (``nextstep.refusal_hint``; ``refused``: the command's words)."""
    from ..logic.nextstep import refusal_hint

    step = None
    if key is not None:
        from ..services.status import refusal_step

        found = refusal_step(key)
        step = found.to_data() if found is not None else None
    hint = refusal_hint(step, refused, exc.hint)
    return Output(
        {"refusals": exc.lines, **({"next": step} if step is not None else {})},
        err="".join(line + "\n" for line in exc.lines) + (f"hint: {hint}\n" if hint else ""),
        code=1,
        error=str(exc),
        hint=hint,
    )


def target(ctx: Context, key_text: str, stage: int | None, worktree: str | None) -> Output:
    from .task import lag_notice

    key = ctx.key(key_text)
    lags, note = lag_notice(ctx, key, f"the record of {key}")
    try:
        resolved = verify.resolve_target(ctx, key, stage, worktree)
    except verify.GateRefused as exc:
        refused = refusal(exc, key_text, ("verify", "target"))
        return refused.replace(data={**refused.data, "remoteLag": lags}, err=refused.err + note)
    except Refused as exc:
        if not note:
            raise
        # Refused on local records that lag the remote: the refusal may be out of date.
        raise Refused(f"{exc}\n{note.rstrip()}", hint=exc.hint) from exc
    diff = verify.diff_stat(ctx, resolved)
    return Output(
        {"ok": True, "target": target_data(resolved, diff), "remoteLag": lags},
        lambda: target_text(resolved, diff),
        err=note,
    )


def target_data(target: verify.Target, diff: list[DiffStatEntry]) -> dict[str, Any]:
    """``verify target --json``'s ``target``: what the run verifies, and the diff's stat."""
    return {
        "taskKey": target.task_key,
        "scope": target.scope,
        "worktree": target.worktree,
        "base": target.base,
        "head": target.head,
        "headTree": target.head_tree,
        "stages": [
            {
                "stage": s.number,
                "status": s.status,
                "headCommit": s.head_commit,
                "reportPath": s.report_path,
                "reportHere": s.report_here,
                "branch": s.branch,
                **_stored_report(s.report),
            }
            for s in target.stages
        ],
        "diffStat": {
            "filesChanged": len(diff),
            "insertions": sum(e.added for e in diff),
            "deletions": sum(e.deleted for e in diff),
            "files": [
                {"path": e.path, "added": e.added, "deleted": e.deleted, "binary": e.binary}
                for e in diff
            ],
        },
    }


def _stored_report(report: StoredReport | None) -> dict[str, Any]:
    """A stage's stored report for ``--json``: ``reportFile``, ``report`` (readable Markdown)
    and ``reportData`` (``logic.reports.stored.report_view``)."""
    from ..logic.reports.stored import report_view

    if report is None:
        return report_view(None, None)
    return report_view(report.name, report.text)


def target_text(target: verify.Target, diff: list[DiffStatEntry]) -> str:
    """The ``VERIFICATION_TARGET`` block the run reads."""
    from ..logic.documents import verification_target

    return verification_target(target_data(target, diff))


def show(ctx: Context, rev: str) -> Output:
    shown = verify.show_verdicts(ctx, rev)
    err = "".join(f"git okstra: warning: {problem}\n" for problem in shown.problems)
    rows = [
        {
            **to_data(s.verdict),
            "sameCommit": s.same_commit,
            "signatureStatus": s.signature,
            "signer": s.principal,
        }
        for s in shown.verdicts
    ]
    data = {
        "commit": shown.commit,
        "tree": shown.tree,
        "allowedSigners": shown.allowed_signers,
        "verdicts": rows,
        "problems": shown.problems,
    }
    if not shown.verdicts:
        return Output(
            data, f"no verdicts on {shown.commit[:12]} or on any commit with its tree", err=err
        )
    lines = [f"verdicts for {shown.commit[:12]} (tree {shown.tree[:12]}), newest first:"]
    for s in shown.verdicts:
        v = s.verdict
        where = "this commit" if s.same_commit else f"same tree, recorded on {v.head[:12]}"
        lines += [
            f"- {v.verdict} ({v.scope}, stages {', '.join(map(str, v.stages))}) for "
            f"{v.task_key} — {where}",
            f"  {v.recorded_at} by {v.recorded_by}; routing {v.routing}; "
            f"{v.blocker_count} blocker(s); report {v.report_digest[:19]}…",
            f"  signature: {_signature_text(s)}",
        ]
    return Output(data, "\n".join(lines), err=err)


def _signature_text(s: verify.ShownVerdict) -> str:
    if s.signature == "good":
        return f"good by {s.principal}"
    if s.signature == "valid":
        return "intact, signer not checked (set gpg.ssh.allowedSignersFile)"
    if s.signature == "bad":
        return "BAD — not a valid signature by an allowed signer over this record"
    return "unsigned"


def recorded(done: verify.Recorded, step: Step) -> Output:
    """``verify record``: the verdict recorded (or already there), its routing, how to see it,
    and the task's next step."""
    from ..logic.nextstep import line, okstra_argv

    v = done.verdict
    what = "recorded" if done.added else "already recorded"
    text = (
        f"{what}: {v.verdict} ({v.scope}, stages {', '.join(map(str, v.stages))}) on "
        f"{v.head[:12]} (tree {v.head_tree[:12]}){' — signed' if v.signature else ''}\n"
        f"routing: {v.routing}; next phase: {done.next_phase}\n"
        f"see: {line(okstra_argv('verify', 'show', v.head[:12]), step.cwd)}\n"
        f"next ({step.kind}, {step.who}): {step.command or step.why}"
    )
    return Output(
        {
            "added": done.added,
            "verdict": to_data(v),
            "nextPhase": done.next_phase,
            "taskCommit": done.task_head,
            "next": step.to_data(),
        },
        text,
    )
