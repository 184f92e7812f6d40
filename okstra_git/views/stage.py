"""What the ``stage`` commands print: ``stage ready``, ``stage claim`` (the run directive),
``stage renew``, ``stage done``, ``stage release`` and ``stage list`` (the consumers view of a
task's claimed stages)."""

from __future__ import annotations

from ..records.base import to_data
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..logic.nextstep import Step
    from ..services.claims.claim import ClaimResult, Placement
    from ..services.claims.common import RunLeftRunning, Unpublished
    from ..services.claims.done import DoneResult
    from ..services.claims.handover import ConcurrentStage, DoneDependency
    from ..services.claims.leases import RenewResult
    from ..services.claims.release import ReleaseResult
    from ..services.claimview import ClaimRow, Readiness
    from ..services.planshow import StageBrief


def ready(found: Readiness) -> Output:
    """The ready set, the batch a claim would take, and why each other stage is left out."""
    from ..logic.batch import RUN_STEP_BUDGET

    sel = found.selection
    lines = [
        f"ready: {', '.join(map(str, sel.ready)) or 'none'}",
        f"batch: {', '.join(map(str, sel.batch)) or 'none'}"
        + (f" ({sel.steps} of {RUN_STEP_BUDGET} steps)" if sel.batch else ""),
    ]
    if sel.left_out:
        lines.append("ready, not in the batch:")
        lines += [f"  stage {n}: {why}" for n, why in sorted(sel.left_out.items())]
    if sel.blocked:
        lines.append("not ready:")
        lines += [f"  stage {n}: {why}" for n, why in sorted(sel.blocked.items())]
    return Output(
        {
            "ready": list(sel.ready),
            "batch": list(sel.batch),
            "batchSteps": sel.steps,
            "budget": RUN_STEP_BUDGET,
            "takeOver": list(sel.take_over),
            "blocked": {str(n): why for n, why in sorted(sel.blocked.items())},
            "leftOut": {str(n): why for n, why in sorted(sel.left_out.items())},
            "planPath": found.plan_path,
        },
        "\n".join(lines),
    )


def taken_meanwhile(key: object, offered: list[int], why: str, step: Step) -> Output:
    """Nothing claimed: what this clone's records offered was claimed by other clones since it
    last fetched (a race lost as expected), and what to do instead."""
    numbers = ", ".join(map(str, offered))
    stages, were = ("stages", "were") if len(offered) > 1 else ("stage", "was")
    data = {
        "taskKey": str(key),
        "claimed": False,
        "runId": None,
        "stages": [],
        "placements": [],
        "taskWorktree": "",
        "taskBranch": "",
        "implementationBaseCommit": None,
        "planPath": None,
        "planBlob": None,
        "resumed": False,
        "notices": [f"{stages} {numbers} {were} claimed by another clone meanwhile"],
        "concurrentStages": [],
        "directive": "",
        "why": why,
        "next": step.to_data(),
    }
    text = (
        f"nothing claimed: {stages} {numbers}, ready in this clone's records, {were} claimed by "
        f"another clone meanwhile.\n{why}\nnext ({step.kind}, {step.who}): "
        f"{step.command or step.why}"
    )
    return Output(data, text)


def marked_done(result: DoneResult, report: str | None) -> Output:
    """The stage done at its head, where its report is stored, what became of the run, what
    was published, and the command integrating it."""
    from ..records.claim import report_file_name

    c = result.claim
    stored = report_file_name(report) if report and not result.already else None
    lines = [f"stage {c.stage} done at {c.head_commit} ({c.run_id})"]
    if stored:
        kind = "report data" if stored.endswith(".json") else "Markdown"
        lines.append(f"its report ({kind}) is stored with the claim as {stored}")
    if result.already:
        lines = [f"stage {c.stage} was already done at {c.head_commit} ({c.run_id}); unchanged"]
    if result.published:
        lines.append(f"published to {result.published}: the claim and the stage's branch")
    if result.run_finished:
        lines.append(f"every stage of {c.run_id} is done: the run is finished (completed)")
    lines += [run_note(result.run_note)] if result.run_note else []
    lines += [publish_note(result.publish_note)] if result.publish_note else []
    if result.merge:
        lines.append(f"integrate it into the task branch: {result.merge}")
    return Output(
        {
            "claim": to_data(c),
            "reportFile": stored,
            "runFinished": result.run_finished,
            "runNote": run_note(result.run_note) if result.run_note else None,
            "already": result.already,
            "publishedTo": result.published,
            "publishNote": publish_note(result.publish_note) if result.publish_note else None,
            "merge": result.merge,
        },
        "\n".join(lines),
    )


def released(result: ReleaseResult) -> Output:
    """Who released the stage and why; its worktree is kept for the next claim."""
    c = result.claim
    lines = [f"stage {c.stage} released ({c.run_id}) by {c.released_by}: {c.release_reason}"]
    if c.worktree_path:
        lines.append(f"its worktree {c.worktree_path} is kept; the next claim continues there")
    note = run_note(result.run_note) if result.run_note else None
    if note:
        lines.append(note)
    return Output({"claim": to_data(c), "runNote": note}, "\n".join(lines))


def run_note(left: RunLeftRunning) -> str:
    """What a done or a release says of the run it left running, and what finishes it."""
    if left.why == "no-report":
        return (
            f"every stage of {left.run_id} is done, but the run is still running: finishing it "
            "needs its report, and this `stage done` was given no --report. Finish it with: "
            f"{left.finish} --status completed --report PATH"
        )
    how = (
        f"{left.finish} --status completed --report PATH (some of its stages are done)"
        if left.why == "some-done"
        else f"{left.finish} --status error"
    )
    return f"run {left.run_id} holds no started stage now and is still running; {how}"


def publish_note(unpublished: Unpublished) -> str:
    """What a done through a remote recorded here but could not publish there yet."""
    if unpublished.error is None:
        return (
            f"the task's latest events are recorded here but not on {unpublished.remote} (its "
            f"task ref moved there); publish them with: {unpublished.sync}"
        )
    return f"not published: {unpublished.error} — publish it with: {unpublished.sync}"


def claimed(result: ClaimResult) -> Output:
    """The run directive, after a note for each thing the claimer should know."""
    directive = run_directive(result)
    notes = "".join(f"note: {notice}\n\n" for notice in result.notices)
    data = {
        "taskKey": str(result.key),
        "runId": result.run_id,
        "stages": [p.stage for p in result.stages],
        "placements": [placement_data(p) for p in result.stages],
        "taskWorktree": result.task_worktree,
        "taskBranch": result.task_branch,
        "implementationBaseCommit": result.implementation_base,
        "planPath": result.plan_path,
        "planBlob": result.plan_blob,
        "resumed": result.resumed,
        "notices": list(result.notices),
        "concurrentStages": [concurrent_data(c) for c in result.concurrent],
        "directive": directive,
    }
    return Output(data, notes + directive)


def race_lost(remote: str) -> None:
    """What a claim through ``remote`` says, as it goes, when another clone claimed first: a
    progress note on stderr, like git's own — the command goes on and may still succeed."""
    import sys

    sys.stderr.write(f"okstra: another clone claimed first on {remote}; choosing again\n")


def run_directive(result: ClaimResult) -> str:
    """The run directive (``logic/documents.py``): what ``stage claim`` prints and the work
    loop writes into the stage worktree."""
    from ..logic.documents import run_directive as document

    return document(
        key=str(result.key),
        run_id=result.run_id,
        stages=[
            {**placement_data(p), "report": result.report_path(p.stage)} for p in result.stages
        ],
        task_worktree=result.task_worktree,
        task_branch=result.task_branch,
        implementation_base=result.implementation_base,
        plan_path=result.plan_path,
        plan_blob=result.plan_blob,
        concurrent=[concurrent_data(c) for c in result.concurrent],
        clone_dir=result.clone_dir,
    )


def placement_data(p: Placement) -> dict[str, Any]:
    """A claimed stage as the run directive and ``stage claim --json`` give it."""
    return {
        "stage": p.stage,
        "title": p.title,
        "worktreePath": p.worktree_path,
        "branch": p.branch,
        "baseCommit": p.base_commit,
        "startedHeadCommit": p.started_head_commit,
        "stackedOn": p.stacked_on,
        "takeOverOf": p.take_over_of,
        "leaseExpiresAt": p.lease_expires_at,
        "leftUncommitted": list(p.left_uncommitted),
        "plan": brief_data(p.brief) if p.brief is not None else None,
        "dependencies": [dependency_data(d) for d in p.dependencies],
    }


def dependency_data(dep: DoneDependency) -> dict[str, Any]:
    """A done dependency's hand-over, as a placement gives it."""
    from ..logic.reports.stored import readable_report

    c, stored = dep.claim, dep.report
    return {
        "stage": dep.stage,
        "title": dep.title,
        "status": c.status,
        "runId": c.run_id,
        "who": c.who,
        "doneAt": c.done_at,
        "doneCommit": c.head_commit,
        "branch": c.branch,
        "reportPath": c.report_path,
        "reportFile": stored.name if stored is not None else None,
        "report": readable_report(stored.name, stored.text) if stored is not None else None,
        "carry": c.carry,
    }


def concurrent_data(stage: ConcurrentStage) -> dict[str, Any]:
    """A stage another run holds, as ``stage claim --json`` and the run directive give it."""
    c = stage.claim
    return {
        "stage": stage.stage,
        "title": stage.title,
        "runId": c.run_id,
        "who": c.who,
        "state": stage.state,
        "leaseExpiresAt": c.lease_expires_at,
        "predictedFiles": stage.predicted_files,
    }


def brief_data(brief: StageBrief) -> dict[str, Any]:
    """A stage as the plan writes it (``plan show --json``'s stages, a placement's ``plan``):
    its Stage Map row, its numbered steps and its Stage Exit Contract (Markdown)."""
    stage, section = brief.stage, brief.section
    return {
        "stage": stage.number,
        "title": stage.title,
        "effectiveSteps": stage.effective_steps,
        "dependsOn": list(stage.depends_on),
        "predictedFiles": list(stage.predicted_files),
        "steps": list(stage.steps),
        "exitContract": section.contract if section is not None else None,
        "section": section.markdown if section is not None else None,
    }


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
