"""Report data against what the task's records say (docs/workflow.md): the verified stages and their
implementation reports as the claims record them, and, for ``verify record``, the verdict and
target being recorded. Pure: the service gathers the facts from git."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...core.values import Value, field
from .rules import (
    FINAL_VERIFICATION,
    IMPLEMENTATION,
    Problem,
    field_at,
    int_list,
    object_rows,
    parse_time,
    phases_named,
    pointer,
)

CLOCK_SKEW_SECONDS = 300
"""How far ahead of this clock header.generatedAt may be (another machine's clock): 5 minutes."""


class StageFacts(Value):
    """One Stage Map stage as its claim records it."""

    status: str
    """``started``, ``done``, ``released`` or ``unclaimed``."""
    report_path: str | None = None
    """The implementation report recorded at ``stage done``."""
    run_id: str | None = None
    """The run holding (or that held) the claim, e.g. ``implementation-002``."""


class TaskFacts(Value):
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
    open_plan_items: tuple[Mapping[str, str], ...] = ()
    """The approved plan's §5 rows still ``open`` or ``answered`` (``id``, ``status``,
    ``statement``): an implementation report carries each into its follow-ups."""
    run_started_at: str | None = None
    """When the report's run started (its record; for a stage report, the stage's claim):
    header.generatedAt is not earlier."""


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
    task_type = field_at(data, "header", "taskType")
    if task_type == FINAL_VERIFICATION:
        problems += _verified_stages(data, facts)
    if task_type == IMPLEMENTATION:
        problems += _implementation(data, facts)
    return problems + decision_problems(data, facts.run_decision)


def _implementation(data: dict[str, Any], facts: TaskFacts) -> list[Problem]:
    """An implementation report names a Stage Map stage (if it names one), sends the task to
    final-verification only once no other stage is open, and carries every §5 row the approved
    plan left open or answered into a follow-up row of origin open-question (seed 002)."""
    problems = []
    known = facts.stage_numbers
    stage = field_at(data, "header", "stage")
    if isinstance(stage, int) and known and stage not in known:
        problems.append(
            Problem(
                "/header/stage",
                "task-claims",
                f"stage {stage} is not in the task's Stage Map ({', '.join(map(str, known))})",
            )
        )
    run = f"implementation-{field_at(data, 'header', 'seq')}"
    batch = {n for n, s in facts.stages.items() if s.status == "started" and s.run_id == run}
    mine = {stage} if isinstance(stage, int) else batch
    open_stages = [
        n for n in known if n not in mine and getattr(facts.stages.get(n), "status", "") != "done"
    ]
    named = phases_named(field_at(data, "finalVerdict", "nextStep"))
    if open_stages and FINAL_VERIFICATION in named:
        problems.append(
            Problem(
                "/finalVerdict/nextStep",
                "open-stages",
                f"names final-verification, but stage(s) {', '.join(map(str, open_stages))} of "
                f"the task are not done; the next step is implementation (the task goes on "
                f"implementing), and so is the phase-continuation row",
            )
        )
    rows = [r for _, r in object_rows(data, "followUpTasks") if r.get("origin") == "open-question"]
    texts = " ".join(f"{r.get('scope', '')} {r.get('reason', '')}" for r in rows)
    for item in facts.open_plan_items:
        if not re.search(rf"(?<![\w-]){re.escape(item['id'])}(?![\w-])", texts):
            problems.append(
                Problem(
                    "/followUpTasks",
                    "plan-items-carried",
                    f"{item['id']} is still {item['status']} in the approved plan's §5 and no "
                    f"follow-up row of origin open-question names it; carry it (report init "
                    f"writes that row) so it is not lost",
                )
            )
    return problems


def time_problems(data: dict[str, Any], now: Any, started_at: str | None) -> list[Problem]:
    """header.generatedAt is not in the future (beyond :data:`CLOCK_SKEW_SECONDS` of ``now``, an
    aware datetime) and not before the run started (``started_at``, ISO 8601; None: unknown;
    the same skew allowed, the start being another clone's clock perhaps)."""
    from datetime import timedelta

    text = field_at(data, "header", "generatedAt")
    when = parse_time(text) if isinstance(text, str) else None
    if when is None:
        return []  # missing or unreadable: the schema and the generated-at rule say so
    shown_now = now.replace(microsecond=0).isoformat()
    if when > now + timedelta(seconds=CLOCK_SKEW_SECONDS):
        return [
            Problem(
                "/header/generatedAt",
                "generated-at",
                f"{text} is in the future (the clock here says {shown_now}, and at most "
                f"{CLOCK_SKEW_SECONDS // 60} minutes of clock skew are allowed); write the time "
                f"the report was written",
            )
        ]
    # The run's start may come from another clone's clock: the same skew is allowed.
    started = parse_time(started_at) if started_at else None
    if started is not None and when < started - timedelta(seconds=CLOCK_SKEW_SECONDS):
        return [
            Problem(
                "/header/generatedAt",
                "generated-at",
                f"{text} is before the run started ({started_at}, with "
                f"{CLOCK_SKEW_SECONDS // 60} minutes of clock skew allowed); write the time the "
                f"report was written (now: {shown_now})",
            )
        ]
    return []


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
