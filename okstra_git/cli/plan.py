"""``git okstra plan``: validate, submit, approve and inspect a task's plan (docs/workflow.md)."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command, group, number

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


@command(
    "plan validate",
    "Check the plan's Stage Map (S1–S7, S9) and §5; exit 1 listing every failure.",
    Arg("file", "The plan (Markdown).", metavar="FILE", complete="file"),
    Arg(
        "--task",
        "The task the plan is for: a valid plan ends with the task's next step (read from "
        "this folder's repository).",
        metavar="KEY",
        complete="task",
    ),
    about="Needs no repository: the checks read the file alone (with --task, the next step "
    "reads the task's records).",
)
def validate(file: str, task: str | None) -> Output:
    from ..logic.planfile import validate_plan_file
    from ..views.plan import validated

    result = validate_plan_file(file)
    if task is None or not result.valid:
        return validated(file, result)
    from ..services.context import open_context
    from ..services.plans import submit_first
    from ..services.status import next_for

    ctx = open_context(plumbed=True)  # a read, as task status is
    key = ctx.key(task)
    return validated(file, result, submit_first(ctx, key, file) or next_for(ctx, key))


@command(
    "plan submit",
    "Validate the plan, snapshot it into the task and wait for the user's approval.",
    KEY,
    Arg("file", "The plan (Markdown), inside the work tree.", metavar="FILE", complete="file"),
)
def submit(key: str, file: str) -> Output:
    from ..services import plans
    from ..services.context import open_context
    from ..services.status import next_for
    from ..views.plan import submitted

    ctx = open_context()
    done = plans.submit_plan(ctx, ctx.key(key), file)
    return submitted(done, next_for(ctx, ctx.key(key)))


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
    Arg(
        "--remote",
        "Approve on the task as this remote holds it and publish the approval at once (as run "
        "finish --remote publishes the finish), so other clones see the plan approved.",
        metavar="R",
        complete="remote",
    ),
    about="The approval is a note on the plan's blob in refs/notes/okstra/approvals: editing "
    "the plan afterwards leaves it unapproved.",
)
def approve(key: str, file: str | None, remote: str | None) -> Output:
    from ..services import plans
    from ..services.context import open_context
    from ..services.status import next_for
    from ..views.plan import approved

    ctx = open_context()
    if remote is None:
        done = plans.approve_plan(ctx, ctx.key(key), file)
    else:
        done = plans.approve_plan_shared(ctx, remote, ctx.key(key), file)
    return approved(done, next_for(ctx, ctx.key(key)), remote)


@command(
    "plan status",
    "Say whether the task's plan is approved, and why not; exit 1 when it is not.",
    KEY,
)
def status(key: str) -> Output:
    from ..services import plans
    from ..services.context import open_context
    from ..views.plan import plan_status

    ctx = open_context(plumbed=True)  # a read: no pygit2 to load (issue 25)
    return plan_status(plans.plan_status(ctx, ctx.key(key)))


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

    return views.show(open_context(plumbed=True), key, stage)  # a read: no pygit2


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
    from ..services.context import open_context
    from ..services.planinit import init_plan
    from ..views.plan import initialized

    ctx = open_context()
    task_key = ctx.key(key)
    return initialized(task_key, init_plan(ctx, task_key, file), ctx.clone_dir)
