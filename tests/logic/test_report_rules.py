"""The report data rules (docs/report-format.md): every fixture valid, each rule broken once with its exact
pointer and message, and the validator total on any JSON."""

# Expected messages are asserted whole; wrapping them would only split sentences.
# ruff: noqa: E501

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reports_data import ALL_TYPES, KEY, fill_prompts, full_report

from okstra_git.core.resources import data_dir
from okstra_git.logic.reports.rules import Problem, pointer, validate
from okstra_git.logic.reports.starter import starter


@pytest.mark.parametrize("task_type", ALL_TYPES)
@pytest.mark.parametrize("language", ["ko", "en"])
def test_fixtures_and_starters_are_valid(task_type: str, language: str) -> None:
    assert validate(full_report(task_type, language)) == []
    # A starter is valid once its prompts are written, and refused, naming each, before.
    data = starter(KEY, task_type, "001", language)
    prompts = [p.pointer for p in validate(data)]
    assert prompts and {p.rule for p in validate(data)} == {"starter-prompt"}
    assert "/readerSummary/decision" in prompts and "/rationale" in prompts
    assert validate(fill_prompts(data)) == []


def test_the_schema_is_a_valid_2020_12_schema() -> None:
    import jsonschema

    schema = json.loads((data_dir("schemas") / "final-report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schemaVersion"] == {
        "const": 1,
        "description": schema["properties"]["schemaVersion"]["description"],
    }


def test_pointer_escapes_as_rfc_6901() -> None:
    assert pointer("a/b", "c~d", 0) == "/a~1b/c~0d/0"
    assert Problem("", "schema", "m").render("f.json") == "f.json: /: m [schema]"


Mutation = Callable[[dict[str, Any]], object]


def broken(task_type: str, mutate: Mutation) -> list[tuple[str, str, str]]:
    data = full_report(task_type)
    mutate(data)
    return [(p.pointer, p.rule, p.message) for p in validate(data)]


def set_verdict(data: dict[str, Any], **values: str) -> None:
    for part in ("verdictCard", "finalVerdict"):
        data[part].update(values)
    if "nextStep" in values:
        data["recommendedNextSteps"][0]["text"] = values["nextStep"]


# One case per rule (and per schema keyword okstra words itself): the data is a valid fixture
# with exactly one thing broken, and the whole problem list is asserted.
CASES: list[tuple[str, str, Mutation, list[tuple[str, str, str]]]] = [
    (
        "starter-prompt",
        "error-analysis",
        lambda d: d["risks"][0].__setitem__("item", "Replace: what is missing."),
        [
            (
                "/risks/0/item",
                "starter-prompt",
                "\"Replace: what is missing.\" is the starter's prompt, not the report's text; replace it with what this run found",
            )
        ],
    ),
    (
        "generated-at-format",
        "error-analysis",
        lambda d: d["header"].__setitem__("generatedAt", "2026-12-02 07:40"),
        [
            (
                "/header/generatedAt",
                "generated-at",
                '"2026-12-02 07:40" is not an ISO 8601 time with its UTC offset, such as 2026-12-02T07:40:00+00:00',
            )
        ],
    ),
    (
        "schema-generated-at-required",
        "error-analysis",
        lambda d: d["header"].pop("generatedAt"),
        [("/header/generatedAt", "schema", "missing (required)")],
    ),
    (
        "header-stage",
        "final-verification",
        lambda d: d["header"].__setitem__("stage", 1),
        [
            (
                "/header/stage",
                "header-stage",
                "header.stage names the stage of an implementation stage report; a final-verification report has none (a final verification lists its stages in finalVerification.stages)",
            )
        ],
    ),
    (
        "schema-source-item",
        "error-analysis",
        lambda d: d["consensus"][0]["sourceItems"].__setitem__(0, "bogus"),
        [
            (
                "/consensus/0/sourceItems/0",
                "schema",
                '"bogus" must be a worker:item pair such as claude:F-001, codex:1.1 or lead:mcp-1',
            )
        ],
    ),
    (
        "schema-required",
        "implementation",
        lambda d: d["header"].pop("seq"),
        [("/header/seq", "schema", "missing (required)")],
    ),
    (
        "schema-unknown-field",
        "implementation",
        lambda d: d["verdictCard"].__setitem__("verdictTokn", "x"),
        [
            (
                "/verdictCard/verdictTokn",
                "schema",
                "unknown field; expected one of direction, nextStep, verdictToken",
            )
        ],
    ),
    (
        "schema-enum",
        "error-analysis",
        lambda d: d["clarificationItems"][0].__setitem__("kind", "question"),
        [
            (
                "/clarificationItems/0/kind",
                "schema",
                '"question" is not one of material, decision, data-point',
            )
        ],
    ),
    (
        "schema-version",
        "error-analysis",
        lambda d: d.__setitem__("schemaVersion", 2),
        [("/schemaVersion", "schema", "2 must be 1")],
    ),
    (
        "schema-seq",
        "error-analysis",
        lambda d: d["header"].__setitem__("seq", "2"),
        [("/header/seq", "schema", '"2" must be a 3-digit run number such as 001')],
    ),
    (
        "schema-type",
        "error-analysis",
        lambda d: d.__setitem__("risks", {"id": "R-1"}),
        [("/risks", "schema", "expected a list, found an object")],
    ),
    (
        "task-key",
        "error-analysis",
        lambda d: d["header"].__setitem__("taskKey", "demo:x"),
        [
            (
                "/header/taskKey",
                "task-key",
                "task key 'demo:x' must have exactly three ':'-separated parts "
                "(project-id:task-group:task-id), or two when the project id comes from config",
            )
        ],
    ),
    (
        "text",
        "error-analysis",
        lambda d: d["clarificationItems"][1].__setitem__("statement", "ring\x07bell"),
        [
            (
                "/clarificationItems/1/statement",
                "text",
                "contains control character U+0007; write plain text",
            )
        ],
    ),
    (
        "phase-sections-missing",
        "final-verification",
        lambda d: d.pop("finalVerification"),
        [
            (
                "/finalVerification",
                "phase-sections",
                "a final-verification report needs finalVerification (scope, stages, blockers and "
                "residual risks)",
            )
        ],
    ),
    (
        "phase-sections-foreign",
        "error-analysis",
        lambda d: d.__setitem__(
            "implementationPlanning",
            full_report("implementation-planning")["implementationPlanning"],
        ),
        [
            (
                "/implementationPlanning",
                "phase-sections",
                "only implementation-planning reports carry implementationPlanning; this is a "
                "error-analysis report",
            )
        ],
    ),
    (
        "verdict-card",
        "implementation",
        lambda d: d["verdictCard"].__setitem__("direction", "hold"),
        [
            (
                "/verdictCard/direction",
                "verdict-card",
                '"hold" differs from finalVerdict.direction "approve"; the verdict card repeats the '
                "final verdict byte for byte",
            )
        ],
    ),
    (
        "verdict-card-next-step",
        "implementation",
        lambda d: d["recommendedNextSteps"][0].__setitem__("text", "final-verification soon"),
        [
            (
                "/recommendedNextSteps/0/text",
                "verdict-card",
                '"final-verification soon" differs from verdictCard.nextStep "final-verification — '
                "this was the task's last open stage: …; the first recommended step is the "
                "verdict's next step, byte for byte",
            )
        ],
    ),
    (
        "verdict-token-outside-final-verification",
        "error-analysis",
        lambda d: set_verdict(d, verdictToken="accepted"),
        [
            (
                "/finalVerdict/verdictToken",
                "verdict-token",
                "'accepted': only final-verification reports carry a verdict; a error-analysis "
                "report's token is not-applicable",
            )
        ],
    ),
    (
        "verdict-token-final-verification",
        "final-verification",
        lambda d: set_verdict(d, verdictToken="not-applicable"),
        [
            (
                "/finalVerdict/verdictToken",
                "verdict-token",
                "a final-verification report's verdict is one of accepted, conditional-accept, "
                "blocked, not 'not-applicable'",
            ),
            (
                "/finalVerdict/nextStep",
                "release-routing",
                "release-handoff follows only an accepted whole-task verification; this report is "
                "not-applicable (whole-task)",
            ),
            (
                "/followUpTasks/0/suggestedTaskType",
                "release-routing",
                "release-handoff follows only an accepted whole-task verification; this report is "
                "not-applicable (whole-task)",
            ),
        ],
    ),
    (
        "accepted-blockers",
        "final-verification",
        lambda d: d["finalVerification"]["acceptanceBlockers"].append(
            {
                "id": "AB-001",
                "statement": "No rollback evidence.",
                "evidence": "none in logs",
                "severity": "major",
            }
        ),
        [
            (
                "/finalVerification/acceptanceBlockers",
                "accepted-blockers",
                "verdict accepted requires zero acceptance blockers, found 1 (AB-001); record "
                "conditional-accept or blocked, or resolve them",
            )
        ],
    ),
    (
        "phase-continuation-missing",
        "requirements-discovery",
        lambda d: d["followUpTasks"].pop(0),
        [
            (
                "/followUpTasks",
                "phase-continuation",
                "a requirements-discovery report hands over with a follow-up row of origin "
                "phase-continuation: suggestedTaskType the phase finalVerdict.nextStep names (e.g. "
                "implementation-planning), newTaskId 'cache-cli', autoSpawn no, priority P0",
            )
        ],
    ),
    (
        "phase-continuation-fields",
        "implementation-planning",
        lambda d: d["followUpTasks"][0].update(
            suggestedTaskType="final-verification",
            newTaskId="other",
            autoSpawn="yes",
            priority="P1",
        ),
        [
            (
                "/followUpTasks/0/suggestedTaskType",
                "phase-continuation",
                '"final-verification" is not the phase finalVerdict.nextStep names '
                "(implementation)",
            ),
            (
                "/followUpTasks/0/newTaskId",
                "phase-continuation",
                "\"other\": a phase continuation keeps the task id 'cache-cli'",
            ),
            (
                "/followUpTasks/0/autoSpawn",
                "phase-continuation",
                "a phase continuation has autoSpawn no",
            ),
            (
                "/followUpTasks/0/priority",
                "phase-continuation",
                "a phase continuation has priority P0",
            ),
        ],
    ),
    (
        "phase-continuation-no-phase-named",
        "error-analysis",
        lambda d: set_verdict(d, nextStep="think about it"),
        [
            (
                "/finalVerdict/nextStep",
                "phase-continuation",
                '"think about it" names no phase; say which phase runs next (e.g. '
                "implementation-planning) so the phase-continuation row can follow it",
            )
        ],
    ),
    (
        "phase-continuation-release-handoff",
        "release-handoff",
        lambda d: d["followUpTasks"].append(full_report("implementation")["followUpTasks"][0]),
        [
            (
                "/followUpTasks/0/origin",
                "phase-continuation",
                "release-handoff ends the task, so it has no phase-continuation row; remove it",
            )
        ],
    ),
    (
        "release-routing",
        "final-verification",
        lambda d: d["finalVerification"].update(
            verificationScope="single-stage", stages=[2], sourceImplementationReports=[]
        ),
        [
            (
                "/finalVerdict/nextStep",
                "release-routing",
                "release-handoff follows only an accepted whole-task verification; this report is "
                "accepted (single-stage)",
            ),
            (
                "/followUpTasks/0/suggestedTaskType",
                "release-routing",
                "release-handoff follows only an accepted whole-task verification; this report is "
                "accepted (single-stage)",
            ),
        ],
    ),
    (
        "verification-scope",
        "final-verification",
        lambda d: (
            set_verdict(
                d, verdictToken="blocked", direction="hold", nextStep="implementation — fix it"
            ),
            d["followUpTasks"][0].update(suggestedTaskType="implementation"),
            d["finalVerification"].update(verificationScope="single-stage", stages=[1, 2]),
            d["finalVerification"]["sourceImplementationReports"][1].update(stage=1),
        ),
        [
            (
                "/finalVerification/stages",
                "verification-scope",
                "a single-stage verification verifies exactly one stage, not 2",
            ),
            (
                "/finalVerification/sourceImplementationReports/1/stage",
                "verification-scope",
                "stage 1 already has its report at index 0",
            ),
            (
                "/finalVerification/sourceImplementationReports/2/stage",
                "verification-scope",
                "stage 3 is not among the verified stages 1, 2",
            ),
        ],
    ),
    (
        "opaque-id",
        "error-analysis",
        lambda d: (
            d.update(rationale="RF-12 and F-3 agree (claude:F-005, RC-2 is fine: S-1)")
            or d["summary"][0].update(id="RC-2")
        ),
        [
            (
                "/rationale",
                "opaque-id",
                "bare RF-12 is an id this report never shows; expand what it says inline, or "
                "namespace it as worker:item (e.g. claude:RF-12)",
            ),
            (
                "/rationale",
                "opaque-id",
                "bare F-3 is an id this report never shows; expand what it says inline, or "
                "namespace it as worker:item (e.g. claude:F-3)",
            ),
        ],
    ),
    (
        "unique-id",
        "error-analysis",
        lambda d: d["risks"][0].__setitem__("id", "S-1"),
        [
            (
                "/risks/0/id",
                "unique-id",
                "'S-1' is already the id at /summary/0/id; ids are unique in a report (the HTML view "
                "links to them)",
            )
        ],
    ),
    (
        "approval-blocks",
        "error-analysis",
        lambda d: d["clarificationItems"][1].__setitem__("blocks", "approval"),
        [
            (
                "/clarificationItems/1/blocks",
                "approval-blocks",
                "Blocks=approval gates a plan's approval and belongs to implementation-planning "
                "reports only; in a error-analysis report use next-phase or none",
            )
        ],
    ),
    (
        "answered-input",
        "error-analysis",
        lambda d: d["clarificationItems"][1].__setitem__("status", "answered"),
        [
            (
                "/clarificationItems/1/userInput",
                "answered-input",
                "Status answered means the user filled User input, but it is empty; set Status open "
                "or add the answer",
            )
        ],
    ),
    (
        "stage-map-cycle-and-steps",
        "implementation-planning",
        lambda d: (
            d["implementationPlanning"]["stageMap"][0].update(dependsOn=[3]),
            d["implementationPlanning"]["stageMap"][2].update(effectiveSteps=2),
        ),
        [
            (
                "/implementationPlanning/stageMap/2",
                "stage-map",
                "S4: stages 1, 2, 3 form a depends-on cycle: 1 → 3 → 2 → 1 (each depends on the "
                "next); remove one edge",
            ),
            (
                "/implementationPlanning/stageMap/2/steps",
                "stage-map",
                "S6: stage 3 claims 2 effective steps but lists 1 step(s)",
            ),
        ],
    ),
    (
        "stage-map-parallel-files",
        "implementation-planning",
        lambda d: d["implementationPlanning"]["stageMap"][1].update(
            dependsOn=[], predictedFiles=["src/config.py"]
        ),
        [
            (
                "/implementationPlanning/stageMap/1",
                "stage-map",
                "S9: stages 1 and 2 can run at the same time (neither depends on the other) but both "
                "predict `src/config.py`; merge the shared work into one stage or add a depends-on "
                "between them",
            )
        ],
    ),
    (
        "incremental-without-decision",
        "implementation-planning",
        lambda d: d["implementationPlanning"]["planBodyVerification"]["planItems"][0].update(
            carriedForwardFromSeq="001"
        ),
        [
            (
                "/implementationPlanning/incrementalDecision",
                "incremental",
                "1 plan item(s) carry carriedForwardFromSeq (first: "
                "/implementationPlanning/planBodyVerification/planItems/0), so this is an "
                "incremental re-verification: record the `incremental scope` decision with mode "
                "incremental (found no decision)",
            )
        ],
    ),
    (
        "incremental-decision",
        "implementation-planning",
        lambda d: (
            d["implementationPlanning"]["planBodyVerification"]["planItems"][0].update(
                carriedForwardFromSeq="002"
            ),
            d["implementationPlanning"].update(
                incrementalDecision={
                    "mode": "incremental",
                    "reverifyStages": [1, 9],
                    "carryStages": [1],
                    "reason": "closure [1] within cutoff",
                }
            ),
        ),
        [
            (
                "/implementationPlanning/planBodyVerification/planItems/0/carriedForwardFromSeq",
                "incremental",
                "carried from run 002, which is not earlier than this run 002",
            ),
            (
                "/implementationPlanning/incrementalDecision/reverifyStages/1",
                "incremental",
                "stage 9 is not in the Stage Map (1, 2, 3); an unknown stage never enters the "
                "scope",
            ),
            (
                "/implementationPlanning/incrementalDecision/carryStages",
                "incremental",
                "stage(s) 1 are both re-verified and carried",
            ),
            (
                "/implementationPlanning/incrementalDecision/carryStages",
                "incremental",
                "stage(s) 2, 3 are neither re-verified nor carried",
            ),
            (
                "/implementationPlanning/planBodyVerification/planItems/0/stage",
                "incremental",
                "plan item P-1 is carried from run 002 but its stage 1 is re-verified in this run; "
                "a removed item means the answer's reach is not local — re-verify in full",
            ),
        ],
    ),
    (
        "incremental-full-mode",
        "implementation-planning",
        lambda d: d["implementationPlanning"].update(
            incrementalDecision={
                "mode": "full",
                "reverifyStages": [2],
                "carryStages": [],
                "reason": "base-ref changed",
            }
        ),
        [
            (
                "/implementationPlanning/incrementalDecision/mode",
                "incremental",
                "mode full re-verifies every stage: carryStages stays empty and reverifyStages "
                "lists every stage (or none)",
            )
        ],
    ),
    (
        "critic-never-drops",
        "final-verification",
        lambda d: d["convergence"]["critic"].update(candidatesProposed=3),
        [
            (
                "/convergence/critic/candidatesProposed",
                "critic",
                "3 candidate(s) proposed but 0 confirmed + 1 downgraded = 1; every candidate is "
                "confirmed as a blocker or downgraded to a residual risk, never dropped",
            )
        ],
    ),
    (
        "critic-counts-match-the-tables",
        "final-verification",
        lambda d: d["convergence"]["critic"].update(candidatesProposed=3, downgradedToResidual=3),
        [
            (
                "/convergence/critic/downgradedToResidual",
                "critic",
                "3 but finalVerification.residualRisks holds only 1",
            )
        ],
    ),
    (
        "critic-mode",
        "final-verification",
        lambda d: d["convergence"]["critic"].update(mode="coverage"),
        [
            (
                "/convergence/critic/mode",
                "critic",
                "a final-verification run's critic works in acceptance-devils-advocate mode, not "
                "coverage",
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("task_type", "mutate", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_each_rule_broken_once(task_type: str, mutate: Mutation, expected: list) -> None:
    assert broken(task_type, mutate) == expected


def test_every_rule_has_a_case() -> None:
    from okstra_git.logic.reports import rules

    covered = {problem[1] for case in CASES for problem in case[3]}
    named = {fn.__name__.lstrip("_").replace("_", "-") for fn in rules.RULES}
    # Rule ids are the function names, except where one function words several rules.
    aliases = {
        "clarification-rows": {"approval-blocks", "answered-input"},
    }
    expected = set()
    for name in named:
        expected |= aliases.get(name, {name})
    assert expected | {"schema"} == covered


def test_a_surfaced_id_is_not_opaque() -> None:
    data = full_report("error-analysis")
    data["summary"][0]["id"] = "RC-4"
    data["rationale"] = "RC-4 holds; claude:F-005 agrees."
    assert validate(data) == []


def test_not_an_object() -> None:
    assert validate([1]) == [Problem("", "schema", "expected a JSON object, found a list")]


def test_all_problems_at_once() -> None:
    data = full_report("final-verification")
    data["header"]["seq"] = "x"
    data["verdictCard"]["direction"] = "hold"
    data["followUpTasks"] = []
    data["rationale"] = "see RC-9"
    rules = [p.rule for p in validate(data)]
    assert rules == ["schema", "verdict-card", "phase-continuation", "opaque-id"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_any_json_is_judged_never_raises(value: Any) -> None:
    problems = validate(value)
    assert all(isinstance(p, Problem) for p in problems)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ALL_TYPES), st.data())
def test_damaged_fixtures_never_raise(task_type: str, data: st.DataObject) -> None:
    report = full_report(task_type)
    for _ in range(data.draw(st.integers(1, 4))):
        node: Any = report
        path: list[Any] = []
        while isinstance(node, (dict, list)) and node and data.draw(st.booleans()):
            key = data.draw(
                st.sampled_from(list(node) if isinstance(node, dict) else range(len(node)))
            )
            path.append(key)
            node = node[key]
        if not path:
            continue
        parent = report
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = data.draw(_JSON)
    snapshot = copy.deepcopy(report)
    validate(report)
    assert report == snapshot  # validation never changes the data
