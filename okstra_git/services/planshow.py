"""``plan show``: the task's plan snapshot as stored in its task ref, and each stage's part of it
(its steps and Stage Exit Contract) — what a worker on a clone without the plan file reads.

Read-only, and lean: the snapshot comes from the task ref (``plans/plan-<seq>.md``), the
approval from the notes on its blob; none of the approval machinery of :mod:`.plans`.
"""

from __future__ import annotations

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.values import Value
from ..logic.stagemap import SectionText, Stage, StageMap, parse_plan, stage_sections
from ..records.approval import Approval, read_approvals
from ..records.task import require_task, task_ref
from .context import Context
from .snapshots import no_plan_message, snapshot, snapshot_path


class StageBrief(Value):
    """One stage as the plan writes it: its Stage Map row, and its section (numbered steps and
    Stage Exit Contract), for ``plan show`` and the claim directive alike."""

    stage: Stage
    section: SectionText | None
    """None when the plan has no section for the stage."""


def stage_briefs(text: str, path: str) -> dict[int, StageBrief]:
    """The brief of every stage of the plan ``text``, by number."""
    stage_map: StageMap = parse_plan(text, path)
    sections = stage_sections(text)
    found: dict[int, StageBrief] = {}
    for stage in stage_map.stages:  # a repeated number: its first row, as the map reads it
        found.setdefault(stage.number, StageBrief(stage, sections.get(stage.number)))
    return found


class PlanShown(Value):
    """The task's plan snapshot and where it stands."""

    key: TaskKey
    seq: str
    """The snapshot's number: ``plans/plan-<seq>.md`` in the task ref."""
    path: str
    """The plan file's path in the work tree, as submitted (a clone may not have it)."""
    blob: str
    """The snapshot's blob id: approvals are notes on it."""
    text: str
    """The snapshot's content."""
    approvals: list[Approval]
    """This task's approvals on this blob (empty: not approved, or not recorded yet)."""
    stages: dict[int, StageBrief]
    """Every stage's brief, by number."""
    stage: int | None
    """The stage asked for (``--stage N``), else None: the whole plan."""

    @property
    def source(self) -> str:
        """The snapshot as ``REF:PATH``, readable with ``git show``."""
        return f"{task_ref(self.key)}:{snapshot_path(self.seq)}"


def show_plan(ctx: Context, key: TaskKey, stage: int | None = None) -> PlanShown:
    """The plan snapshot the task follows (and one stage's part of it); never writes."""
    state = require_task(ctx.repo, key)
    latest = state.task.latest_plan
    if latest is None:
        raise Refused(no_plan_message(key))
    plan = snapshot(ctx, state, latest)
    stages = stage_briefs(plan.text, latest.path)
    if stage is not None and stage not in stages:
        known = ", ".join(map(str, stages)) or "none"
        raise BadInput(f"--stage {stage}: the plan of {key} has no stage {stage} (stages: {known})")
    approvals = read_approvals(ctx.repo, latest.blob, str(key))
    return PlanShown(key, latest.seq, latest.path, latest.blob, plan.text, approvals, stages, stage)
