"""What ``task new``, ``task show``, ``task list`` and ``task log`` print."""

from __future__ import annotations

from ..core.keys import TaskKey
from ..records.base import to_data
from ..records.task import require_task, task_ref
from ..services import remoteview
from ..services.context import Context
from . import Output
from .remote import lags_data, notice

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..logic.nextstep import Step
    from ..records.task import TaskState
    from ..services.tasks import Event


def lag_notice(ctx: Context, key: TaskKey, what: str) -> tuple[list[dict[str, str | None]], str]:
    """The task's refs against the fetched remote copies: for ``--json`` (``remoteLag``) and
    the one stderr line every reader prints when the local view is out of date."""
    lags = remoteview.task_lag(ctx.repo, key)
    said = notice(what, lags)
    return lags_data(lags), f"git okstra: note: {said}\n" if said else ""


def created(state: TaskState, step: Step) -> Output:
    """``task new``: the task's ref and first commit, and its next step."""
    return Output(
        {
            "taskKey": state.task.task_key,
            "ref": task_ref(state.key),
            "commit": state.head,
            "next": step.to_data(),
        },
        f"created task {state.task.task_key} at {task_ref(state.key)} ({state.head[:12]})\n"
        f"next ({step.kind}, {step.who}): {step.command or step.why}",
    )


def show(ctx: Context, key_text: str, write_index: bool) -> Output:
    """The manifest as JSON; as text, the task index (rendered only then)."""
    state = require_task(ctx.repo, ctx.key(key_text))
    task = to_data(state.task)
    ref = task_ref(state.key)
    lags, err = lag_notice(ctx, state.key, f"task {state.key}")
    from ..logic.reports.stored import report_view
    from ..services.claimview import stored_reports

    stages = [
        {
            "stage": done.stage,
            "headCommit": done.head_commit,
            "reportPath": done.report_path,
            **(
                report_view(done.report.name, done.report.text)
                if done.report
                else report_view(None, None)
            ),
        }
        for done in stored_reports(ctx, state.key)
    ]
    data = {
        "ref": ref,
        "commit": state.head,
        "task": task,
        "stageReports": stages,
        "remoteLag": lags,
    }
    index_path = None
    if write_index:
        from ..services import tasks  # its records only matter to the index writer

        index_path = tasks.write_index(ctx, state)
    if index_path:
        data["indexPath"] = str(index_path)
        err += f"wrote {index_path}\n"

    def text() -> str:
        from ..logic.documents import stage_report_section, task_index
        from ..services.status import next_for

        # The one next step task status gives, not the phase's run start (which says
        # `run start` while stages wait to be claimed).
        index = task_index(task, ref, next_for(ctx, state.key).command)
        lines = [line for s in stages for line in stage_report_section(s, "##")]
        return index + "\n".join(lines) + ("\n" if lines else "")

    return Output(data, text, err=err)


def list_(ctx: Context, group: str | None) -> Output:
    from ..services import tasks

    listed = tasks.task_list(ctx, group)
    rows = [
        {
            "taskKey": s.task_key,
            "ref": s.ref,
            "taskType": s.task_type,
            "currentPhase": s.current_phase,
            "currentStatus": s.current_status,
            "nextRecommendedPhase": s.next_recommended_phase,
        }
        for s in listed.tasks
    ]

    def text() -> str:
        lines = [
            f"{r['taskKey']}\t{r['currentStatus']}\t{r['currentPhase']} → "
            f"{r['nextRecommendedPhase']}"
            for r in rows
        ]
        return "\n".join(lines or ["no tasks"])

    said = notice("the task list", listed.lags)
    return Output(
        {"tasks": rows, "remoteLag": lags_data(listed.lags)},
        text,
        err=f"git okstra: note: {said}\n" if said else "",
    )


def event_data(event: Event) -> dict[str, str]:
    """One event of a task's timeline, as ``task log --json`` and the board give it."""
    return {
        "commit": event.commit,
        "time": event.time,
        "author": event.author,
        "summary": event.summary,
    }


def log(events: list[Event]) -> Output:
    """``task log``: one line an event, newest first."""
    return Output(
        {"events": [event_data(e) for e in events]},
        "\n".join(f"{e.commit[:12]} {e.time} {e.summary}  ({e.author})" for e in events),
    )
