"""What the ``plan`` commands print. ``plan show``: the task's plan snapshot (or one stage's
section) under a short quoted header saying which snapshot it is, whether it is approved and how
to read it with git. ``plan validate`` reads a file alone: nothing at this module's top loads the
git layer."""

from __future__ import annotations

from ..core.shell import command, okstra
from ..records.base import to_data
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..core.keys import TaskKey
    from ..logic.nextstep import Step
    from ..logic.planfile import Validation
    from ..logic.stagemap import Finding
    from ..services.context import Context
    from ..services.plans import Approved, Assessment, Submitted
    from ..services.planshow import PlanShown


def show(ctx: Context, key_text: str, stage: int | None) -> Output:
    from ..services.planshow import show_plan

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
    from ..services.snapshots import snapshot_path
    from .stage import brief_data

    shown_stages = [shown.stages[shown.stage]] if shown.stage is not None else shown.stages.values()
    stages = [brief_data(brief) for brief in shown_stages]
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


def validated(file: str, result: Validation, step: Step | None = None) -> Output:
    """``plan validate``: valid with its stage count (and, given ``--task``, the task's next
    step: ``next``), or every failed check (exit 1)."""
    stage_map = result.stage_map
    data: dict[str, Any] = {
        "file": file,
        "valid": result.valid,
        "stageMap": stage_map.to_data(),
        "findings": [_finding(f) for f in result.problems],
    }
    if result.valid:
        said = f"{file}: valid — {len(stage_map.stages)} stage(s)"
        if step is None:
            return Output(data, said)
        data["next"] = step.to_data()
        return Output(data, f"{said}\nnext ({step.kind}, {step.who}): {step.command or step.why}")
    summary = f"{file}: {len(result.problems)} failed check(s)"
    return Output(
        data, f"{result.report()}\n{summary}", code=1, error=f"{summary}:\n{result.report()}"
    )


def submitted(done: Submitted, step: Step) -> Output:
    """``plan submit``: the snapshot made (or the plan already there), and the task's next step
    (its approval, while it awaits one)."""
    from ..services.snapshots import snapshot_path

    plan = done.plan
    task_key = done.state.task.task_key
    snapshot = snapshot_path(plan.seq)
    text = (
        f"submitted {plan.path} as {snapshot} of {task_key} (blob {plan.blob[:12]})"
        if done.created
        else f"{plan.path} is already the plan of {task_key} ({snapshot})"
    )
    return Output(
        {
            "taskKey": task_key,
            "plan": to_data(plan),
            "snapshot": snapshot,
            "created": done.created,
            "workflow": to_data(done.state.task.workflow),
            "commit": done.state.head,
            "next": step.to_data(),
        },
        f"{text}\nnext ({step.kind}, {step.who}): {step.command or step.why}",
    )


def approved(done: Approved, step: Step, remote: str | None = None) -> Output:
    """``plan approve``: the approval recorded (or already there; published to ``remote``
    with ``--remote``), and the task's next step."""
    if done.already:
        text = (
            f"{done.path} is already approved for {done.approval.task_key} "
            f"(blob {done.blob[:12]}, by {done.approval.approved_by} at "
            f"{done.approval.approved_at}); nothing changed"
        )
    else:
        text = (
            f"approved {done.path} for {done.approval.task_key}: blob {done.blob[:12]}, "
            f"note in refs/notes/okstra/approvals"
            + ("; ticked the marker and added the audit line" if done.changed_file else "")
        )
    if remote is not None:
        text += f"; published to {remote}"
    return Output(
        {
            "taskKey": done.approval.task_key,
            "path": done.path,
            "blob": done.blob,
            "approval": to_data(done.approval),
            "changedFile": done.changed_file,
            "alreadyApproved": done.already,
            "publishedTo": remote,
            "commit": done.state.head,
            "next": step.to_data(),
        },
        f"{text}\nnext ({step.kind}, {step.who}): {step.command or step.why}",
    )


def plan_status(result: Assessment) -> Output:
    """``plan status``: approved with by whom, or why not (exit 1)."""
    plan, why = result.plan, messages(result)
    data = {
        "taskKey": str(result.key),
        "approved": result.approved,
        "reasons": result.reasons,
        "messages": why,
        "path": result.relpath,
        "readFrom": result.source,
        "blob": plan.blob if plan else None,
        "approvedBlob": result.approved_blob,
        "approvals": [to_data(a) for a in result.approvals],
        "blockers": [
            {"id": item.id, "status": item.status, "line": item.line} for item in result.blockers
        ],
        "latestPlan": to_data(result.state.task.latest_plan),
    }
    if result.approved:
        first = result.approvals[0]
        return Output(
            data,
            f"{result.key}: approved — {result.relpath} (blob {plan.blob[:12] if plan else ''}; "
            f"method {first.method}, by {first.approved_by} at {first.approved_at})",
        )
    summary = f"{result.key}: not approved ({', '.join(result.reasons)})"
    text = "\n".join([summary, *why])
    return Output(data, text, code=1, error=text)


def messages(result: Assessment) -> list[str]:
    """Why the plan is not approved, a paragraph a reason: the refusals' own words, and for a
    marker ticked by hand (``recordable``) that the first claim records it."""
    if not result.recordable:
        return result.messages
    said = (
        f"plan {result.relpath} is marked approved by hand but no approval is recorded for "
        f"{result.key} yet; the first `git okstra stage claim` records it, or run: "
        f"{okstra('plan', 'approve', result.key)}"
    )
    return [said, *result.messages]


def initialized(task_key: TaskKey, path: Path, clone_dir: str) -> Output:
    """``plan init``: where the skeleton is, how many placeholders it has, and the commands
    that follow (``nextstep.plan_steps``: each runs from any folder)."""
    import os

    from ..logic.nextstep import plan_steps
    from ..logic.planskeleton import unfilled

    shown = os.path.relpath(path)
    if shown.startswith(".."):
        shown = str(path.resolve())
    left = len(unfilled(path.read_text("utf-8")))
    then = list(plan_steps(str(task_key), str(path.resolve()), clone_dir))
    text = (
        f"wrote a plan skeleton for {task_key} to {shown}: replace its {left} `<fill in: …>` "
        "(the format: git okstra docs plan-format), then:\n" + "".join(f"  {c}\n" for c in then)
    )
    return Output(
        {"taskKey": str(task_key), "path": shown, "placeholders": left, "then": then},
        text.rstrip("\n"),
    )


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "check": finding.check,
        "stages": list(finding.stages),
        "line": finding.line,
        "message": finding.message,
    }
