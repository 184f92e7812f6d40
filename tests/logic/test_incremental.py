"""Incremental re-verification, the pure half (docs/workflow.md): the scope decision and the
carry."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from okstra_git.core.errors import BadInput, Refused
from okstra_git.logic.incremental import (
    CARRY_TAG,
    FULL,
    INCREMENTAL,
    carry_forward,
    decide_scope,
    item_order,
    parse_cutoff,
    parse_impacted,
    stage_map_of,
)
from okstra_git.logic.stagemap import stage_map_from_data

BASE = "a" * 40
OTHER = "b" * 40


def stage_rows(deps: dict[int, list[int]]) -> list[dict]:
    return [
        {
            "stage": n,
            "title": f"stage {n}",
            "effectiveSteps": 1,
            "dependsOn": d,
            "predictedFiles": [f"s{n}.py"],
        }
        for n, d in deps.items()
    ]


def smap(deps: dict[int, list[int]]):
    return stage_map_from_data(stage_rows(deps))


# 1 -> 3 -> 4, 2 alone: "3 depends on 1", "4 depends on 3".
CHAIN = {1: [], 2: [], 3: [1], 4: [3]}


@st.composite
def dags(draw):
    """A Stage Map whose stages only depend on lower numbers (so never a cycle)."""
    n = draw(st.integers(1, 12))
    deps = {
        i: sorted(draw(st.sets(st.integers(1, i - 1), max_size=3))) if i > 1 else []
        for i in range(1, n + 1)
    }
    return deps


# -- examples ---------------------------------------------------------------------------------


def test_incremental_takes_the_downstream_closure():
    decision = decide_scope(smap(CHAIN), [3], BASE, BASE)
    assert decision.to_cli() == {
        "mode": INCREMENTAL,
        "reverify_stages": [3, 4],
        "carry_stages": [1, 2],
        "reason": "the closure 3, 4 of impacted 3 is 2 of 4 stages, within the 0.5 cutoff",
    }
    assert decision.to_data()["reverifyStages"] == [3, 4]


@pytest.mark.parametrize(
    ("impacted", "prev", "cur", "why"),
    [
        ([3], BASE, OTHER, "the base changed"),
        ([3], "", BASE, "no previous base"),
        ([3], None, BASE, "no previous base"),
        ([3], BASE, None, "no current base"),
        ([], BASE, BASE, "no impacted stage"),
        ([3, 9], BASE, BASE, "impacted stage(s) 9 not in the Stage Map"),
        ([1], BASE, BASE, "1, 3, 4 is 3 of 4 stages, more than the 0.5 cutoff"),
    ],
)
def test_full_when_any_safety_condition_fails(impacted, prev, cur, why):
    decision = decide_scope(smap(CHAIN), impacted, prev, cur)
    assert decision.mode == FULL
    assert why in decision.reason
    assert decision.reverify_stages == (1, 2, 3, 4) and decision.carry_stages == ()


def test_an_unknown_impacted_number_never_reaches_reverify():
    decision = decide_scope(smap(CHAIN), [2, 99], BASE, BASE)
    assert decision.mode == FULL and 99 not in decision.reverify_stages


def test_the_cutoff_is_a_real_ratio():
    five = {1: [], 2: [], 3: [1], 4: [3], 5: []}
    assert decide_scope(smap(five), [1], BASE, BASE).mode == FULL  # 3 of 5 > 0.5
    assert decide_scope(smap(five), [1], BASE, BASE, Fraction(3, 5)).mode == INCREMENTAL
    assert decide_scope(smap(five), [1], BASE, BASE, 0.6).mode == INCREMENTAL
    assert decide_scope(smap(five), [2], BASE, BASE, 0).mode == FULL
    assert decide_scope(smap(five), [3], BASE, BASE, 0.4).mode == INCREMENTAL  # exactly 2/5
    assert decide_scope(smap(five), [3], BASE, BASE, 0.39).mode == FULL


def test_a_broken_or_missing_stage_map_is_full():
    cycle = smap({1: [2], 2: [1], 3: []})
    decision = decide_scope(cycle, [3], BASE, BASE)
    assert decision.mode == FULL and "S4" in decision.reason
    assert decide_scope(None, [1], BASE, BASE).reason == "the previous report data has no Stage Map"
    assert stage_map_of({}, "p") is None
    assert stage_map_of({"implementationPlanning": {}}, "p") is None
    with pytest.raises(BadInput, match=r"p: implementationPlanning\.stageMap"):
        stage_map_of({"implementationPlanning": {"stageMap": {"1": {}}}}, "p")
    with pytest.raises(BadInput, match="must be an object"):
        stage_map_of({"implementationPlanning": []}, "p")


def test_parsing_the_options():
    assert parse_impacted("") == [] and parse_impacted(" 3, 1,3 ,") == [1, 3]
    for bad in ("1;2", "x", "-1", "1.5", "٣"):
        with pytest.raises(BadInput, match="--impacted"):
            parse_impacted(bad)
    assert parse_cutoff("0.3") == Fraction(3, 10) and parse_cutoff("1/3") == Fraction(1, 3)
    for bad in ("abc", "1.5", "-0.1", "nan", "1/0"):
        with pytest.raises(BadInput, match="--cutoff"):
            parse_cutoff(bad)


# -- properties of the scope ------------------------------------------------------------------


@given(dags(), st.sets(st.integers(1, 14), max_size=5), st.fractions(0, 1))
def test_scope_properties(deps, impacted, cutoff):
    stage_map = smap(deps)
    stages = set(deps)
    decision = decide_scope(stage_map, impacted, BASE, BASE, cutoff)
    reverify, carry = set(decision.reverify_stages), set(decision.carry_stages)
    assert reverify | carry == stages and not reverify & carry
    assert list(decision.reverify_stages) == sorted(reverify)
    assert list(decision.carry_stages) == sorted(carry)
    assert reverify <= stages  # an unknown impacted number never leaks in
    if decision.mode == INCREMENTAL:
        assert impacted and impacted <= reverify  # the closure holds the impacted set
        assert len(reverify) <= cutoff * len(stages)
        for stage, needs in deps.items():  # and is closed downstream
            if set(needs) & reverify:
                assert stage in reverify
    else:
        assert not carry
    if not impacted or not impacted <= stages:
        assert decision.mode == FULL


@given(dags(), st.lists(st.integers(1, 12), max_size=5), st.randoms())
def test_scope_is_deterministic(deps, impacted, rnd):
    first = decide_scope(smap(deps), impacted, BASE, BASE)
    rows = stage_rows(deps)
    rnd.shuffle(rows)
    shuffled = list(impacted)
    rnd.shuffle(shuffled)
    again = decide_scope(stage_map_from_data(rows), shuffled + impacted, BASE, BASE)
    assert again == first


@given(dags(), st.sets(st.integers(1, 12), max_size=4), st.text(max_size=40), st.text(max_size=40))
def test_full_whenever_the_base_changed(deps, impacted, prev, cur):
    assume(prev != cur)
    assert decide_scope(smap(deps), impacted, prev, cur).mode == FULL


# -- carry --------------------------------------------------------------------------------------

ITEM_IDS = st.sampled_from([f"P-{n}" for n in range(1, 13)] + ["P-Req-1", "P-Req-2", "X"])
ITEMS = st.lists(
    st.fixed_dictionaries(
        {"id": ITEM_IDS, "verdict": st.sampled_from(["AGREE", "DISAGREE"])},
        optional={CARRY_TAG: st.sampled_from(["001", "002"])},
    ),
    max_size=8,
    unique_by=lambda item: item["id"],
)


def report(items: list[dict], version: str = "1.0", **extra) -> dict:
    return {
        "schemaVersion": version,
        "verdictCard": {"verdictToken": "not-applicable"},
        "implementationPlanning": {"planBodyVerification": {"planItems": items}},
        **extra,
    }


@given(ITEMS, ITEMS)
def test_carry_is_idempotent_and_never_loses_a_current_item(prev_items, cur_items):
    prev = report(prev_items, finalVerdict={"verdictToken": "prev"})
    cur = report(cur_items)
    snapshot = copy.deepcopy(cur)
    once = carry_forward(prev, cur, "003")
    assert cur == snapshot  # the input is not changed
    assert carry_forward(prev, once, "003") == once
    merged = once["implementationPlanning"]["planBodyVerification"]["planItems"]
    for item in cur_items:
        assert item in merged
    assert {i["id"] for i in merged} == {i["id"] for i in prev_items + cur_items}
    assert [i["id"] for i in merged] == sorted((i["id"] for i in merged), key=item_order)
    held = {i["id"] for i in cur_items}
    for item in merged:
        if item["id"] not in held:
            assert item[CARRY_TAG] == next(
                p.get(CARRY_TAG, "003") for p in prev_items if p["id"] == item["id"]
            )
    assert "finalVerdict" not in once and once["verdictCard"] == cur["verdictCard"]


def test_carry_example_sorted_naturally_and_tagged():
    prev = report([{"id": "P-10", "v": 1}, {"id": "P-2", "v": 2}, {"id": "P-3", "v": 3}])
    cur = report([{"id": "P-3", "v": 30}])
    merged = carry_forward(prev, cur, "001")
    assert merged["implementationPlanning"]["planBodyVerification"]["planItems"] == [
        {"id": "P-2", "v": 2, CARRY_TAG: "001"},
        {"id": "P-3", "v": 30},
        {"id": "P-10", "v": 1, CARRY_TAG: "001"},
    ]


def test_carry_refuses_schema_drift_and_a_full_decision():
    with pytest.raises(Refused, match=r"^carry refused: schemaVersion drift"):
        carry_forward(report([], "1.0"), report([], "1.1"), "001")
    with pytest.raises(Refused, match="carry refused: the previous data has no schemaVersion"):
        carry_forward({}, report([]), "001")
    cur = report([])
    cur["implementationPlanning"]["incrementalDecision"] = {"mode": "full"}
    with pytest.raises(Refused, match="incrementalDecision is full"):
        carry_forward(report([]), cur, "001")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"schemaVersion": "1.0", "implementationPlanning": []}, "implementationPlanning must be"),
        (report([{"verdict": "AGREE"}]), r"planItems\[0\] must be an object with a string id"),
        (report("nope"), "planItems must be a list"),  # type: ignore[arg-type]
    ],
)
def test_carry_names_malformed_input(data, message):
    with pytest.raises(BadInput, match=message):
        carry_forward(data, report([]), "001")
    with pytest.raises(BadInput, match="--prev-seq"):
        carry_forward(report([]), report([]), "1")


def test_carry_refuses_to_resurrect_an_item_of_a_re_verified_stage():
    decision = {"mode": "incremental", "reverifyStages": [3, 4], "carryStages": [1, 2]}
    prev = report([{"id": "P-1", "stage": 1}, {"id": "P-3", "stage": 3}, {"id": "P-4", "stage": 4}])
    cur = report([{"id": "P-3", "stage": 3}])
    cur["implementationPlanning"]["incrementalDecision"] = decision
    with pytest.raises(Refused, match=r"plan item\(s\) P-4 of re-verified stages are missing"):
        carry_forward(prev, cur, "001")
    cur["implementationPlanning"]["planBodyVerification"]["planItems"].append(
        {"id": "P-4", "stage": 4}
    )
    merged = carry_forward(prev, cur, "001")["implementationPlanning"]["planBodyVerification"]
    assert [i["id"] for i in merged["planItems"]] == ["P-1", "P-3", "P-4"]


def test_a_cutoff_just_under_one_is_kept_exact():
    """Hypothesis found it: a --cutoff just under 1 was rounded to 1, so one stage of one (the
    whole map) was re-verified incrementally; it is more than the cutoff, so full."""
    decision = decide_scope(smap({1: []}), [1], BASE, BASE, Fraction(999_999_999, 10**9))
    assert decision.mode == FULL and not decision.carry_stages
