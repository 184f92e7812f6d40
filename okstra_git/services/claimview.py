"""The read side of stage claims (docs/workflow.md): the ready set (``stage ready``) and the
consumers view (``stage list``), without what claiming needs (worktrees, runs, the claim
transaction): agents poll these, so they load only the records they show."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.keys import TaskKey
from ..core.values import Value
from ..logic import batch as batching
from ..records.claim import Claim, ClaimState, StoredReport, claim_holder, load_claims
from ..records.task import require_task
from .context import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime

    from ..logic.stagemap import Stage


def select(
    stages: Sequence[Stage],
    claims: dict[int, ClaimState],
    now: datetime | None,
    stage: int | None = None,
    take_over_expired: bool = False,
) -> batching.Selection:
    """The ready set and batch of ``stages`` given their ``claims`` at ``now``
    (docs/workflow.md)."""
    holders = {n: claim_holder(s.claim, now) for n, s in claims.items()}
    return batching.select(stages, holders, stage=stage, take_over_expired=take_over_expired)


# ---------------------------------------------------------------------------------------------
# Ready set


class Readiness(Value):
    """What ``stage ready`` shows: the selection and the plan it came from."""

    selection: batching.Selection
    """Ready set, batch and reasons for the rest."""
    plan_path: str
    """The approved plan."""
    stages: dict[int, Stage]
    """The Stage Map by number."""


def readiness(ctx: Context, key: TaskKey, take_over_expired: bool = False) -> Readiness:
    """The ready set and the batch a claim would take now, without claiming or writing
    anything (a plan ticked by hand is judged as the claim will, but not recorded)."""
    from .plans import check_approved  # the approval gate: not for ``stage list``

    plan = check_approved(ctx, key)
    claims = load_claims(ctx.repo, key)
    selection = select(plan.stage_map.stages, claims, None, take_over_expired=take_over_expired)
    return Readiness(selection, plan.path, {s.number: s for s in plan.stage_map.stages})


# ---------------------------------------------------------------------------------------------
# Listing


class ClaimRow(Value):
    """One line of ``stage list``: the consumers view of a stage."""

    claim: Claim
    """The stored claim."""
    state: str
    """``started``, ``expired``, ``done`` or ``released``."""


def list_claims(ctx: Context, key: TaskKey) -> list[ClaimRow]:
    require_task(ctx.repo, key)
    return [
        ClaimRow(s.claim, claim_holder(s.claim, None).state)
        for _, s in sorted(load_claims(ctx.repo, key).items())
    ]


class StageReport(Value):
    """A done stage and the report stored with its claim: what ``task show`` shows of it."""

    stage: int
    head_commit: str | None
    report_path: str | None
    """Where ``stage done`` was given the report."""
    report: StoredReport | None
    """The report as stored; None: the stage was done without one."""


def stored_reports(ctx: Context, key: TaskKey) -> list[StageReport]:
    """Each done stage's report as stored with its claim, in stage order."""
    from ..records.claim import read_report

    return [
        StageReport(number, state.claim.head_commit, state.claim.report_path,
                    read_report(ctx.repo, state))
        for number, state in sorted(load_claims(ctx.repo, key).items())
        if state.claim.status == "done"
    ]  # fmt: skip
