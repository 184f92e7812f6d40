"""What ``git okstra work`` prints: a line for each step of its loop as it runs (on stderr),
and what the loop did once it ends."""

from __future__ import annotations

from ..core.shell import command
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..core.keys import TaskKey
    from ..logic.nextstep import Step
    from ..services.worker import Progress, WorkReport

PREFIX = "okstra work: "
"""What starts each progress line (the agent's command writes to the same stderr)."""


def progress(step: Progress) -> str:
    """The progress line (without its newline) for one step the loop tells."""
    return PREFIX + _progress(step)


def _progress(step: Progress) -> str:
    from ..services import worker as w

    match step:
        case w.Waiting():
            return "waiting: " + "; ".join(f"stage {n}: {why}" for n, why in step.blocked)
        case w.FetchRetry():
            return f"could not fetch (will retry): {step.error}"
        case w.Finished():
            return _finished(step.key, step.stage)
        case w.Stuck():
            failed = ", ".join(map(str, step.failed))
            return f"nothing left for this loop: the command failed on stage(s) {failed}"
        case w.NotClaimed():
            return f"not claimed yet: {step.why}"
        case w.Claimed():
            taken = f", taken over from {step.taken_over_from}" if step.taken_over_from else ""
            lease = f"; lease until {step.lease_until}" if step.lease_until else ""
            return f"claimed stage {step.stage} ({step.run_id}{taken}) in {step.worktree}{lease}"
        case w.NotResumed():
            return f"run {step.run_id} not resumed: {step.why}"
        case w.Resumed():
            return (
                f"resumed stage {step.stage} ({step.run_id}, this clone's claim) in {step.worktree}"
            )
        case w.RenewRetry():
            return f"could not renew stage {step.stage}'s lease (will retry): {step.error}"
        case w.Renewed():
            return f"renewed stage {step.stage}'s lease until {step.until}"
        case w.Running():
            return f"running {command(*step.argv)} in {step.worktree} (stage {step.stage})"
        case w.Lost():
            return f"stage {step.stage} is no longer this loop's: {step.why}"
        case w.NotDone():
            return f"stage {step.stage} could not be marked done: {step.error}"
        case w.Done():
            said = f" with {step.report}" if step.report else " (the command wrote no report)"
            where = f"; published to {step.published}" if step.published else ""
            return f"stage {step.stage} done at {step.head[:12]}{said}{where}"
        case w.Note():
            from ..services.claims.common import RunLeftRunning
            from .stage import publish_note, run_note

            note = step.note
            return run_note(note) if isinstance(note, RunLeftRunning) else publish_note(note)
        case w.IntegrateConflict():
            return f"integrating stopped on a conflict: {step.error}"
        case w.IntegrateLater():
            return f"could not integrate now (a later claim does): {step.error}"
        case w.Integrated():
            merged = ", ".join(map(str, step.stages)) or "nothing new"
            where = f"; published to {step.published}" if step.published else ""
            return f"integrated {merged} into {step.task_branch} at {step.head[:12]}{where}"
        case w.NotReleased():
            return f"stage {step.stage} could not be released: {step.error}"
        case w.Released():
            return f"released stage {step.stage} ({step.why}); its commits stay on {step.branch}"
    raise TypeError(f"not a step of the work loop: {step!r}")


def _finished(key: TaskKey | str, stage: int | None) -> str:
    what = f"stage {stage}" if stage is not None else "every stage"
    return f"{what} of {key} is done"


def worked(done: WorkReport, step: Step) -> Output:
    """The stages done, released and lost, then the task's next step (``step``: once every
    stage is done, the final verification); with a non-zero exit, why."""
    parts = [f"done: {', '.join(map(str, done.done)) or 'none'}"]
    parts += [f"released stage {n}: {why}" for n, why in sorted(done.released.items())]
    parts += [f"lost stage {n}: {why}" for n, why in sorted(done.lost.items())]
    if done.finished:
        parts.append(_finished(done.key, done.stage))
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
