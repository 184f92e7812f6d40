"""What a claim hands its run besides the scope (issue 21): per claimed stage, its section of the
approved plan (steps and Stage Exit Contract); per dependency, its done commit, report and carry
as stored in its done claim; and the stages other runs hold now (the seed's
``CONCURRENT_RUN_STAGES``). All of it comes from git (the plan blob, the claim refs), so a clone
whose checkout never had the plan file or the reports gets the same directive.
"""

from __future__ import annotations

from datetime import datetime

from ...core.keys import TaskKey
from ...core.values import Value
from ...logic.planfile import decode_plan
from ...records.claim import Claim, ClaimState, StoredReport, claim_holder, read_report
from ..context import Context
from ..planshow import StageBrief, stage_briefs


class DoneDependency(Value):
    """A done dependency as the dependent stage's run needs it: its done claim (done commit,
    branch, carry) and the report stored with it."""

    stage: int
    title: str
    claim: Claim
    report: StoredReport | None
    """None: the stage was done without a report."""


class ConcurrentStage(Value):
    """A stage another run holds now."""

    stage: int
    title: str
    claim: Claim
    state: str
    """``started``, or ``expired`` when its lease ran out."""
    predicted_files: list[str]
    """The files the plan predicts it touches."""


class Handover(Value):
    """The hand-over of one claim (``views.stage`` gives it in ``stage claim --json``)."""

    briefs: dict[int, StageBrief]
    """Each claimed stage's part of the approved plan, by number."""
    dependencies: dict[int, list[DoneDependency]]
    """Each claimed stage's done dependencies, in depends-on order."""
    concurrent: list[ConcurrentStage]
    """The stages other runs hold now (started, or started with an expired lease)."""


def _plan_briefs(ctx: Context, plan_blob: str | None, plan_path: str) -> dict[int, StageBrief]:
    """Every stage's brief from the approved plan's blob (stored with the task's snapshot)."""
    if plan_blob is None or not ctx.repo.has_object(plan_blob):
        return {}
    plan = decode_plan(ctx.repo.blob(plan_blob), f"plan blob {plan_blob[:12]}")
    return stage_briefs(plan.text, plan_path)


def handover(
    ctx: Context,
    key: TaskKey,
    plan_blob: str | None,
    plan_path: str | None,
    batch: list[int],
    claims: dict[int, ClaimState],
    run_id: str,
    now: datetime | None,
) -> Handover:
    """The hand-over of ``run_id``'s claim of ``batch``, given the task's claims as the claim
    read them (``claims``: every stage's claim, the batch's own included or not)."""
    briefs = _plan_briefs(ctx, plan_blob, plan_path or "plan")
    dependencies: dict[int, list[DoneDependency]] = {}
    for number in batch:
        brief = briefs.get(number)
        deps = brief.stage.depends_on if brief is not None else ()
        dependencies[number] = [
            DoneDependency(
                dep, _title(briefs.get(dep)), claims[dep].claim, read_report(ctx.repo, claims[dep])
            )
            for dep in deps
            if dep in claims and claims[dep].claim.status == "done"
        ]
    concurrent = []
    for number, state in sorted(claims.items()):
        c = state.claim
        if number in batch or c.status != "started" or c.run_id == run_id:
            continue
        brief = briefs.get(number)
        concurrent.append(
            ConcurrentStage(
                number,
                _title(brief),
                c,
                claim_holder(c, now).state,
                list(brief.stage.predicted_files) if brief is not None else [],
            )
        )
    return Handover({n: briefs[n] for n in batch if n in briefs}, dependencies, concurrent)


def _title(brief: StageBrief | None) -> str:
    return brief.stage.title if brief is not None else ""
