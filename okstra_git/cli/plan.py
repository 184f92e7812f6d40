"""``git okstra plan``: validate, submit, approve and inspect a task's plan (docs/workflow.md)."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command, group, number

TYPE_CHECKING = False  # typing is for the type checker: it costs every command ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..logic.stagemap import Finding

group(
    "plan",
    "Plans: Stage Map validation, submission and the approval gate.",
    about="A plan is Markdown: one `- [ ] Approved` marker line, a `## 5. Clarification Items` "
    "table, a `## 5.5 Stage Map` table (Stage | Title | Effective steps | Depends-on) and one "
    "`### Stage N — Title` section per row with its numbered steps (1 to 6) and a `#### Stage "
    "Exit Contract` naming the predicted files; a run takes ready stages while their steps add "
    "up to at most 8. The format: `git okstra docs plan-format`; `plan init` "
    "writes a plan to fill in.",
)


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "check": finding.check,
        "stages": list(finding.stages),
        "line": finding.line,
        "message": finding.message,
    }


@command(
    "plan validate",
    "Check the plan's Stage Map (S1–S7, S9) and §5; exit 1 listing every failure.",
    Arg("file", "The plan (Markdown).", metavar="FILE", complete="file"),
    about="Needs no repository: the checks read the file alone.",
)
def validate(file: str) -> Output:
    from ..logic.planfile import validate_plan_file

    result = validate_plan_file(file)
    stage_map = result.stage_map
    data = {
        "file": file,
        "valid": result.valid,
        "stageMap": stage_map.to_data(),
        "findings": [_finding(f) for f in result.problems],
    }
    if result.valid:
        return Output(data, f"{file}: valid — {len(stage_map.stages)} stage(s)")
    summary = f"{file}: {len(result.problems)} failed check(s)"
    return Output(
        data, f"{result.report()}\n{summary}", code=1, error=f"{summary}:\n{result.report()}"
    )


@command(
    "plan submit",
    "Validate the plan, snapshot it into the task and wait for the user's approval.",
    KEY,
    Arg("file", "The plan (Markdown), inside the work tree.", metavar="FILE", complete="file"),
)
def submit(key: str, file: str) -> Output:
    from ..core.shell import okstra
    from ..records.base import to_data
    from ..services import plans
    from ..services.context import open_context
    from ..services.snapshots import snapshot_path

    ctx = open_context()
    done = plans.submit_plan(ctx, ctx.key(key), file)
    plan = done.plan
    task_key = done.state.task.task_key
    snapshot = snapshot_path(plan.seq)
    text = (
        f"submitted {plan.path} as {snapshot} of {task_key} (blob {plan.blob[:12]})"
        if done.created
        else f"{plan.path} is already the plan of {task_key} ({snapshot})"
    )
    if done.created and done.state.task.workflow.awaiting_approval:
        text += f"\nawaiting approval: {okstra('plan', 'approve', task_key)}"
    return Output(
        {
            "taskKey": task_key,
            "plan": to_data(plan),
            "snapshot": snapshot,
            "created": done.created,
            "workflow": to_data(done.state.task.workflow),
            "commit": done.state.head,
        },
        text,
    )


@command(
    "plan approve",
    "Check §5, tick `- [x] Approved`, add the audit line and record the approval note.",
    KEY,
    Arg(
        "file",
        "The plan; default: the task's latest plan.",
        metavar="FILE",
        optional=True,
        complete="file",
    ),
    about="The approval is a note on the plan's blob in refs/notes/okstra/approvals: editing "
    "the plan afterwards leaves it unapproved.",
)
def approve(key: str, file: str | None) -> Output:
    from ..records.base import to_data
    from ..services import plans
    from ..services.context import open_context
    from ..services.status import next_for

    ctx = open_context()
    done = plans.approve_plan(ctx, ctx.key(key), file)
    step = next_for(ctx, ctx.key(key))
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
    return Output(
        {
            "taskKey": done.approval.task_key,
            "path": done.path,
            "blob": done.blob,
            "approval": to_data(done.approval),
            "changedFile": done.changed_file,
            "alreadyApproved": done.already,
            "commit": done.state.head,
            "next": step.to_data(),
        },
        f"{text}\nnext ({step.kind}, {step.who}): {step.command or step.why}",
    )


@command(
    "plan status",
    "Say whether the task's plan is approved, and why not; exit 1 when it is not.",
    KEY,
)
def status(key: str) -> Output:
    from ..records.base import to_data
    from ..services import plans
    from ..services.context import open_context

    ctx = open_context()
    result = plans.plan_status(ctx, ctx.key(key))
    plan = result.plan
    data = {
        "taskKey": str(result.key),
        "approved": result.approved,
        "reasons": result.reasons,
        "messages": result.messages,
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
    text = "\n".join([summary, *result.messages])
    return Output(data, text, code=1, error=text)


@command(
    "plan show",
    "Print the task's plan as stored in the task (or one stage's steps and Stage Exit Contract).",
    KEY,
    Arg("--stage", "Print stage N's section alone.", metavar="N", convert=number),
    about="Reads the snapshot in the task ref (plans/plan-<seq>.md), so it works on any clone "
    "that has synced, whether or not its checkout has the plan file. --json gives each stage's "
    "title, depends-on, predicted files, steps and Stage Exit Contract.",
)
def show(key: str, stage: int | None) -> Output:
    from ..services.context import open_context
    from ..views import plan as views

    return views.show(open_context(), key, stage)


@command(
    "plan init",
    "Write a plan skeleton for the task to fill in: every part okstra reads, in its format.",
    KEY,
    Arg(
        "file",
        "Where to write it (a new file; missing folders are made). Default: plans/<task id>.md "
        "at the top of the work tree.",
        metavar="FILE",
        optional=True,
        complete="file",
    ),
    about="Each `<fill in: …>` is the plan's own text to write; plan validate, submit and "
    "approve refuse the plan while one is left. Add or remove stages as the work needs. The "
    "format: `git okstra docs plan-format`.",
)
def init(key: str, file: str | None) -> Output:
    import os

    from ..core.shell import okstra
    from ..logic.planskeleton import unfilled
    from ..services.context import open_context
    from ..services.planinit import init_plan

    ctx = open_context()
    task_key = ctx.key(key)
    path = init_plan(ctx, task_key, file)
    shown = os.path.relpath(path)
    if shown.startswith(".."):
        shown = str(path.resolve())
    left = len(unfilled(path.read_text("utf-8")))
    then = [
        okstra("plan", "validate", shown),
        okstra("plan", "submit", task_key, shown),
        okstra("plan", "approve", task_key),
    ]
    text = (
        f"wrote a plan skeleton for {task_key} to {shown}: replace its {left} `<fill in: …>` "
        "(the format: git okstra docs plan-format), then:\n" + "".join(f"  {c}\n" for c in then)
    )
    return Output(
        {"taskKey": str(task_key), "path": shown, "placeholders": left, "then": then},
        text.rstrip("\n"),
    )
