"""``git okstra task``: create, list, show and follow tasks."""

from __future__ import annotations

from ..core.keys import TASK_TYPES
from ..views import Output
from .declare import KEY, Arg, command, group

group("task", "Tasks, stored as refs/okstra/tasks/<group>/<id>: one commit per event.")


@command(
    "task new",
    "Create a task.",
    KEY,
    Arg(
        "--type",
        "The task's entry phase.",
        metavar="TYPE",
        choices=TASK_TYPES,
        required=True,
        dest="task_type",
    ),
    Arg("--brief", "A Markdown brief to snapshot into the task.", metavar="FILE", complete="file"),
    Arg(
        "--category",
        "The work category, recorded on the task.",
        metavar="CATEGORY",
        default="feature",
    ),
)
def new(key: str, task_type: str, brief: str | None, category: str) -> Output:
    from ..services import tasks
    from ..services.context import open_context
    from ..services.status import next_for
    from ..views.task import created

    ctx = open_context()
    state = tasks.new_task(ctx, ctx.key(key), task_type, category, brief)
    return created(state, next_for(ctx, state.key))


@command(
    "task list",
    "List tasks: key, status, phase and the next recommended phase.",
    Arg("--group", "Only tasks of this task group.", metavar="GROUP"),
)
def list_(group: str | None) -> Output:
    from ..services.context import open_context
    from ..views import task as views

    return views.list_(open_context(plumbed=True), group)  # a read: no pygit2 to load


@command(
    "task show",
    "Show a task's manifest (a Markdown summary; the manifest itself with --json).",
    KEY,
    Arg("--write-index", "Also write .okstra/tasks/<group>/<id>/task-index.md.", flag=True),
)
def show(key: str, write_index: bool) -> Output:
    from ..services.context import open_context
    from ..views import task as views

    return views.show(open_context(plumbed=True), key, write_index)  # read at git's speed


@command("task log", "The task's timeline, newest first.", KEY)
def log(key: str) -> Output:
    from ..services import tasks
    from ..services.context import open_context
    from ..views.task import log as view

    ctx = open_context()
    return view(tasks.task_log(ctx, ctx.key(key)))


@command(
    "task status",
    "One overview: phase, plan and approval, every stage, the latest verdict, how the local "
    "records stand against the remote's, and the exact next command.",
    KEY,
    about="Stages show their state, holder (host, user, run), lease, done commit and whether "
    "it is merged into the task worktree. `next` is the one command for a person or an agent "
    "to run now (in --json: next.command, next.who, next.why). Nothing is fetched: when a "
    "fetch brought newer records, next is `git okstra sync REMOTE`.",
)
def status(key: str) -> Output:
    from ..services.context import open_context
    from ..services.status import task_status
    from ..views.status import status as view

    ctx = open_context(plumbed=True)  # a read: no pygit2 to load (issue 25)
    return view(task_status(ctx, ctx.key(key)))
