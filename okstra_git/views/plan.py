"""What ``plan show`` prints: the task's plan snapshot (or one stage's section) under a short
quoted header saying which snapshot it is, whether it is approved and how to read it with git."""

from __future__ import annotations

from ..core.shell import command, okstra
from ..records.base import to_data
from ..services.context import Context
from ..services.planshow import PlanShown, show_plan
from ..services.snapshots import snapshot_path
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def show(ctx: Context, key_text: str, stage: int | None) -> Output:
    shown = show_plan(ctx, ctx.key(key_text), stage)
    data = plan_data(shown)
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


def plan_data(shown: PlanShown) -> dict[str, Any]:
    """``plan show --json``: the snapshot, where it is stored, its approvals, and the stages
    shown (``--stage N``: that one) with the Markdown to read."""
    stages = [shown.stages[shown.stage]] if shown.stage is not None else list(shown.stages.values())
    markdown = stages[0]["section"] or "" if shown.stage is not None else shown.text
    return {
        "taskKey": str(shown.key),
        "seq": shown.seq,
        "path": shown.path,
        "blob": shown.blob,
        "snapshot": snapshot_path(shown.seq),
        "source": shown.source,
        "readWith": command("git", "show", shown.source),
        "approved": bool(shown.approvals),
        "approvals": [to_data(a) for a in shown.approvals],
        "approve": None if shown.approvals else okstra("plan", "status", shown.key),
        "stage": shown.stage,
        "stages": stages,
        "markdown": markdown,
    }
