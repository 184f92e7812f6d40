"""What ``run start`` and ``run finish`` print: the run, what it wrote, and the task's next
step."""

from __future__ import annotations

from ..records.base import to_data
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..logic.nextstep import Step
    from ..records.run import RunRecord
    from ..records.task import TaskState


def started_elsewhere(why: str, step: Step) -> Output:
    """Nothing started: another clone started the run since this one last fetched (an expected
    outcome of two clones following one task), and what comes next."""
    return Output(
        {"run": None, "started": False, "why": why, "next": step.to_data()},
        f"nothing started: {why}\nnext ({step.kind}, {step.who}): {step.command or step.why}",
    )


def started(
    state: TaskState, record: RunRecord, wrote: dict[str, str], remote: str | None, step: Step
) -> Output:
    """The run started (and where it was published), each file or folder it made, and the
    next step."""
    lines = [
        f"started {record.task_type} run {record.seq} of {record.task_key}"
        + (f", published to {remote}" if remote else "")
    ]
    lines += [
        f"  {'made' if path.endswith('/') else 'wrote'} {kind}: {path}"
        for kind, path in wrote.items()
    ]
    lines.append(f"next ({step.kind}, {step.who}): {step.why}")
    if step.command:
        lines.append(f"  {step.command}")
    return Output(
        {"run": to_data(record), "commit": state.head, "wrote": wrote, "next": step.to_data()},
        "\n".join(lines),
    )


def finished(state: TaskState, record: RunRecord, remote: str | None, step: Step) -> Output:
    """How the run ended, where the workflow goes, and the next step."""
    flow = state.task.workflow
    return Output(
        {
            "run": to_data(record),
            "workflow": to_data(flow),
            "commit": state.head,
            "publishedTo": remote,
            "next": step.to_data(),
        },
        f"{record.task_type} run {record.seq}: {record.status}"
        + (f", published to {remote}" if remote else "")
        + f"; next phase: {flow.next_recommended_phase} ({flow.routing_status})\n"
        f"next ({step.kind}, {step.who}): {step.command or step.why}",
    )
