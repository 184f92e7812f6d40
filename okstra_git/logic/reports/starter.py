"""Starter report data for a phase: the smallest ``data.json`` that passes every rule, with
prompts a report writer replaces. ``git okstra report init`` writes it; tests and the demo
build on it. Pure."""

from __future__ import annotations

from typing import Any

from ...core.shell import okstra
from ..phases import NEXT_PHASE
from .rules import (
    FINAL_VERIFICATION,
    IMPLEMENTATION_PLANNING,
    NOT_APPLICABLE,
    RELEASE_HANDOFF,
    SCHEMA_VERSION,
    WHOLE_TASK,
)

# Where each phase points when its run ends the usual way; final-verification starts from
# "blocked" so a starter can never be recorded as an accepted verdict by accident.
_DIRECTION = {
    "requirements-discovery": "continue-investigation",
    "error-analysis": "continue-investigation",
    "implementation-planning": "begin-implementation",
    "implementation": "approve",
    FINAL_VERIFICATION: "hold",
    RELEASE_HANDOFF: "approve",
}
_NEXT = {**NEXT_PHASE, FINAL_VERIFICATION: "implementation"}


def next_step_text(following: str) -> str:
    """A next step naming the phase that follows (what the phase-continuation row follows),
    or the end of the task after release-handoff."""
    if following == "done":
        return "done — the task is complete; nothing runs next"
    return f"{following} — run it next for this task"


def next_command(task_key: str, following: str) -> str:
    """The command that starts the next phase (or shows the task once it is done)."""
    if following == "done":
        return okstra("task", "show", task_key)
    return okstra("run", "start", task_key, "--type", following)


def starter(
    task_key: str,
    task_type: str,
    seq: str,
    language: str = "en",
    *,
    stage_map: list[dict[str, Any]] | None = None,
    scope: str = WHOLE_TASK,
    stages: list[int] | None = None,
    source_reports: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Valid report data for one run of ``task_type``.

    ``stage_map`` (implementation-planning) is the plan's map with each stage's ``steps``;
    without it a one-stage example is used. ``scope``, ``stages`` and ``source_reports``
    (final-verification) describe what the run verifies, as the task's claims say.
    """
    task_id = task_key.split(":")[-1]
    following = _NEXT[task_type]
    step = next_step_text(following)
    verdict = {
        "verdictToken": "blocked" if task_type == FINAL_VERIFICATION else NOT_APPLICABLE,
        "direction": _DIRECTION[task_type],
        "nextStep": step,
    }
    command = next_command(task_key, following)
    data: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "header": {
            "taskKey": task_key,
            "taskType": task_type,
            "seq": seq,
            "language": language,
            "reportAuthor": "Report writer worker",
            "reportOwner": "Claude lead",
        },
        "readerSummary": {
            "decision": "Replace: what this run decided, in one sentence.",
            "humanAction": "Replace: what a person must do now, or that nothing is needed.",
            "blockers": "Replace: what blocks progress, or that nothing does.",
            "skippableAudit": "Evidence, execution status and consensus tables are audit "
            "material; skip them on a first read.",
            "recommendedCommand": command,
        },
        "verdictCard": dict(verdict),
        "finalVerdict": dict(verdict),
        "rationale": "Replace: why this verdict, in connected prose.",
        "summary": [],
        "consensus": [],
        "differences": [],
        "evidence": {"primary": [], "secondary": []},
        "risks": [],
        "clarificationItems": [],
        "recommendedNextSteps": [{"text": step, "command": command}],
        "followUpTasks": [],
        "executionStatus": [],
    }
    if task_type != RELEASE_HANDOFF:
        data["followUpTasks"].append(
            {
                "origin": "phase-continuation",
                "newTaskId": task_id,
                "suggestedTaskType": following,
                "scope": f"Continue this task with {following}.",
                "reason": "The next phase of the workflow.",
                "autoSpawn": "no",
                "priority": "P0",
            }
        )
    if task_type == IMPLEMENTATION_PLANNING:
        data["implementationPlanning"] = {
            "stageMap": stage_map or [_example_stage()],
            "planBodyVerification": {"planItems": []},
        }
    if task_type == FINAL_VERIFICATION:
        data["finalVerification"] = {
            "verificationScope": scope,
            "stages": list(stages or [1]),
            "acceptanceBlockers": [],
            "residualRisks": [],
            "sourceImplementationReports": list(source_reports or []),
        }
    return data


def _example_stage() -> dict[str, Any]:
    return {
        "stage": 1,
        "title": "Replace: what stage 1 delivers",
        "effectiveSteps": 1,
        "dependsOn": [],
        "predictedFiles": ["path/to/changed_file.py"],
        "steps": ["Replace: the first step, with exact file paths and commands."],
    }


def decide(data: dict[str, Any], verdict: str) -> dict[str, Any]:
    """Set a final-verification report's verdict everywhere the rules compare it: the card, the
    final verdict, the first recommended step and the phase-continuation row. An accepted
    whole-task verdict hands over to release-handoff; any other goes back to implementation."""
    whole = data["finalVerification"]["verificationScope"] == WHOLE_TASK
    following = RELEASE_HANDOFF if verdict == "accepted" and whole else "implementation"
    direction = {"accepted": "approve", "conditional-accept": "hold"}.get(verdict, "reject")
    step = next_step_text(following)
    for part in ("verdictCard", "finalVerdict"):
        data[part] = {"verdictToken": verdict, "direction": direction, "nextStep": step}
    command = next_command(data["header"]["taskKey"], following)
    data["recommendedNextSteps"][0] = {"text": step, "command": command}
    for row in data["followUpTasks"]:
        if row["origin"] == "phase-continuation":
            row["suggestedTaskType"] = following
            row["scope"] = f"Continue this task with {following}."
    return data
