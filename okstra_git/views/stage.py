"""What ``stage claim`` (the run directive), ``stage list`` (the consumers view of a task's
claimed stages) and ``stage renew`` print."""

from __future__ import annotations

from ..records.base import to_data
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..services.claims.claim import ClaimResult
    from ..services.claims.leases import RenewResult
    from ..services.claimview import ClaimRow


def claimed(result: ClaimResult) -> Output:
    """The run directive, after a note for each thing the claimer should know."""
    directive = result.directive()
    notes = "".join(f"note: {notice}\n\n" for notice in result.notices)
    data = {
        "taskKey": str(result.key),
        "runId": result.run_id,
        "stages": [p.stage for p in result.stages],
        "placements": [p.to_data() for p in result.stages],
        "taskWorktree": result.task_worktree,
        "taskBranch": result.task_branch,
        "implementationBaseCommit": result.implementation_base,
        "planPath": result.plan_path,
        "planBlob": result.plan_blob,
        "resumed": result.resumed,
        "notices": list(result.notices),
        "concurrentStages": list(result.concurrent),
        "directive": directive,
    }
    return Output(data, notes + directive)


def claim_list(rows: list[ClaimRow], lags: list[dict[str, str | None]], err: str) -> Output:
    """A table of the claimed stages (``--json``: ``stages`` and ``remoteLag``)."""
    header = f"{'stage':>5}  {'status':<8}  {'run':<18}  {'head':<12}  {'lease':<25}  report"
    lines = [header]
    for row in rows:
        c = row.claim
        lines.append(
            f"{c.stage:>5}  {row.state:<8}  {c.run_id:<18}  {(c.head_commit or '-')[:12]:<12}  "
            f"{c.lease_expires_at or '-':<25}  {c.report_path or '-'}"
        )
    if not rows:
        lines = ["no stage of this task is claimed yet"]
    return Output(
        {"stages": [row_data(row) for row in rows], "remoteLag": lags}, "\n".join(lines), err=err
    )


def row_data(row: ClaimRow) -> dict[str, Any]:
    """One stage of ``stage list --json``: its claim's fields, and the whole record."""
    c = row.claim
    return {
        "stage": c.stage,
        "status": row.state,
        "runId": c.run_id,
        "headCommit": c.head_commit,
        "reportPath": c.report_path,
        "leaseExpiresAt": c.lease_expires_at,
        "claim": to_data(c),
    }


def renewed(result: RenewResult) -> Output:
    """Each claim whose lease moved: until when, and how it stood before."""
    lines = []
    for r in result.renewed:
        was = f"was {r.previous}" if r.previous else "had no lease"
        if r.had_expired:
            was += ", already run out; nobody had taken it over"
        lines.append(f"stage {r.stage} ({r.run_id}): lease until {r.lease_expires_at} ({was})")
    if result.published:
        lines.append(f"published to {result.published}")
    data = {
        "taskKey": str(result.key),
        "renewed": [
            {
                "stage": r.stage,
                "runId": r.run_id,
                "leaseExpiresAt": r.lease_expires_at,
                "previous": r.previous,
                "hadExpired": r.had_expired,
            }
            for r in result.renewed
        ],
        "publishedTo": result.published,
    }
    return Output(data, "\n".join(lines))
