"""Creating, listing and reading tasks."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import BadInput, Refused
from ..core.keys import TASK_TYPES, TaskKey, slug
from ..core.shell import okstra
from ..core.userfiles import read_text
from ..core.values import Value
from ..logic.workspace import task_root
from ..records.task import (
    TASKS_PREFIX,
    Task,
    TaskState,
    Workflow,
    now_iso,
    require_task,
    task_ref,
    write_event,
)
from ..records.taskindex import Listed, listed_at
from .context import Context
from .remoteview import Lag, tasks_lag

MAX_BRIEF_BYTES = 1 << 20


def check_task_type(task_type: str) -> str:
    if task_type not in TASK_TYPES:
        raise BadInput(f"unknown task type {task_type!r}; one of: {', '.join(TASK_TYPES)}")
    return task_type


def new_task(
    ctx: Context, key: TaskKey, task_type: str, category: str, brief_file: str | None
) -> TaskState:
    check_task_type(task_type)
    if not category.strip():
        raise BadInput("--category must not be empty")
    files: dict[str, bytes | None] = {}
    if brief_file is not None:
        files["brief.md"] = read_text(brief_file, "brief", MAX_BRIEF_BYTES).encode()

    def change(old: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        if old is not None:
            show = okstra("task", "show", key)
            raise Refused(f"task {key} already exists ({head})", hint=show)
        now = now_iso()
        task = Task(
            task_key=str(key),
            project_id=key.project,
            task_group=key.group,
            task_id=key.task_id,
            task_type=task_type,
            work_category=category,
            current_status="active",
            created_at=now,
            updated_at=now,
            workflow=Workflow(
                current_phase=task_type,
                current_phase_state="pending",
                next_recommended_phase=task_type,
            ),
            brief_path="brief.md" if brief_file is not None else None,
        )
        return task, files

    return write_event(ctx.repo, key, change, f"task new {task_type}")


class TaskList(Value):
    """``task list``: the tasks, and how their refs stand against the fetched remotes'."""

    tasks: list[Listed]
    """Sorted by key."""
    lags: list[Lag]
    """Task refs under the listed prefix that differ from a remote's copy."""


def list_tasks(ctx: Context, group: str | None = None) -> list[Listed]:
    """Every task (or one group's), sorted by key; reads only refs under the tasks prefix."""
    return _summaries(ctx, ctx.repo.list_refs(_prefix(group)), group)


def task_list(ctx: Context, group: str | None) -> TaskList:
    """:func:`list_tasks` and the lag of the same refs (listed once: 100k of them cost)."""
    prefix = _prefix(group)
    refs = ctx.repo.list_refs(prefix)
    return TaskList(_summaries(ctx, refs, group), tasks_lag(ctx.repo, prefix, refs))


def _prefix(group: str | None) -> str:
    return TASKS_PREFIX + (slug(group) + "/" if group is not None else "")


def _summaries(ctx: Context, refs: dict[str, str], group: str | None) -> list[Listed]:
    found = listed_at(ctx.repo, refs, every=group is None)
    if group is not None:
        found = [task for task in found if task.task_group == group]
    return sorted(found, key=Listed.task_key.fget)


class Event(Value):
    commit: str
    time: str
    author: str
    summary: str


def task_log(ctx: Context, key: TaskKey, limit: int | None = None) -> list[Event]:
    """The task's timeline, newest first; only its ``limit`` newest events when given."""
    from itertools import islice

    state = require_task(ctx.repo, key)
    return [
        Event(commit=c.commit, time=c.committed, author=c.author, summary=c.subject)
        for c in islice(ctx.repo.history(state.head, task_ref(state.key)), limit)
    ]


def write_index(ctx: Context, state: TaskState) -> Path:
    """Render the human summary ``task-index.md`` into the workspace (never the truth)."""
    from ..logic.documents import task_index
    from ..records.base import to_data
    from ..records.task import task_ref

    if ctx.workdir is None:
        raise Refused("a bare repository has no work tree to write task-index.md into")
    path = ctx.workdir / task_root(state.key) / "task-index.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = task_index(to_data(state.task), task_ref(state.key))
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)
    return path
