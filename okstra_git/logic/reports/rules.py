"""The rules a run's report data satisfies (docs/workflow.md): the JSON Schema, then every rule
beyond it.

:func:`validate` reports every problem at once, each with the JSON pointer of the field it is
about, a rule id and a message that says what to change. The rules read plain data and never
raise on odd input: where the schema already failed (a wrong type, a missing field) a rule
skips what it cannot read, so each mistake is reported once.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ...core.keys import TASK_TYPES
from ...core.values import Value
from ..phases import NEXT_PHASE

SCHEMA_NAME = "final-report"
SCHEMA_VERSION = 1
FINAL_VERIFICATION = "final-verification"
IMPLEMENTATION_PLANNING = "implementation-planning"
RELEASE_HANDOFF = "release-handoff"
VERDICTS = ("accepted", "conditional-accept", "blocked")
NOT_APPLICABLE = "not-applicable"
WHOLE_TASK = "whole-task"
DEVILS_ADVOCATE = "acceptance-devils-advocate"
IMPLEMENTATION = "implementation"
PROMPT = "Replace:"
"""How every prompt ``report init`` leaves for the writer begins; text still starting so is
the starter's, not the report's, and is refused (rule ``starter-prompt``)."""

# A phase named in free text: whole words, so `implementation` inside `implementation-planning`
# is not a second phase.
_PHASE_WORD = re.compile(r"(?<![\w-])(" + "|".join(TASK_TYPES) + r")(?![\w-])")
# Brief and worker-internal ids a reader cannot resolve: RC-*, RF-*, and F-* not written as
# ``worker:F-*``.
_OPAQUE_ID = re.compile(r"(?<![\w:.-])((?:RC|RF|F)-[0-9]+)(?![\w-])")
_PLAN_ITEMS = ("implementationPlanning", "planBodyVerification", "planItems")
# Tables whose rows the HTML view anchors by id (the carry-in list names earlier rows instead).
_ID_TABLES = (
    ("summary",),
    ("consensus",),
    ("differences",),
    ("evidence", "primary"),
    ("evidence", "secondary"),
    ("risks",),
    ("clarificationItems",),
    _PLAN_ITEMS,
    ("finalVerification", "acceptanceBlockers"),
    ("finalVerification", "residualRisks"),
)


class Problem(Value):
    """One thing wrong with report data."""

    pointer: str
    """JSON pointer (RFC 6901) of the field, ``""`` for the whole document."""
    rule: str
    """Which rule: ``schema`` or the id of a rule beyond it (``verdict-card``, …)."""
    message: str
    """What is wrong and what to change."""

    def line(self) -> str:
        """``/pointer: message [rule]``."""
        return f"{self.pointer or '/'}: {self.message} [{self.rule}]"

    def render(self, path: str) -> str:
        """``path: /pointer: message [rule]`` — the form the CLI prints."""
        return f"{path}: {self.line()}"


def pointer(*parts: object) -> str:
    """A JSON pointer from path parts, escaping ``~`` and ``/`` as RFC 6901 says."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def validate(data: Any) -> list[Problem]:
    """Every problem of ``data``: schema errors first, then the rules in :data:`RULES` order."""
    if not isinstance(data, dict):
        return [Problem("", "schema", f"expected a JSON object, found {_json_kind(data)}")]
    problems = schema_problems(data)
    for rule in RULES:
        problems += rule(data)
    return problems


# ---------------------------------------------------------------------------------------------
# The schema


@functools.cache
def _validator() -> Any:
    import jsonschema  # deferred: only validation needs it

    from ...core.resources import data_dir

    schema = json.loads((data_dir("schemas") / f"{SCHEMA_NAME}.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


def schema_problems(data: Any) -> list[Problem]:
    """The JSON Schema errors of ``data``, one problem per field, in document order."""
    seen: set[tuple[str, str]] = set()
    problems = []
    errors = sorted(_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        for problem in _schema_problem(error):
            if (problem.pointer, problem.message) not in seen:
                seen.add((problem.pointer, problem.message))
                problems.append(problem)
    return problems


def _schema_problem(error: Any) -> Iterator[Problem]:
    at = pointer(*error.absolute_path)
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "required":
        for name in expected:
            if isinstance(value, dict) and name not in value:
                yield Problem(pointer(*error.absolute_path, name), "schema", "missing (required)")
        return
    if kind == "additionalProperties" and isinstance(value, dict):
        known = error.schema.get("properties", {})
        for name in value:
            if name not in known:
                yield Problem(
                    pointer(*error.absolute_path, name),
                    "schema",
                    f"unknown field; expected one of {', '.join(sorted(known))}",
                )
        return
    custom = error.schema.get("x-message") if isinstance(error.schema, dict) else None
    if custom and kind in ("pattern", "minLength", "type"):
        message = f"{_shown(value)} {custom}"
    elif kind in _SCHEMA_WORDING:
        message = _SCHEMA_WORDING[kind](value, expected)
    else:
        message = error.message
    yield Problem(at, "schema", message)


# How okstra words a failed schema keyword: (the failing value, the keyword's value) → text.
_SCHEMA_WORDING: dict[str, Callable[[Any, Any], str]] = {
    "enum": lambda value, allowed: f"{_shown(value)} is not one of {', '.join(map(str, allowed))}",
    "const": lambda value, wanted: f"{_shown(value)} must be {_shown(wanted)}",
    "type": lambda value, wanted: f"expected {_type_name(wanted)}, found {_json_kind(value)}",
    "minItems": lambda value, least: f"needs at least {least} item(s)",
    "minimum": lambda value, least: f"{_shown(value)} is below the minimum {least}",
    "maximum": lambda value, most: f"{_shown(value)} is above the maximum {most}",
    "uniqueItems": lambda value, _: "has repeated items",
}


def _shown(value: Any, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _type_name(expected: Any) -> str:
    names = expected if isinstance(expected, list) else [expected]
    return " or ".join({"object": "an object", "array": "a list"}.get(n, f"a {n}") for n in names)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), "a value")


# ---------------------------------------------------------------------------------------------
# Reading data whose shape may be wrong (the schema reports that; the rules skip it)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def field_at(data: Any, *path: str) -> Any:
    """The value at ``path`` through nested objects, or None."""
    for part in path:
        data = _obj(data).get(part)
    return data


def object_rows(data: Any, *path: str) -> list[tuple[int, dict[str, Any]]]:
    """``(index, row)`` of the objects in the list at ``path``."""
    value = field_at(data, *path)
    if not isinstance(value, list):
        return []
    return [(i, row) for i, row in enumerate(value) if isinstance(row, dict)]


def _task_type(data: dict[str, Any]) -> str | None:
    value = field_at(data, "header", "taskType")
    return value if value in TASK_TYPES else None


def int_list(value: Any) -> list[int]:
    """The integers of a list (booleans are not integers), or [] for anything else."""
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def phases_named(text: Any) -> list[str]:
    """The task types named in ``text`` as whole words, in order, without repeats."""
    if not isinstance(text, str):
        return []
    return list(dict.fromkeys(_PHASE_WORD.findall(text)))


# ---------------------------------------------------------------------------------------------
# The rules beyond the schema


def _task_key(data: dict[str, Any]) -> list[Problem]:
    """header.taskKey is a task key: ``project-id:task-group:task-id``."""
    from ...core.errors import BadInput
    from ...core.keys import parse_task_key

    key = field_at(data, "header", "taskKey")
    if not isinstance(key, str):
        return []
    try:
        parse_task_key(key)
    except BadInput as exc:
        return [Problem("/header/taskKey", "task-key", str(exc))]
    return []


def _text(data: dict[str, Any]) -> list[Problem]:
    """No control characters (tab and line breaks aside) and no unpaired surrogates anywhere:
    a report is a document people read, and the Markdown must be writable as UTF-8."""
    problems = []
    for path, value in strings(data):
        for ch in value:
            code = ord(ch)
            if (code < 0x20 and ch not in "\t\n\r") or 0x7F <= code <= 0x9F:
                what = f"control character U+{code:04X}"
            elif 0xD800 <= code <= 0xDFFF:
                what = f"an unpaired surrogate U+{code:04X}"
            else:
                continue
            problems.append(Problem(pointer(*path), "text", f"contains {what}; write plain text"))
            break
    return problems


def strings(value: Any, path: tuple[object, ...] = ()) -> Iterator[tuple[tuple[object, ...], str]]:
    """Every string in ``value`` (report data) with its path, in document order."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, (*path, index))


def starter_prompts(data: Any) -> list[str]:
    """The JSON pointers of the starter's prompts still in ``data`` (text beginning
    ``Replace:``), in document order."""
    return [pointer(*path) for path, value in strings(data) if value.lstrip().startswith(PROMPT)]


def _starter_prompt(data: dict[str, Any]) -> list[Problem]:
    """No text left from the starter's prompts: ``report init`` writes ``Replace: …`` where the
    writer has to say something, and a report still saying that has not said it."""
    return [
        Problem(
            pointer(*path),
            "starter-prompt",
            f"{_shown(value)} is the starter's prompt, not the report's text; "
            f"replace it with what this run found",
        )
        for path, value in strings(data)
        if value.lstrip().startswith(PROMPT)
    ]


def _generated_at(data: dict[str, Any]) -> list[Problem]:
    """header.generatedAt is an ISO 8601 time with its UTC offset (that it is neither in the
    future nor before the run started is checked against the clock and the task's records)."""
    when = field_at(data, "header", "generatedAt")
    if isinstance(when, str) and parse_time(when) is None:
        return [
            Problem(
                "/header/generatedAt",
                "generated-at",
                f"{_shown(when)} is not an ISO 8601 time with its UTC offset, such as "
                f"2026-12-02T07:40:00+00:00",
            )
        ]
    return []


def _header_stage(data: dict[str, Any]) -> list[Problem]:
    """header.stage belongs to an implementation report (a stage report) only."""
    task_type = _task_type(data)
    stage = field_at(data, "header", "stage")
    if stage is None or task_type in (None, IMPLEMENTATION):
        return []
    return [
        Problem(
            "/header/stage",
            "header-stage",
            f"header.stage names the stage of an implementation stage report; a {task_type} "
            f"report has none (a final verification lists its stages in "
            f"finalVerification.stages)",
        )
    ]


def parse_time(text: str) -> Any:
    """``text`` as an aware datetime (ISO 8601 with an offset or ``Z``), or None."""
    from datetime import datetime

    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _phase_sections(data: dict[str, Any]) -> list[Problem]:
    """finalVerification belongs to final-verification reports and implementationPlanning to
    implementation-planning ones: required there, refused elsewhere."""
    task_type = _task_type(data)
    if task_type is None:
        return []
    problems = []
    for field, phase, what in (
        ("finalVerification", FINAL_VERIFICATION, "scope, stages, blockers and residual risks"),
        ("implementationPlanning", IMPLEMENTATION_PLANNING, "the Stage Map"),
    ):
        if task_type == phase and field not in data:
            problems.append(
                Problem(
                    pointer(field), "phase-sections", f"a {phase} report needs {field} ({what})"
                )
            )
        elif task_type != phase and field in data:
            problems.append(
                Problem(
                    pointer(field),
                    "phase-sections",
                    f"only {phase} reports carry {field}; this is a {task_type} report",
                )
            )
    return problems


def _verdict_card(data: dict[str, Any]) -> list[Problem]:
    """The card repeats the final verdict byte for byte, and its next step is the first
    recommended step."""
    card, final = _obj(data.get("verdictCard")), _obj(data.get("finalVerdict"))
    problems = []
    for field in ("verdictToken", "direction", "nextStep"):
        mine, theirs = card.get(field), final.get(field)
        if isinstance(mine, str) and isinstance(theirs, str) and mine != theirs:
            problems.append(
                Problem(
                    pointer("verdictCard", field),
                    "verdict-card",
                    f"{_shown(mine)} differs from finalVerdict.{field} {_shown(theirs)}; the "
                    f"verdict card repeats the final verdict byte for byte",
                )
            )
    steps = data.get("recommendedNextSteps")
    first = _obj(steps[0]) if isinstance(steps, list) and steps else {}
    text, next_step = first.get("text"), card.get("nextStep")
    if isinstance(text, str) and isinstance(next_step, str) and text != next_step:
        problems.append(
            Problem(
                "/recommendedNextSteps/0/text",
                "verdict-card",
                f"{_shown(text)} differs from verdictCard.nextStep {_shown(next_step)}; the "
                f"first recommended step is the verdict's next step, byte for byte",
            )
        )
    return problems


def _verdict_token(data: dict[str, Any]) -> list[Problem]:
    """The verdict token is ``not-applicable`` except in a final-verification report, where it
    is one of accepted, conditional-accept and blocked."""
    task_type, token = _task_type(data), field_at(data, "finalVerdict", "verdictToken")
    if task_type is None or not isinstance(token, str):
        return []
    if task_type == FINAL_VERIFICATION and token not in VERDICTS:
        message = (
            f"a final-verification report's verdict is one of {', '.join(VERDICTS)}, not {token!r}"
        )
    elif task_type != FINAL_VERIFICATION and token != NOT_APPLICABLE:
        message = (
            f"{token!r}: only final-verification reports carry a verdict; a {task_type} "
            f"report's token is {NOT_APPLICABLE}"
        )
    else:
        return []
    return [Problem("/finalVerdict/verdictToken", "verdict-token", message)]


def _accepted_blockers(data: dict[str, Any]) -> list[Problem]:
    """An accepted verdict has zero acceptance blockers."""
    blockers = field_at(data, "finalVerification", "acceptanceBlockers")
    if field_at(data, "finalVerdict", "verdictToken") != "accepted" or not isinstance(
        blockers, list
    ):
        return []
    if not blockers:
        return []
    ids = ", ".join(str(_obj(b).get("id", "?")) for b in blockers)
    return [
        Problem(
            "/finalVerification/acceptanceBlockers",
            "accepted-blockers",
            f"verdict accepted requires zero acceptance blockers, found {len(blockers)} ({ids}); "
            f"record conditional-accept or blocked, or resolve them",
        )
    ]


def _phase_continuation(data: dict[str, Any]) -> list[Problem]:
    """A non-terminal phase hands over with a ``phase-continuation`` follow-up row: the phase
    the final verdict's next step names, the same task id, autoSpawn no, priority P0.
    release-handoff ends the task and has none."""
    task_type = _task_type(data)
    if task_type is None:
        return []
    rows = [
        (i, r)
        for i, r in object_rows(data, "followUpTasks")
        if r.get("origin") == "phase-continuation"
    ]
    if task_type == RELEASE_HANDOFF:
        return [
            Problem(
                pointer("followUpTasks", i, "origin"),
                "phase-continuation",
                "release-handoff ends the task, so it has no phase-continuation row; remove it",
            )
            for i, _ in rows
        ]
    key = field_at(data, "header", "taskKey")
    task_id = key.split(":")[2] if isinstance(key, str) and key.count(":") == 2 else None
    next_step = field_at(data, "finalVerdict", "nextStep")
    named = phases_named(next_step)
    if not rows:
        return [
            Problem(
                "/followUpTasks",
                "phase-continuation",
                f"a {task_type} report hands over with a follow-up row of origin "
                f"phase-continuation: suggestedTaskType the phase finalVerdict.nextStep names "
                f"(e.g. {NEXT_PHASE[task_type]}), newTaskId {task_id!r}, autoSpawn no, "
                f"priority P0",
            )
        ]
    problems = []
    if isinstance(next_step, str) and not named:
        problems.append(
            Problem(
                "/finalVerdict/nextStep",
                "phase-continuation",
                f"{_shown(next_step)} names no phase; say which phase runs next "
                f"(e.g. {NEXT_PHASE[task_type]}) so the phase-continuation row can follow it",
            )
        )
    for i, row in rows:
        suggested = row.get("suggestedTaskType")
        checks = [
            (
                "suggestedTaskType",
                not named or suggested in named,
                f"{_shown(suggested)} is not the phase finalVerdict.nextStep names "
                f"({', '.join(named)})",
            ),
            (
                "newTaskId",
                task_id is None or row.get("newTaskId") == task_id,
                f"{_shown(row.get('newTaskId'))}: a phase continuation keeps the task id "
                f"{task_id!r}",
            ),
            ("autoSpawn", row.get("autoSpawn") == "no", "a phase continuation has autoSpawn no"),
            ("priority", row.get("priority") == "P0", "a phase continuation has priority P0"),
        ]
        problems += [
            Problem(pointer("followUpTasks", i, field), "phase-continuation", message)
            for field, ok, message in checks
            if not ok
        ]
    return problems


def _release_routing(data: dict[str, Any]) -> list[Problem]:
    """release-handoff follows only an accepted whole-task verification (docs/workflow.md)."""
    if _task_type(data) != FINAL_VERIFICATION:
        return []
    token = field_at(data, "finalVerdict", "verdictToken")
    scope = field_at(data, "finalVerification", "verificationScope")
    if scope is None or (token == "accepted" and scope == WHOLE_TASK):
        return []
    why = (
        f"release-handoff follows only an accepted whole-task verification; this report is "
        f"{token} ({scope})"
    )
    problems = []
    if RELEASE_HANDOFF in phases_named(field_at(data, "finalVerdict", "nextStep")):
        problems.append(Problem("/finalVerdict/nextStep", "release-routing", why))
    for i, row in object_rows(data, "followUpTasks"):
        if row.get("suggestedTaskType") == RELEASE_HANDOFF:
            problems.append(
                Problem(pointer("followUpTasks", i, "suggestedTaskType"), "release-routing", why)
            )
    return problems


def _verification_scope(data: dict[str, Any]) -> list[Problem]:
    """A single-stage verification verifies one stage; each source implementation report is of
    a verified stage, listed once."""
    verification = _obj(data.get("finalVerification"))
    stages = int_list(verification.get("stages"))
    problems = []
    if verification.get("verificationScope") == "single-stage" and len(stages) > 1:
        problems.append(
            Problem(
                "/finalVerification/stages",
                "verification-scope",
                f"a single-stage verification verifies exactly one stage, not {len(stages)}",
            )
        )
    seen: dict[int, int] = {}
    for i, row in object_rows(verification, "sourceImplementationReports"):
        stage = _int(row.get("stage"))
        if stage is None:
            continue
        where = pointer("finalVerification", "sourceImplementationReports", i, "stage")
        if stages and stage not in stages:
            problems.append(
                Problem(
                    where,
                    "verification-scope",
                    f"stage {stage} is not among the verified stages {', '.join(map(str, stages))}",
                )
            )
        elif stage in seen:
            problems.append(
                Problem(
                    where,
                    "verification-scope",
                    f"stage {stage} already has its report at index {seen[stage]}",
                )
            )
        seen.setdefault(stage, i)
    return problems


def _opaque_id(data: dict[str, Any]) -> list[Problem]:
    """No bare ``RC-*``, ``RF-*`` or un-namespaced ``F-*`` where a reader meets them, unless the
    report itself has a row with that id."""
    known = {row_id for _, row_id in report_ids(data)}
    fields: list[tuple[tuple[object, ...], Any]] = []
    for part in ("verdictCard", "finalVerdict"):
        fields += [((part, k), v) for k, v in _obj(data.get(part)).items()]
    fields.append((("rationale",), data.get("rationale")))
    fields += [
        (("clarificationItems", i, "statement"), row.get("statement"))
        for i, row in object_rows(data, "clarificationItems")
    ]
    problems = []
    for path, value in fields:
        if not isinstance(value, str):
            continue
        for token in dict.fromkeys(_OPAQUE_ID.findall(value)):
            if token in known:
                continue
            problems.append(
                Problem(
                    pointer(*path),
                    "opaque-id",
                    f"bare {token} is an id this report never shows; expand what it says "
                    f"inline, or namespace it as worker:item (e.g. claude:{token})",
                )
            )
    return problems


def report_ids(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(pointer, id)`` of every anchored row, in document order."""
    for path in _ID_TABLES:
        for i, row in object_rows(data, *path):
            row_id = row.get("id")
            if isinstance(row_id, str):
                yield pointer(*path, i, "id"), row_id


def _unique_id(data: dict[str, Any]) -> list[Problem]:
    """Row ids are unique in the whole report (the HTML view links to them)."""
    first: dict[str, str] = {}
    problems = []
    for where, row_id in report_ids(data):
        if row_id in first:
            problems.append(
                Problem(
                    where,
                    "unique-id",
                    f"{row_id!r} is already the id at {first[row_id]}; ids are unique in a "
                    f"report (the HTML view links to them)",
                )
            )
        else:
            first[row_id] = where
    return problems


def _clarification_rows(data: dict[str, Any]) -> list[Problem]:
    """Blocks=approval gates a plan's approval, so only implementation-planning uses it; an
    answered row carries the user's input."""
    task_type = _task_type(data)
    problems = []
    for i, row in object_rows(data, "clarificationItems"):
        if row.get("blocks") == "approval" and task_type not in (None, IMPLEMENTATION_PLANNING):
            problems.append(
                Problem(
                    pointer("clarificationItems", i, "blocks"),
                    "approval-blocks",
                    f"Blocks=approval gates a plan's approval and belongs to "
                    f"implementation-planning reports only; in a {task_type} report use "
                    f"next-phase or none",
                )
            )
        user_input = row.get("userInput")
        if (
            row.get("status") == "answered"
            and isinstance(user_input, str)
            and not user_input.strip()
        ):
            problems.append(
                Problem(
                    pointer("clarificationItems", i, "userInput"),
                    "answered-input",
                    "Status answered means the user filled User input, but it is empty; set "
                    "Status open or add the answer",
                )
            )
    return problems


def _stage_map(data: dict[str, Any]) -> list[Problem]:
    """The Stage Map checks (docs/workflow.md) on ``implementationPlanning.stageMap`` — those the
    schema cannot express: S2 numbering, S3 references, S4 cycles, S6 step counts, S9 parallel
    files."""
    from ...core.errors import BadInput
    from ..stagemap import stage_map_from_data
    from ..stagemap import validate as validate_stage_map

    rows = object_rows(data, "implementationPlanning", "stageMap")
    items = field_at(data, "implementationPlanning", "stageMap")
    if not rows or not isinstance(items, list):
        return []
    try:
        stage_map = stage_map_from_data(items)
    except BadInput:
        return []  # not a list of objects: the schema said so
    index: dict[int, int] = {}
    for i, row in rows:
        number = _int(row.get("stage"))
        if number is not None:
            index.setdefault(number, i)
    problems = []
    for finding in validate_stage_map(stage_map):
        if finding.check in ("S1", "S5", "S7"):
            continue  # types, the step cap and predicted files are schema rules
        stage = finding.stages[-1] if finding.stages else None
        where = ("implementationPlanning", "stageMap") + ((index[stage],) if stage in index else ())
        problems.append(
            Problem(pointer(*where), "stage-map", f"{finding.check}: {finding.message}")
        )
    for i, row in rows:
        steps, claimed = row.get("steps"), _int(row.get("effectiveSteps"))
        if isinstance(steps, list) and claimed is not None and len(steps) != claimed:
            problems.append(
                Problem(
                    pointer("implementationPlanning", "stageMap", i, "steps"),
                    "stage-map",
                    f"S6: stage {row.get('stage')} claims {claimed} effective steps but lists "
                    f"{len(steps)} step(s)",
                )
            )
    return problems


def _incremental(data: dict[str, Any]) -> list[Problem]:
    """An incremental re-verification (plan items carried forward) records its scope decision;
    the decision only names Stage Map stages; carried items belong to carried stages."""
    planning = _obj(data.get("implementationPlanning"))
    carried = [
        (i, row)
        for i, row in object_rows(planning, "planBodyVerification", "planItems")
        if "carriedForwardFromSeq" in row
    ]
    decision = planning.get("incrementalDecision")
    mode = _obj(decision).get("mode")
    base = ("implementationPlanning", "incrementalDecision")
    problems = []
    if carried and mode != "incremental":
        first = pointer(*_PLAN_ITEMS, carried[0][0])
        problems.append(
            Problem(
                pointer(*base) + ("/mode" if isinstance(decision, dict) else ""),
                "incremental",
                f"{len(carried)} plan item(s) carry carriedForwardFromSeq (first: {first}), so "
                f"this is an incremental re-verification: record the `incremental scope` "
                f"decision with mode incremental (found {mode or 'no decision'})",
            )
        )
    seq = field_at(data, "header", "seq")
    for i, row in carried:
        source = row.get("carriedForwardFromSeq")
        if isinstance(seq, str) and isinstance(source, str) and source >= seq:
            problems.append(
                Problem(
                    pointer(*_PLAN_ITEMS, i, "carriedForwardFromSeq"),
                    "incremental",
                    f"carried from run {source}, which is not earlier than this run {seq}",
                )
            )
    if not isinstance(decision, dict):
        return problems
    known = set(int_list([r.get("stage") for _, r in object_rows(planning, "stageMap")]))
    reverify, carry = (
        int_list(decision.get("reverifyStages")),
        int_list(decision.get("carryStages")),
    )
    for field, stages in (("reverifyStages", reverify), ("carryStages", carry)):
        for j, stage in enumerate(stages):
            if known and stage not in known:
                problems.append(
                    Problem(
                        pointer(*base, field, j),
                        "incremental",
                        f"stage {stage} is not in the Stage Map "
                        f"({', '.join(map(str, sorted(known)))}); an unknown stage never "
                        f"enters the scope",
                    )
                )
    both = sorted(set(reverify) & set(carry))
    if both:
        problems.append(
            Problem(
                pointer(*base, "carryStages"),
                "incremental",
                f"stage(s) {', '.join(map(str, both))} are both re-verified and carried",
            )
        )
    # Full re-verifies every stage: `incremental scope` lists them all (okstra's older data
    # lists none); a partial list would read as a narrowed scope.
    partial = bool(reverify) and bool(known) and set(reverify) != known
    if mode == "full" and (carry or partial):
        problems.append(
            Problem(
                pointer(*base, "mode"),
                "incremental",
                "mode full re-verifies every stage: carryStages stays empty and reverifyStages "
                "lists every stage (or none)",
            )
        )
    if mode == "incremental":
        if not reverify:
            problems.append(
                Problem(
                    pointer(*base, "reverifyStages"),
                    "incremental",
                    "mode incremental re-verifies at least one stage",
                )
            )
        missing = sorted(known - set(reverify) - set(carry))
        if reverify and missing:
            problems.append(
                Problem(
                    pointer(*base, "carryStages"),
                    "incremental",
                    f"stage(s) {', '.join(map(str, missing))} are neither re-verified nor carried",
                )
            )
        for i, row in carried:
            number = _int(row.get("stage"))
            if number is not None and number in reverify:
                problems.append(
                    Problem(
                        pointer(*_PLAN_ITEMS, i, "stage"),
                        "incremental",
                        f"plan item {row.get('id')} is carried from run "
                        f"{row.get('carriedForwardFromSeq')} but its stage {number} is "
                        f"re-verified in this run; a removed item means the answer's reach is "
                        f"not local — re-verify in full",
                    )
                )
    return problems


def _critic(data: dict[str, Any]) -> list[Problem]:
    """The acceptance critic belongs to final-verification and never drops a candidate: each is
    confirmed (an acceptance blocker) or downgraded (a residual risk)."""
    critic = _obj(field_at(data, "convergence", "critic"))
    if critic.get("enabled") is not True:
        return []
    task_type, mode = _task_type(data), critic.get("mode")
    base = ("convergence", "critic")
    problems = []
    fv = task_type == FINAL_VERIFICATION
    if task_type is not None and mode is not None and (mode == DEVILS_ADVOCATE) != fv:
        expected = DEVILS_ADVOCATE if fv else "coverage"
        problems.append(
            Problem(
                pointer(*base, "mode"),
                "critic",
                f"a {task_type} run's critic works in {expected} mode, not {mode}",
            )
        )
    if mode != DEVILS_ADVOCATE:
        return problems
    proposed, confirmed, downgraded = (
        _int(critic.get(k))
        for k in ("candidatesProposed", "confirmedBlockers", "downgradedToResidual")
    )
    settled = None if confirmed is None or downgraded is None else confirmed + downgraded
    if proposed is not None and settled is not None and proposed != settled:
        problems.append(
            Problem(
                pointer(*base, "candidatesProposed"),
                "critic",
                f"{proposed} candidate(s) proposed but {confirmed} confirmed + {downgraded} "
                f"downgraded = {settled}; every candidate is confirmed as a blocker or "
                f"downgraded to a residual risk, never dropped",
            )
        )
    if fv:
        for count, field, table in (
            (confirmed, "confirmedBlockers", "acceptanceBlockers"),
            (downgraded, "downgradedToResidual", "residualRisks"),
        ):
            rows = field_at(data, "finalVerification", table)
            if count is not None and isinstance(rows, list) and len(rows) < count:
                problems.append(
                    Problem(
                        pointer(*base, field),
                        "critic",
                        f"{count} but finalVerification.{table} holds only {len(rows)}",
                    )
                )
    return problems


RULES: tuple[Callable[[dict[str, Any]], list[Problem]], ...] = (
    _task_key,
    _text,
    _starter_prompt,
    _generated_at,
    _header_stage,
    _phase_sections,
    _verdict_card,
    _verdict_token,
    _accepted_blockers,
    _phase_continuation,
    _release_routing,
    _verification_scope,
    _opaque_id,
    _unique_id,
    _clarification_rows,
    _stage_map,
    _incremental,
    _critic,
)
"""The rules beyond the schema, in the order their problems are reported."""
