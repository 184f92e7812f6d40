"""Starter report data for a phase: the smallest ``data.json`` that passes every rule once its
prompts (text beginning ``Replace:``, refused by the ``starter-prompt`` rule until replaced)
are written. ``git okstra report init`` writes it; tests and the demo build on it. Pure but for
the clock, which fills ``header.generatedAt`` when no time is given."""

from __future__ import annotations

from typing import Any

from ...core.shell import okstra
from ..phases import NEXT_PHASE
from .rules import (
    FINAL_VERIFICATION,
    IMPLEMENTATION,
    IMPLEMENTATION_PLANNING,
    NOT_APPLICABLE,
    PROMPT,
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


def next_step_text(following: str, open_stages: list[int] | None = None) -> str:
    """A next step naming the phase that follows (what the phase-continuation row follows),
    or the end of the task after release-handoff. Implementation that follows goes on with
    the stages still open (``open_stages``, when known): nothing new is run, a stage claimed."""
    if following == "done":
        return "done — the task is complete; nothing runs next"
    if following == IMPLEMENTATION:
        still = f" (stage {', '.join(map(str, open_stages))} still open)" if open_stages else ""
        return f"implementation — this task goes on{still}: claim its next ready stage"
    return f"{following} — run it next for this task"


LAST_STAGE_STEP = (
    "final-verification — this was the task's last open stage: integrate the done stages into "
    "the task branch, then run it for this task"
)
"""An implementation report's next step when no stage is left open: the integrate comes
first (``task status`` says the same)."""


def next_command(
    task_key: str, following: str, task_type: str | None = None, remote: str | None = None
) -> str:
    """The command that starts the next phase (or shows the task once it is done); an
    implementation report whose task still has open stages, and a planning report, go on with
    ``stage claim`` (what the next step after either is: a claim starts the implementation run).
    ``remote``: the remote the team shares through, which the command then goes through (a
    claim or run start taken in one clone alone would conflict with the others')."""
    through = ("--remote", remote) if remote else ()
    if following == "done":
        return okstra("task", "show", task_key)
    if following == IMPLEMENTATION and task_type in (IMPLEMENTATION, IMPLEMENTATION_PLANNING):
        return okstra("stage", "claim", task_key, *through)
    return okstra("run", "start", task_key, "--type", following, *through)


def remote_of(command: str) -> str | None:
    """The ``--remote`` a recommended command goes through (None: none), so a verdict decided
    later keeps the remote its starter named."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    at = words.index("--remote") + 1 if "--remote" in words else 0
    return words[at] if 0 < at < len(words) else None


def now_iso() -> str:
    """The clock as ``header.generatedAt`` holds it: UTC, whole seconds."""
    from datetime import UTC, datetime

    return datetime.now(UTC).replace(microsecond=0).isoformat()


def carried_item_row(task_id: str, item: dict[str, str]) -> dict[str, Any]:
    """The follow-up row carrying one unresolved §5 row of the approved plan (``id``,
    ``status``, ``statement``) into an implementation report, as the seed demands: nothing
    asked before approval is dropped on the way."""
    return {
        "origin": "open-question",
        "newTaskId": f"{task_id}-{item['id'].lower()}",
        "suggestedTaskType": "requirements-discovery",
        "scope": f"{item['id']} (still {item['status']} in the approved plan's §5): "
        f"{item['statement'] or 'see the plan'}",
        "reason": f"{item['id']} was {item['status']} when the plan was approved and this run "
        "did not settle it; carried so it is not lost.",
        "autoSpawn": "no",
        "priority": "P1",
    }


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
    stage: int | None = None,
    open_stages: list[int] | None = None,
    open_items: list[dict[str, str]] | None = None,
    generated_at: str | None = None,
    remote: str | None = None,
) -> dict[str, Any]:
    """Report data for one run of ``task_type``, valid once its prompts are written.

    ``stage_map`` (implementation-planning) is the plan's map with each stage's ``steps``;
    without it a one-stage example is used. ``scope``, ``stages`` and ``source_reports``
    (final-verification) describe what the run verifies, as the task's claims say. For an
    implementation report, ``stage`` is the stage a stage report covers, ``open_stages`` the
    Stage Map stages not done besides it (then the task goes on implementing, not to
    final-verification) and ``open_items`` the approved plan's §5 rows still open or answered,
    each carried into a follow-up row. ``generated_at`` defaults to now. ``remote``: the remote
    the recommended commands go through (the clone's team remote).
    """
    task_id = task_key.split(":")[-1]
    following = _NEXT[task_type]
    if task_type == IMPLEMENTATION and open_stages:
        following = IMPLEMENTATION
    step = next_step_text(following, open_stages)
    if task_type == IMPLEMENTATION and following == FINAL_VERIFICATION:
        step = LAST_STAGE_STEP
    verdict = {
        "verdictToken": "blocked" if task_type == FINAL_VERIFICATION else NOT_APPLICABLE,
        "direction": _DIRECTION[task_type],
        "nextStep": step,
    }
    command = next_command(task_key, following, task_type, remote)
    if step == LAST_STAGE_STEP:
        command = okstra("integrate", task_key, *(("--remote", remote) if remote else ()))
    header: dict[str, Any] = {
        "taskKey": task_key,
        "taskType": task_type,
        "seq": seq,
        "language": language,
        "reportAuthor": "Report writer worker",
        "reportOwner": "Claude lead",
        "generatedAt": generated_at or now_iso(),
    }
    if stage is not None:
        header["stage"] = stage
    data: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "header": header,
        "readerSummary": {
            "decision": f"{PROMPT} what this run decided, in one sentence.",
            "humanAction": f"{PROMPT} what a person must do now, or that nothing is needed.",
            "blockers": f"{PROMPT} what blocks progress, or that nothing does.",
            "skippableAudit": "Evidence, execution status and consensus tables are audit "
            "material; skip them on a first read.",
            "recommendedCommand": command,
        },
        "verdictCard": dict(verdict),
        "finalVerdict": dict(verdict),
        "rationale": f"{PROMPT} why this verdict, in connected prose.",
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
    if task_type == IMPLEMENTATION:
        data["followUpTasks"] += [carried_item_row(task_id, item) for item in open_items or []]
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
        "title": f"{PROMPT} what stage 1 delivers",
        "effectiveSteps": 1,
        "dependsOn": [],
        "predictedFiles": ["path/to/changed_file.py"],
        "steps": [f"{PROMPT} the first step, with exact file paths and commands."],
    }


def ask_blocker(data: dict[str, Any]) -> None:
    """Add one acceptance blocker to write to a final-verification report's data: a verdict
    other than accepted says why (the writer adds more as needed)."""
    data["finalVerification"]["acceptanceBlockers"].append(
        {
            "id": "AB-001",
            "statement": f"{PROMPT} what stands in the way of acceptance, in one line.",
            "evidence": f"{PROMPT} what shows it (path:line, log, exit code).",
            "severity": "major",
            "followUpPhase": "implementation",
        }
    )


def decide(data: dict[str, Any], verdict: str, all_stages_done: bool = True) -> dict[str, Any]:
    """Set a final-verification report's verdict everywhere the rules compare it: the card, the
    final verdict, the first recommended step, the reader summary's command and the
    phase-continuation row. The phase that follows is the one the recorded verdict routes the
    task to (``verify_rules``): an accepted whole-task verdict hands over to release-handoff;
    an accepted single-stage one to final-verification once ``all_stages_done``, else back to
    implementation, as any other verdict goes."""
    from ..verify_rules import next_phase, routing

    scope = data["finalVerification"]["verificationScope"]
    following = next_phase(routing(scope, verdict), all_stages_done)
    direction = {"accepted": "approve", "conditional-accept": "hold"}.get(verdict, "reject")
    step = next_step_text(following)
    for part in ("verdictCard", "finalVerdict"):
        data[part] = {"verdictToken": verdict, "direction": direction, "nextStep": step}
    summary = data.get("readerSummary")
    before = summary.get("recommendedCommand") if isinstance(summary, dict) else None
    remote = remote_of(before) if isinstance(before, str) else None
    command = next_command(data["header"]["taskKey"], following, remote=remote)
    data["recommendedNextSteps"][0] = {"text": step, "command": command}
    if isinstance(summary, dict):
        summary["recommendedCommand"] = command
    for row in data["followUpTasks"]:
        if row["origin"] == "phase-continuation":
            row["suggestedTaskType"] = following
            row["scope"] = f"Continue this task with {following}."
    return data
