"""The plan snapshots in the task ref and their Stage Map (docs/workflow.md): what read commands
need of a plan (``verify target``, ``task status``, ``stage done``), without the approval machinery
of :mod:`.plans` (clarification items, approval notes, locks)."""

from __future__ import annotations

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.shell import okstra
from ..logic.planfile import PlanFile, decode_plan
from ..logic.stagemap import StageMap, parse_plan
from ..records.task import PlanRef, TaskState, require_task, task_ref
from .context import Context

PLANS_DIR = "plans"


def snapshot_path(seq: str) -> str:
    """Where plan snapshot ``seq`` lives in the task tree."""
    return f"{PLANS_DIR}/plan-{seq}.md"


def load_stage_map(ctx: Context, key: TaskKey) -> StageMap:
    """The Stage Map of the task's plan snapshot in the task ref; no approval check."""
    return stage_map_of(ctx, require_task(ctx.repo, key))


def stage_map_of(ctx: Context, state: TaskState) -> StageMap:
    """:func:`load_stage_map` for a task already read.

    Parse problems are in ``parse_findings`` (a submitted plan validated when it was stored).
    """
    plan = state.task.latest_plan
    if plan is None:
        raise Refused(no_plan_message(state.key))
    return parse_plan(snapshot(ctx, state, plan).text, plan.path)


def snapshot(ctx: Context, state: TaskState, plan: PlanRef) -> PlanFile:
    """The stored snapshot ``plan`` names; BadInput when the task ref lacks it."""
    path = snapshot_path(plan.seq)
    raw = ctx.repo.read_path(state.head, path)
    where = f"{task_ref(state.key)}:{path}"
    if raw is None:
        raise BadInput(f"{where} is missing although task.json names plan {plan.seq}")
    return decode_plan(raw, where)


def no_plan_message(key: TaskKey) -> str:
    return (
        f"task {key} has no submitted plan; an implementation run starts only from an approved "
        f"plan: {okstra('plan', 'submit', key, 'FILE')}, then {okstra('plan', 'approve', key)}"
    )
