"""What ``plan show`` prints: the task's plan snapshot (or one stage's section) under a short
quoted header saying which snapshot it is, whether it is approved and how to read it with git."""

from __future__ import annotations

from ..services.context import Context
from ..services.planshow import show_plan
from . import Output


def show(ctx: Context, key_text: str, stage: int | None) -> Output:
    shown = show_plan(ctx, ctx.key(key_text), stage)
    data = shown.to_data()
    what = f"stage {stage} of plan-{shown.seq}" if stage is not None else f"plan-{shown.seq}"
    if shown.approvals:
        first = shown.approvals[0]
        standing = f"approved by {first.approved_by} at {first.approved_at} (method {first.method})"
    else:
        standing = f"NOT approved (yet): see {data['approve']}"
    header = [
        f"> {what} of {shown.key}: {shown.path} (blob {shown.blob[:12]}), {standing}",
        f"> stored in the task: {data['readWith']}",
    ]
    return Output(data, "\n".join(header) + "\n\n" + data["markdown"].rstrip("\n"))
