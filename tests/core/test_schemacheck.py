"""schemacheck answers as jsonschema does, for every record schema readers check with it."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_git.core import schemacheck
from okstra_git.core.resources import data_dir

SHA = "0123456789abcdef" * 2 + "01234567"
SAMPLES: dict[str, dict[str, Any]] = {
    "task": {
        "schemaVersion": 1,
        "taskKey": "p:g:i",
        "projectId": "p",
        "taskGroup": "g",
        "taskId": "i",
        "taskType": "implementation-planning",
        "workCategory": "feature",
        "currentStatus": "active",
        "createdAt": "2026-01-01T00:00:00+00:00",
        "updatedAt": "2026-01-01T00:00:00+00:00",
        "workflow": {
            "currentPhase": "implementation",
            "currentPhaseState": "running",
            "phaseStates": {"implementation": "running"},
            "awaitingApproval": False,
            "routingStatus": "ready",
            "nextRecommendedPhase": "done",
        },
        "latestRun": {"taskType": "implementation", "seq": "001", "status": "running"},
        "latestPlan": {"seq": "001", "path": "plans/i.md", "blob": SHA},
        "implementationBaseCommit": SHA,
    },
    "claim": {
        "schemaVersion": 1,
        "taskKey": "p:g:i",
        "stage": 2,
        "runId": "implementation-001",
        "status": "done",
        "startedAt": "2026-01-01T00:00:00+00:00",
        "host": "h",
        "user": "U <u@x>",
        "baseCommit": SHA,
        "startedHeadCommit": SHA,
        "worktreePath": "/w/p/g/i/stage-2",
        "branch": "okstra/g/i/stage-2",
        "batch": [2, 3],
        "doneAt": "2026-01-01T00:00:00+00:00",
        "headCommit": SHA,
        "carry": {"notes": ["x"]},
        "history": ["implementation-000"],
    },
    "run": {
        "schemaVersion": 1,
        "taskKey": "p:g:i",
        "taskType": "final-verification",
        "seq": "002",
        "status": "completed",
        "startedAt": "x",
        "startedBy": "U <u@x>",
        "paths": {"report": ".okstra/r.md"},
        "baseCommit": SHA,
        "convergence": {"critic": {"enabled": True, "provider": "codex", "mode": "coverage"}},
        "incrementalDecision": {
            "mode": "full",
            "reverifyStages": [1],
            "carryStages": [],
            "reason": "r",
            "impacted": [1],
            "prevSeq": "001",
        },
    },
    "verdict": {
        "schemaVersion": 1,
        "taskKey": "p:g:i",
        "scope": "whole-task",
        "stages": [1, 2],
        "base": SHA,
        "head": SHA,
        "headTree": SHA,
        "verdict": "accepted",
        "blockerCount": 0,
        "reportDigest": "sha256:" + "ab" * 32,
        "routing": "release-handoff",
        "recordedAt": "x",
        "recordedBy": "U <u@x>",
    },
    "approval": {
        "schemaVersion": 1,
        "taskKey": "p:g:i",
        "planPath": "plans/i.md",
        "blob": SHA,
        "approvedBy": "U <u@x>",
        "approvedAt": "x",
        "method": "B",
    },
}


def jsonschema_valid(data: Any, name: str) -> bool:
    path = data_dir("schemas") / f"{name}.schema.json"
    validator = jsonschema.Draft202012Validator(json.loads(path.read_text("utf-8")))
    return validator.is_valid(data)


def keywords(node: Any, found: set[str]) -> set[str]:
    """Every keyword a schema uses (property names are not keywords)."""
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    keywords(sub, found)
            else:
                keywords(value, found)
    elif isinstance(node, list):
        for item in node:
            keywords(item, found)
    return found


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_keyword_of_the_checked_schemas_is_understood(name: str):
    assert keywords(schemacheck.schema(name), set()) <= schemacheck.KEYWORDS
    assert schemacheck.problems(SAMPLES[name], name) == []
    assert jsonschema_valid(SAMPLES[name], name)


def test_an_unknown_keyword_fails_closed(monkeypatch):
    """A schema that grows a keyword schemacheck does not know (a new schema file: its nodes
    are compiled the first time they check a value) raises instead of half-checking."""
    grown = {**schemacheck.schema("approval"), "dependentRequired": {"a": ["b"]}}
    monkeypatch.setattr(schemacheck, "schema", lambda name: grown)
    with pytest.raises(ValueError, match="dependentRequired"):
        schemacheck.problems(SAMPLES["approval"], "approval")


def test_problems_name_the_field():
    bad = {**SAMPLES["claim"], "branch": 7, "stage": 0, "evil": 1}
    del bad["headCommit"]
    found = schemacheck.problems(bad, "claim")
    assert "branch: expected string, found integer" in found
    assert "stage: 0 is less than 1" in found
    assert "(top): unexpected field 'evil'" in found
    assert "(top): missing 'headCommit'" in found  # status done requires it


def patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(patterns(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(patterns(item) for item in node))
    return set()


PATTERNS = sorted(set().union(*(patterns(schemacheck.schema(name)) for name in SAMPLES)))


def test_the_verdict_schema_is_checked_without_re():
    """The pre-push hook checks verdict lines: none of their patterns may need re."""
    for pattern in patterns(schemacheck.schema("verdict")):
        assert schemacheck._plain_search(pattern) is not None, pattern


@given(
    st.sampled_from(PATTERNS),
    st.text("0123456789abcdefABC-: sha256BEGIN\n\r\\$", max_size=70),
    st.booleans(),
)
def test_patterns_checked_without_re_answer_as_re(pattern: str, text: str, grown: bool):
    plain = schemacheck._plain_search(pattern)
    if plain is None:
        return
    value = text
    if grown:  # a value of the pattern's own shape, then edited: the edges are tried too
        prefix = pattern.lstrip("^").split("[")[0].replace("\\n", "\n").rstrip("$")
        value = prefix + "0123456789abcdef" * 4 + text
    assert plain(value) == (schemacheck._pattern(pattern).search(value) is not None)


def test_a_sha_with_a_trailing_newline_is_not_a_sha():
    bad = {**SAMPLES["approval"], "blob": SHA + "\n"}
    assert jsonschema_valid(bad, "approval")  # Python's $ matches before a final newline
    (problem,) = schemacheck.problems(bad, "approval")
    assert problem.startswith("blob: ") and problem.endswith("does not match '^[0-9a-f]{40}$'")


# Values without "\n" (the one deliberate difference above).
TEXT = st.text(st.characters(blacklist_characters="\n", max_codepoint=0x2FF), max_size=8)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False),
    TEXT,
    st.sampled_from([SHA, "001", "done", "accepted", "whole-task", "B", "running", "codex"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=6,
)


def paths(node: Any, at: tuple = ()) -> list[tuple]:
    found = [at]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += paths(value, (*at, index))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any]:
    """A sample record with a few random edits: values replaced, keys dropped or added."""
    name = draw(st.sampled_from(sorted(SAMPLES)))
    data = copy.deepcopy(SAMPLES[name])
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.sampled_from(paths(data)))
        if not at:
            continue
        parent = data
        for step in at[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            parent[at[-1]] = draw(JSON)
        elif action == "drop" and isinstance(parent, dict):
            del parent[at[-1]]
        elif isinstance(parent, dict):
            parent[draw(TEXT)] = draw(JSON)
    return name, data


@settings(max_examples=600, deadline=None)
@given(mutated())
def test_schemacheck_agrees_with_jsonschema(case: tuple[str, Any]):
    name, data = case
    assert (schemacheck.problems(data, name) == []) == jsonschema_valid(data, name)
