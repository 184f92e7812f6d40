"""What ``git okstra work`` prints when its loop ends (its progress lines go to stderr as it
runs)."""

from __future__ import annotations

from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..logic.nextstep import Step
    from ..services.worker import WorkReport


def worked(done: WorkReport, step: Step) -> Output:
    """The stages done, released and lost, then the task's next step (``step``: once every
    stage is done, the final verification); with a non-zero exit, why."""
    parts = [f"done: {', '.join(map(str, done.done)) or 'none'}"]
    parts += [f"released stage {n}: {why}" for n, why in sorted(done.released.items())]
    parts += [f"lost stage {n}: {why}" for n, why in sorted(done.lost.items())]
    if done.finished:
        what = f"stage {done.stage}" if done.stage is not None else "every stage"
        parts.append(f"{what} of {done.key} is done")
    parts.append(f"next ({step.kind}, {step.who}): {step.command or step.why}")
    text = "\n".join(parts)
    data = {
        "taskKey": str(done.key),
        "done": done.done,
        "released": {str(n): why for n, why in sorted(done.released.items())},
        "lost": {str(n): why for n, why in sorted(done.lost.items())},
        "finished": done.finished,
        "stage": done.stage,
        "stopped": done.stopped,
        "conflict": done.conflict,
        "next": step.to_data(),
    }
    if not done.code:
        return Output(data, text)
    said = []
    if done.stopped:
        said.append(f"stopped by {done.stopped}; released what the loop held")
    if done.released and not done.stopped:
        failed = ", ".join(map(str, sorted(done.released)))
        said.append(f"the command failed on stage(s) {failed}: released, commits kept")
    if done.conflict:
        said.append(done.conflict)
    if done.lost:
        lost = ", ".join(map(str, sorted(done.lost)))
        said.append(f"stage(s) {lost} changed hands while the loop worked on them")
    return Output(data, text, code=done.code, error="; ".join(said))
