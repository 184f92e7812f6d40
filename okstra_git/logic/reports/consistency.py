"""Report data against what the task's records say (docs/workflow.md): the verified stages and their
implementation reports as the claims record them, and, for ``verify record``, the verdict and
target being recorded. Pure: the service gathers the facts from git."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .rules import FINAL_VERIFICATION, Problem, field_at, int_list, object_rows, pointer

UNCLAIMED = "unclaimed"


@dataclass(frozen=True)
class StageFacts:
    """One Stage Map stage as its claim records it."""

    status: str
    """``started``, ``done``, ``released`` or ``unclaimed``."""
    report_path: str | None = None
    """The implementation report recorded at ``stage done``."""


@dataclass(frozen=True)
class TaskFacts:
    """What the task's records say, for the consistency rules."""

    task_key: str
    """The task, exactly as typed."""
    stage_numbers: tuple[int, ...] = ()
    """The Stage Map of the task's plan (empty without a plan)."""
    stages: Mapping[int, StageFacts] = field(default_factory=dict)
    """Each claimed stage's state; a stage without a claim is missing."""
    run_decision: Mapping[str, Any] | None = None
    """The scope ``incremental scope KEY`` recorded on the report's own run (the run record
    named by header.taskType and header.seq), if any."""


def task_problems(data: dict[str, Any], facts: TaskFacts) -> list[Problem]:
    """The report belongs to the task, and a final-verification report's stages and source
    implementation reports are the ones the task's claims record."""
    problems = []
    key = field_at(data, "header", "taskKey")
    if isinstance(key, str) and key != facts.task_key:
        problems.append(
            Problem(
                "/header/taskKey",
                "task-claims",
                f"{key!r} is not the task {facts.task_key!r}",
            )
        )
    if field_at(data, "header", "taskType") == FINAL_VERIFICATION:
        problems += _verified_stages(data, facts)
    return problems + decision_problems(data, facts.run_decision)


DECISION_FIELDS = ("mode", "reverifyStages", "carryStages", "reason")


def decision_problems(data: dict[str, Any], recorded: Mapping[str, Any] | None) -> list[Problem]:
    """A run whose record says it re-verifies incrementally carries that same decision in its
    report data, so the report says what the run really did (docs/workflow.md)."""
    if recorded is None or recorded.get("mode") != "incremental":
        return []
    base = ("implementationPlanning", "incrementalDecision")
    found = field_at(data, *base)
    if not isinstance(found, dict):
        stages = ", ".join(map(str, recorded.get("reverifyStages") or []))
        return [
            Problem(
                pointer(*base),
                "incremental",
                f"the run's record says it re-verifies incrementally (stages {stages}); record "
                "that incremental scope decision here",
            )
        ]
    return [
        Problem(
            pointer(*base, name),
            "incremental",
            f"{found.get(name)!r} differs from the decision recorded on the run, "
            f"{recorded.get(name)!r}",
        )
        for name in DECISION_FIELDS
        if found.get(name) != recorded.get(name)
    ]


def _verified_stages(data: dict[str, Any], facts: TaskFacts) -> list[Problem]:
    verification = data.get("finalVerification")
    if not isinstance(verification, dict):
        return []
    stages = int_list(verification.get("stages"))
    known = facts.stage_numbers
    problems = []
    base = ("finalVerification", "stages")
    if verification.get("verificationScope") == "whole-task":
        missing = [n for n in known if n not in stages]
        if missing:
            problems.append(
                Problem(
                    pointer(*base),
                    "task-claims",
                    f"misses stage(s) {', '.join(map(str, missing))} of the task's Stage Map "
                    f"({', '.join(map(str, known))}); a whole-task verification covers every "
                    f"stage",
                )
            )
    for j, stage in enumerate(stages):
        claim = facts.stages.get(stage)
        if known and stage not in known:
            message = f"stage {stage} is not in the task's Stage Map ({', '.join(map(str, known))})"
        elif claim is None or claim.status != "done":
            state = "has no claim" if claim is None else f"is {claim.status}"
            message = f"stage {stage} {state} in the task's claims; only done stages are verified"
        else:
            continue
        problems.append(Problem(pointer(*base, j), "task-claims", message))
    listed: dict[int, tuple[int, Any]] = {}
    for i, row in object_rows(verification, "sourceImplementationReports"):
        number = row.get("stage")
        if isinstance(number, int) and number in stages:
            listed.setdefault(number, (i, row.get("path")))
    for stage in stages:
        claim = facts.stages.get(stage)
        recorded = claim.report_path if claim is not None else None
        where = ("finalVerification", "sourceImplementationReports")
        if stage not in listed:
            if recorded:
                problems.append(
                    Problem(
                        pointer(*where),
                        "task-claims",
                        f"stage {stage}'s claim records its report {recorded}; list it",
                    )
                )
            continue
        i, path = listed[stage]
        if recorded is None:
            message = f"stage {stage}'s claim records no report, so none can be listed"
        elif path != recorded:
            message = f"{path!r} is not the report stage {stage}'s claim records ({recorded!r})"
        else:
            continue
        problems.append(Problem(pointer(*where, i, "path"), "task-claims", message))
    return problems


def record_problems(
    data: dict[str, Any], verdict: str, scope: str, stages: Sequence[int]
) -> list[Problem]:
    """What ``verify record`` adds: the report is a final-verification report whose verdict is
    the one being recorded, for the target just resolved."""
    task_type = field_at(data, "header", "taskType")
    token = field_at(data, "finalVerdict", "verdictToken")
    claimed_scope = field_at(data, "finalVerification", "verificationScope")
    claimed = int_list(field_at(data, "finalVerification", "stages"))
    checks = [
        (
            "/header/taskType",
            task_type != FINAL_VERIFICATION,
            f"{task_type!r}: a verdict comes from a final-verification report",
        ),
        (
            "/finalVerdict/verdictToken",
            isinstance(token, str) and token != verdict,
            f"{token!r} differs from --verdict {verdict!r}",
        ),
        (
            "/finalVerification/verificationScope",
            isinstance(claimed_scope, str) and claimed_scope != scope,
            f"{claimed_scope!r}, but the target verified is {scope!r}",
        ),
        (
            "/finalVerification/stages",
            bool(claimed) and sorted(claimed) != sorted(stages),
            f"{', '.join(map(str, claimed))}, but the target verifies stage(s) "
            f"{', '.join(map(str, stages))}",
        ),
    ]
    return [Problem(at, "verify-record", message) for at, wrong, message in checks if wrong]
