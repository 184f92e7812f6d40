"""The phase order (docs/workflow.md) and how a finished run moves a task's workflow. Pure."""

from __future__ import annotations

from ..core.keys import TASK_TYPES

# What follows a completed run of each phase; "done" ends the task.
NEXT_PHASE = {
    "requirements-discovery": "implementation-planning",
    "error-analysis": "implementation-planning",
    "implementation-planning": "implementation",
    "implementation": "final-verification",
    "final-verification": "release-handoff",
    "release-handoff": "done",
}
RUN_END_STATUSES = ("completed", "error", "timeout")
FINAL_VERIFICATION = "final-verification"
RELEASE_HANDOFF = "release-handoff"
assert set(NEXT_PHASE) == set(TASK_TYPES)


def next_phase_after(task_type: str, status: str) -> str:
    """A completed run moves on; an error or timeout recommends running the phase again."""
    return NEXT_PHASE[task_type] if status == "completed" else task_type


def waits_for_approval(task_type: str, status: str) -> bool:
    """Implementation may start only from an approved plan (docs/workflow.md)."""
    return task_type == "implementation-planning" and status == "completed"
