"""What ``verify target`` and ``verify show`` print."""

from __future__ import annotations

from ..records.base import to_data
from ..services import verify
from ..services.context import Context
from . import dump


def refusal(lines: list[str], as_json: bool) -> tuple[str, str]:
    """(stdout, stderr) for a refused gate: every line exactly as written."""
    if as_json:
        return dump({"ok": False, "refusals": lines}), ""
    return "", "".join(line + "\n" for line in lines)


def target(
    ctx: Context, key_text: str, stage: str, worktree: str | None, as_json: bool
) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) for ``verify target``."""
    try:
        resolved = verify.resolve_target(
            ctx, ctx.key(key_text), verify.parse_stage(stage), worktree
        )
    except verify.GateRefused as exc:
        return (*refusal(exc.lines, as_json), 1)
    diff = verify.diff_stat(ctx, resolved)
    if as_json:
        return dump({"ok": True, "target": resolved.to_data(diff)}), "", 0
    return verify.render_target(resolved, diff), "", 0


def show(ctx: Context, rev: str, as_json: bool) -> tuple[str, str]:
    """(stdout, stderr) for ``verify show``."""
    shown = verify.show_verdicts(ctx, rev)
    err = "".join(f"git okstra: warning: {problem}\n" for problem in shown.problems)
    if as_json:
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
        return dump(data), err
    if not shown.verdicts:
        return f"no verdicts on {shown.commit[:12]} or on any commit with its tree\n", err
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
    return "\n".join(lines) + "\n", err


def _signature_text(s: verify.ShownVerdict) -> str:
    if s.signature == "good":
        return f"good by {s.principal}"
    if s.signature == "valid":
        return "intact, signer not checked (set gpg.ssh.allowedSignersFile)"
    if s.signature == "bad":
        return "BAD — not a valid signature by an allowed signer over this record"
    return "unsigned"
