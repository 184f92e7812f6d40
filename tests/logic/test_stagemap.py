from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plans import BLOCKED_PLAN, DIAMOND_PLAN, LINEAR_PLAN, plan_text

from okstra_git.core.errors import BadInput
from okstra_git.logic.stagemap import (
    S9_PAIRS_SHOWN,
    Finding,
    StageMap,
    downstream_closure,
    parse_plan,
    reaches,
    stage_map_from_data,
    validate,
)

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "stage-map.schema.json").read_text()
)


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line number of the ``occurrence``-th line containing ``needle``."""
    hits = [n for n, line in enumerate(text.split("\n"), start=1) if needle in line]
    return hits[occurrence - 1]


def checks(findings: list[Finding]) -> list[tuple[str, tuple[int, ...], int | None]]:
    return [(f.check, f.stages, f.line) for f in findings]


# ---------------------------------------------------------------------------------------------
# Valid plans


@pytest.mark.parametrize(
    "text", [LINEAR_PLAN, DIAMOND_PLAN, BLOCKED_PLAN], ids=["linear", "diamond", "blocked"]
)
def test_sample_plans_are_valid(text: str) -> None:
    assert validate(parse_plan(text, "plan.md")) == []


def test_linear_plan_model() -> None:
    stage_map = parse_plan(LINEAR_PLAN, "plan.md")
    assert [s.number for s in stage_map.stages] == [1, 2, 3]
    second = stage_map.stage(2)
    assert second is not None
    assert second.title == "Cache layer"
    assert second.effective_steps == 4
    assert second.depends_on == (1,)
    assert second.predicted_files == ("src/cache.py", "tests/test_cache.py")
    # The indented bullet under step 2 is not a step.
    assert len(second.steps) == 4
    assert second.steps[1] == "Write entries atomically (temp file + `os.replace`)."
    assert second.line == line_of(LINEAR_PLAN, "| 2 | Cache layer")
    assert second.section_line == line_of(LINEAR_PLAN, "### Stage 2")
    assert second.contract_line == line_of(LINEAR_PLAN, "#### Stage Exit Contract", 2)
    assert second.files_line == line_of(LINEAR_PLAN, "`src/cache.py`, `tests/test_cache.py`")
    assert stage_map.line == line_of(LINEAR_PLAN, "## 5.5 Stage Map")
    assert stage_map.path == "plan.md"
    assert stage_map.numbers == [1, 2, 3]


def test_korean_plan_headings_and_labels() -> None:
    stage_map = parse_plan(DIAMOND_PLAN, "계획.md")
    third = stage_map.stage(3)
    assert third is not None
    assert third.title == "인증 토큰 갱신"
    assert third.predicted_files == ("src/auth.py", "tests/test_auth.py")
    assert len(third.steps) == 3
    assert stage_map.stage(4).depends_on == (2, 3)  # type: ignore[union-attr]


def test_tolerated_spellings() -> None:
    text = """\
## Stage Map

| **Stage** | Title | Effective steps (≤6) | Depends-on |
|:-:|---|--:|---|
| `1` | Parse \\| load | `2` | `(none)` |
| Stage 2 | Use | 1 | 1,1 |

## Stages

### Stage 1: 파싱
  1. first
     1. a sub-point, not a step
  2. second

```text
3. inside a fence, not a step
#### Stage Exit Contract
```

#### Stage Exit Contract
- **추가/변경된 파일 (예측):**
  - `./src/a.py` (new)
  - `src/b.py`

### Stage 2
1. only step

#### 1.2 Stage Exit Contract (종료 계약)
* Added/Changed Files (Predicted)： src/c.py, ./docs/c.md
"""
    stage_map = parse_plan(text, "plan.md")
    assert validate(stage_map) == []
    first, second = stage_map.stages
    assert first.title == "Parse | load"
    assert first.steps == ("first", "second")
    assert first.predicted_files == ("src/a.py", "src/b.py")
    assert second.depends_on == (1,)
    assert second.predicted_files == ("src/c.py", "docs/c.md")


# ---------------------------------------------------------------------------------------------
# One broken plan per check


def _break(old: str, new: str, text: str = LINEAR_PLAN) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


EXTRA_STEPS = "".join(f"{i}. Extra step {i}.\n" for i in range(4, 8))
BROKEN: list[tuple[str, str, tuple[str, tuple[int, ...], str | None]]] = [
    (
        "S1 no section",
        _break("## 5.5 Stage Map", "## 5.5 Staging notes"),
        ("S1", (), None),
    ),
    (
        "S1 no table",
        _break("| Stage | Title |", "Stage | Title |")
        .replace("\n|---|---|---|---|\n", "\n\n")
        .replace("| 1 | Parse", "1 | Parse")
        .replace("| 2 | Cache", "2 | Cache")
        .replace("| 3 | Wire", "3 | Wire"),
        ("S1", (), "## 5.5 Stage Map"),
    ),
    (
        "S1 no delimiter row",
        _break("|---|---|---|---|\n", ""),
        ("S1", (), "| Stage | Title |"),
    ),
    (
        "S1 bad effective steps",
        _break("| 1 | Parse the config | 3 |", "| 1 | Parse the config | three |"),
        ("S1", (1,), "| 1 | Parse the config"),
    ),
    (
        "S1 bad depends-on",
        _break("| 2 | Cache layer | 4 | 1 |", "| 2 | Cache layer | 4 | after 1 |"),
        ("S1", (2,), "| 2 | Cache layer"),
    ),
    (
        "S1 too many cells",
        _break("| 2 | Cache layer |", "| 2 | Cache | layer |"),
        ("S1", (), "| 2 | Cache | layer"),
    ),
    (
        "S2 duplicate",
        _break("| 3 | Wire", "| 2 | Wire").replace("### Stage 3 —", "### Stage 2 —"),
        ("S2", (2,), "| 2 | Wire"),
    ),
    (
        "S2 gap",
        _break("| 3 | Wire", "| 4 | Wire").replace("### Stage 3 —", "### Stage 4 —"),
        ("S2", (4,), "| 4 | Wire"),
    ),
    (
        "S2 section without a row",
        LINEAR_PLAN + "\n### Stage 9 — Stray\n1. x\n",
        ("S2", (9,), "### Stage 9"),
    ),
    (
        "S3 unknown stage",
        _break(
            "| Wire the cache into the CLI | 2 | 2 |", "| Wire the cache into the CLI | 2 | 9 |"
        ),
        ("S3", (3,), "| 3 | Wire"),
    ),
    (
        "S3 itself",
        _break("| 2 | Cache layer | 4 | 1 |", "| 2 | Cache layer | 4 | 1, 2 |"),
        ("S3", (2,), "| 2 | Cache layer"),
    ),
    (
        "S4 cycle",
        _break("| 1 | Parse the config | 3 | (none) |", "| 1 | Parse the config | 3 | 3 |"),
        ("S4", (1, 2, 3), "| 1 | Parse the config"),
    ),
    (
        "S5 over the cap",
        _break("| 1 | Parse the config | 3 |", "| 1 | Parse the config | 7 |").replace(
            "run `python -m pytest tests/test_config.py -q`.\n",
            "run `python -m pytest tests/test_config.py -q`.\n" + EXTRA_STEPS,
        ),
        ("S5", (1,), "| 1 | Parse the config"),
    ),
    (
        "S6 count differs",
        _break("| 1 | Parse the config | 3 |", "| 1 | Parse the config | 4 |"),
        ("S6", (1,), "### Stage 1"),
    ),
    (
        "S6 and S7 no section",
        _break("### Stage 3 — Wire the cache into the CLI", "### Wiring"),
        ("S6", (3,), "| 3 | Wire"),
    ),
    (
        "S7 no contract",
        _break("#### Stage Exit Contract", "#### Notes"),
        ("S7", (1,), "### Stage 1"),
    ),
    (
        "S7 no predicted-files line",
        _break(
            "- Added/changed files (predicted): `src/config.py`, `tests/test_config.py`",
            "- Files: `src/config.py`",
        ),
        ("S7", (1,), "#### Stage Exit Contract"),
    ),
    (
        "S7 no files named",
        _break(
            "- Added/changed files (predicted): `src/config.py`, `tests/test_config.py`",
            "- Added/changed files (predicted): (none)",
        ),
        ("S7", (1,), "- Added/changed files (predicted): (none)"),
    ),
    (
        "S9 parallel overlap",
        _break(
            "| Wire the cache into the CLI | 2 | 2 |", "| Wire the cache into the CLI | 2 | 1 |"
        ).replace("`src/cli.py`, `tests/test_cli.py`", "`src/cli.py`, `./src/cache.py`"),
        ("S9", (2, 3), "`src/cli.py`, `./src/cache.py`"),
    ),
]


@pytest.mark.parametrize(("text", "expected"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_each_check_names_its_stage_and_line(
    text: str, expected: tuple[str, tuple[int, ...], str | None]
) -> None:
    check, stages, needle = expected
    line = None if needle is None else line_of(text, needle)
    findings = validate(parse_plan(text, "plan.md"))
    assert (check, stages, line) in checks(findings)
    assert all(f.message for f in findings)


def test_findings_are_isolated_where_the_break_is_local() -> None:
    local = {"S1 bad effective steps", "S3 unknown stage", "S4 cycle", "S5 over the cap"}
    local |= {"S6 count differs", "S7 no contract", "S9 parallel overlap", "S2 gap"}
    local |= {"S1 too many cells", "S7 no files named", "S3 itself"}
    for name, text, (check, stages, _) in BROKEN:
        if name in local:
            found = validate(parse_plan(text, "plan.md"))
            assert [(f.check, f.stages) for f in found] == [(check, stages)], name


def test_messages_are_specific() -> None:
    texts = {name: text for name, text, _ in BROKEN}
    no_section = texts["S6 and S7 no section"]
    row = line_of(no_section, "| 3 | Wire")
    assert checks(validate(parse_plan(no_section, "p"))) == [("S6", (3,), row), ("S7", (3,), row)]
    (s9,) = validate(parse_plan(texts["S9 parallel overlap"], "plan.md"))
    assert "stages 2 and 3" in s9.message
    assert "`src/cache.py`" in s9.message
    (s4,) = validate(parse_plan(texts["S4 cycle"], "plan.md"))
    assert "1 → 3 → 2 → 1" in s4.message
    (s5,) = validate(parse_plan(texts["S5 over the cap"], "plan.md"))
    assert "7 effective steps" in s5.message
    assert s5.render("plan.md") == f"plan.md:{s5.line}: S5: {s5.message}"
    (s1,) = validate(parse_plan(texts["S1 no section"], "plan.md"))
    assert s1.render("plan.md").startswith("plan.md: S1: no `## 5.5 Stage Map` section")


def test_missing_column_is_reported_and_graph_checks_are_skipped() -> None:
    text = _break("| Depends-on |", "| Prereqs |")
    stage_map = parse_plan(text, "plan.md")
    assert not stage_map.dependencies_known
    found = checks(validate(stage_map))
    assert found == [("S1", (), line_of(text, "| Prereqs |"))]
    assert "Depends-on" in validate(stage_map)[0].message


def test_non_integer_stage_cell_keeps_the_rest_checkable() -> None:
    text = _break("| 2 | Cache layer | 4 |", "| two | Cache layer | 4 |")
    found = checks(validate(parse_plan(text, "plan.md")))
    assert ("S1", (), line_of(text, "| two |")) in found
    assert ("S2", (3,), line_of(text, "| 3 | Wire")) in found  # 1, 3 of 2 stages
    assert ("S3", (3,), line_of(text, "| 3 | Wire")) in found  # depends on the lost stage 2
    assert ("S2", (2,), line_of(text, "### Stage 2")) in found  # a section without a row


def test_every_failure_is_reported_in_check_order() -> None:
    text = (
        _break("| 1 | Parse the config | 3 |", "| 1 | Parse the config | 8 |")
        .replace(
            "| Wire the cache into the CLI | 2 | 2 |", "| Wire the cache into the CLI | 2 | 2, 7 |"
        )
        .replace("`src/cli.py`, `tests/test_cli.py`", "(none)")
    )
    found = [(f.check, f.stages) for f in validate(parse_plan(text, "plan.md"))]
    assert found == [("S3", (3,)), ("S5", (1,)), ("S6", (1,)), ("S7", (3,))]


def test_empty_table_is_s1() -> None:
    text = (
        "## 5.5 Stage Map\n\n| Stage | Title | Effective steps | Depends-on |\n|---|---|---|---|\n"
    )
    assert checks(validate(parse_plan(text, "p"))) == [("S1", (), 3)]


def test_zero_steps_is_s5() -> None:
    text = plan_text([(1, [], ["a.py"])], steps=0)
    assert [(f.check, f.stages) for f in validate(parse_plan(text, "p"))] == [("S5", (1,))]


def test_checklist_heading_is_not_the_stage_map() -> None:
    text = _break("## 4.5 Recommended option", "### 4.5.3 Stage Map self-check\n\n| a |\n")
    stage_map = parse_plan(text, "plan.md")
    assert stage_map.line == line_of(text, "## 5.5 Stage Map")
    assert validate(stage_map) == []


def test_stage_sections_in_fences_are_ignored() -> None:
    text = LINEAR_PLAN + "\n```markdown\n### Stage 7 — example\n1. step\n```\n"
    assert validate(parse_plan(text, "plan.md")) == []


def test_duplicate_section_is_s2() -> None:
    text = LINEAR_PLAN + "\n### Stage 2 — Cache layer again\n1. x\n"
    found = checks(validate(parse_plan(text, "plan.md")))
    assert found == [("S2", (2,), line_of(text, "### Stage 2", 2))]


# ---------------------------------------------------------------------------------------------
# Large graphs and S9


def test_forty_stage_plan_validates() -> None:
    stages = [
        (n, [n - 1] if n % 5 != 1 else ([n - 5] if n > 5 else []), [f"src/m{n}.py"])
        for n in range(1, 41)
    ]
    text = plan_text(stages, steps=6)
    stage_map = parse_plan(text, "plan.md")
    assert validate(stage_map) == []
    assert len(stage_map.stages) == 40
    assert reaches(stage_map, 1, 40)
    assert not reaches(stage_map, 2, 6)  # 6 hangs off 1, not 2


def _two_chains() -> list[tuple[int, list[int], list[str]]]:
    # 1 → 2 → … → 10 and 1 → 11 → … → 20: the chains never meet.
    stages = [(1, [], ["src/root.py", "src/shared_with_20.py"])]
    stages += [(n, [n - 1], [f"src/a{n}.py"]) for n in range(2, 11)]
    stages += [(11, [1], ["src/b11.py"])]
    stages += [(n, [n - 1], [f"src/b{n}.py"]) for n in range(12, 21)]
    return stages


def test_s9_finds_overlap_between_independent_stages_deep_in_the_graph() -> None:
    stages = _two_chains()
    stages[9] = (10, [9], ["src/a10.py", "src/clash.py", "src/a5.py"])  # a5: its own ancestor
    stages[19] = (20, [19], ["src/b20.py", "src/clash.py", "src/shared_with_20.py"])
    text = plan_text(stages)
    findings = validate(parse_plan(text, "plan.md"))
    assert checks(findings) == [("S9", (10, 20), line_of(text, "`src/b20.py`"))]
    assert "`src/clash.py`" in findings[0].message
    assert "shared_with_20" not in findings[0].message  # stage 1 is an ancestor of 20


def test_s9_checks_all_pairs_not_only_root_stages() -> None:
    stages = _two_chains()
    stages[4] = (5, [4], ["src/a5.py", "src/b15.py"])
    found = [(f.check, f.stages) for f in validate(parse_plan(plan_text(stages), "p"))]
    assert found == [("S9", (5, 15))]


def test_long_chain_does_not_recurse() -> None:
    stages = [(n, [n - 1] if n > 1 else [], [f"f{n}"]) for n in range(1, 3001)]
    stage_map = stage_map_from_data(
        [
            {"stage": n, "title": "", "effectiveSteps": 1, "dependsOn": d, "predictedFiles": f}
            for n, d, f in stages
        ]
    )
    # The closure check is the point here, not numbering.
    assert validate(stage_map) == []
    assert reaches(stage_map, 1, 3000)
    assert downstream_closure(stage_map, [2999]) == {2999, 3000}


def test_reaches_and_downstream_closure() -> None:
    stage_map = parse_plan(DIAMOND_PLAN, "plan.md")
    assert reaches(stage_map, 1, 4)
    assert reaches(stage_map, 2, 4)
    assert not reaches(stage_map, 4, 1)
    assert not reaches(stage_map, 2, 3)
    assert not reaches(stage_map, 2, 2)
    assert not reaches(stage_map, 1, 99)
    assert downstream_closure(stage_map, [2]) == {2, 4}
    assert downstream_closure(stage_map, {1}) == {1, 2, 3, 4}
    assert downstream_closure(stage_map, [4, 99]) == {4}
    assert downstream_closure(stage_map, []) == set()


def test_reaches_inside_a_cycle() -> None:
    text = _break("| 1 | Parse the config | 3 | (none) |", "| 1 | Parse the config | 3 | 3 |")
    stage_map = parse_plan(text, "plan.md")
    assert reaches(stage_map, 3, 1)
    assert reaches(stage_map, 1, 3)
    assert reaches(stage_map, 2, 2)


# ---------------------------------------------------------------------------------------------
# Report data and schema


@pytest.mark.parametrize("text", [LINEAR_PLAN, DIAMOND_PLAN], ids=["linear", "diamond"])
def test_data_round_trip_and_schema(text: str) -> None:
    data = parse_plan(text, "plan.md").to_data()
    jsonschema.validate(data, SCHEMA)
    again = stage_map_from_data(json.loads(json.dumps(data)))
    assert again.to_data() == data
    assert validate(again) == []
    assert not again.from_markdown


def test_data_accepts_okstra_string_forms() -> None:
    items = [
        {"stage": "1", "title": "a", "effectiveSteps": "2", "dependsOn": "(none)",
         "predictedFiles": "`a.py`, `b.py`"},
        {"stage": 2, "title": "b", "effectiveSteps": 1, "dependsOn": "1",
         "predictedFiles": ["c.py"]},
    ]  # fmt: skip
    stage_map = stage_map_from_data(items)
    assert stage_map.to_data() == [
        {"stage": 1, "title": "a", "effectiveSteps": 2, "dependsOn": [],
         "predictedFiles": ["a.py", "b.py"]},
        {"stage": 2, "title": "b", "effectiveSteps": 1, "dependsOn": [1],
         "predictedFiles": ["c.py"]},
    ]  # fmt: skip
    jsonschema.validate(items[1], SCHEMA["$defs"]["stage"] | {"$defs": SCHEMA["$defs"]})


def test_data_findings() -> None:
    items = [
        {"stage": 1, "title": "a", "effectiveSteps": 9, "dependsOn": [], "predictedFiles": ["x"]},
        {"stage": True, "title": "b", "effectiveSteps": 1, "dependsOn": []},
        {"stage": 2, "title": 5, "effectiveSteps": "many", "dependsOn": [1, "z"]},
        {"stage": 3, "title": "c", "effectiveSteps": 1, "dependsOn": [1], "predictedFiles": ["x"]},
    ]
    found = [(f.check, f.stages, f.line) for f in validate(stage_map_from_data(items))]
    assert found == [
        ("S1", (), None),
        ("S1", (2,), None),
        ("S1", (2,), None),
        ("S1", (2,), None),
        ("S5", (1,), None),
        ("S7", (2,), None),
    ]
    messages = " ".join(f.message for f in validate(stage_map_from_data(items)))
    assert "implementationPlanning.stageMap[1].stage" in messages
    assert "implementationPlanning.stageMap[2].effectiveSteps" in messages
    # stage 3 predicts x like stage 1, but depends on it, so no S9
    assert "S9" not in [f.check for f in validate(stage_map_from_data(items))]


def test_empty_data_is_s1() -> None:
    assert checks(validate(stage_map_from_data([]))) == [("S1", (), None)]


@pytest.mark.parametrize("bad", [{"stage": 1}, "1,2", None, [1, 2], [{"stage": 1}, "x"]])
def test_data_shape_errors_are_bad_input(bad: object) -> None:
    with pytest.raises(BadInput, match=r"implementationPlanning\.stageMap"):
        stage_map_from_data(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "item",
    [
        {"stage": 0, "title": "a", "effectiveSteps": 1, "dependsOn": [], "predictedFiles": []},
        {"stage": 1, "title": "a", "effectiveSteps": 1, "dependsOn": "1 and 2",
         "predictedFiles": []},
        {"stage": 1, "title": "a", "effectiveSteps": 1, "dependsOn": []},
        {"stage": "1", "title": "a", "effectiveSteps": 1, "dependsOn": [], "predictedFiles": []},
    ],
)  # fmt: skip
def test_schema_rejects_bad_items(item: dict[str, object]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([item], SCHEMA)


# ---------------------------------------------------------------------------------------------
# Robustness


PLAN_LINES = LINEAR_PLAN.split("\n") + DIAMOND_PLAN.split("\n")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    stage_map = parse_plan(text, "fuzz.md")
    assert isinstance(stage_map, StageMap)
    validate(stage_map)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(PLAN_LINES),
            st.sampled_from(["| 1 | a | 9 | 2 |", "| 2 | b | x | 1, 1 |", "```", "### Stage 2"]),
            st.text(alphabet="|`\\-#123 (none)Stage\n", max_size=30),
        ),
        max_size=60,
    )
)
def test_plan_shaped_noise_never_raises(lines: list[str]) -> None:
    stage_map = parse_plan("\n".join(lines), "fuzz.md")
    for finding in validate(stage_map):
        assert finding.check in {"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S9"}
        assert finding.message
    downstream_closure(stage_map, stage_map.numbers)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children)
    ),
    max_leaves=12,
)
_ITEM = st.fixed_dictionaries(
    {},
    optional={
        key: _JSON | st.integers(0, 9) | st.lists(st.integers(0, 9))
        for key in ("stage", "title", "effectiveSteps", "dependsOn", "predictedFiles")
    },
)


@settings(max_examples=100, deadline=None)
@given(st.lists(_ITEM | _JSON, max_size=6) | _JSON)
def test_arbitrary_data_raises_only_bad_input(items: object) -> None:
    try:
        stage_map = stage_map_from_data(items)  # type: ignore[arg-type]
    except BadInput:
        return
    validate(stage_map)


def test_binary_ish_input() -> None:
    blob = bytes(range(256)).decode("latin-1") * 2000 + "\x00\r\r\n\ufffd" * 1000
    assert checks(validate(parse_plan(blob, "blob"))) == [("S1", (), None)]
    hidden = blob + "\n" + LINEAR_PLAN + "\x00"
    assert validate(parse_plan(hidden, "blob")) == []


def test_a_fifty_megabyte_plan_parses() -> None:
    filler = "Prose with `code`, a | pipe, 1. a number and 한글 in a long body line.\n"
    body = filler * (50_000_000 // len(filler))
    cut = LINEAR_PLAN.index(
        "#### Stage Exit Contract\n- Added/changed files (predicted): `src/cache"
    )
    text = LINEAR_PLAN[:cut] + body + LINEAR_PLAN[cut:]
    assert len(text) >= 49_000_000
    stage_map = parse_plan(text, "big.md")
    assert validate(stage_map) == []
    assert stage_map.stage(3).line == line_of(LINEAR_PLAN, "| 3 | Wire")  # type: ignore[union-attr]


def _brute_force_parallel_pairs(stage_map) -> dict[str, set[tuple[int, int]]]:
    """docs/plan-format.md's S9 read literally: every pair sharing a file where neither reaches the
    other."""
    found: dict[str, set[tuple[int, int]]] = {}
    stages = {s.number: s for s in stage_map.stages}
    for a in stages:
        for b in stages:
            if a < b and not reaches(stage_map, a, b) and not reaches(stage_map, b, a):
                for name in set(stages[a].predicted_files) & set(stages[b].predicted_files):
                    found.setdefault(name, set()).add((a, b))
    return found


@given(
    st.integers(2, 14).flatmap(
        lambda n: st.lists(
            st.tuples(st.sets(st.integers(1, n), max_size=3), st.sets(st.sampled_from("abc"))),
            min_size=n,
            max_size=n,
        )
    )
)
def test_s9_grouped_by_file_keeps_every_pair_of_the_literal_rule(rows) -> None:
    stage_map = stage_map_from_data(
        [
            {
                "stage": n,
                "title": "",
                "effectiveSteps": 1,
                "dependsOn": sorted(d - {n}),
                "predictedFiles": sorted(files),
            }
            for n, (d, files) in enumerate(rows, 1)
        ]
    )
    expected = _brute_force_parallel_pairs(stage_map)
    s9 = [f for f in validate(stage_map) if f.check == "S9"]
    assert len(s9) == len([name for name, pairs in expected.items() if pairs])
    for finding in s9:
        name = re.search(r"predict `([^`]+)`", finding.message).group(1)
        pairs = expected[name]
        listed = [
            tuple(map(int, p.split(" and "))) for p in re.findall(r"\d+ and \d+", finding.message)
        ]
        assert set(listed) <= pairs and len(listed) == min(len(pairs), S9_PAIRS_SHOWN)
        if len(pairs) > 1:
            assert finding.message.startswith(f"{len(pairs)} pairs of stages")


def test_s9_output_stays_small_when_2000_stages_share_one_file() -> None:
    count = 2000
    stage_map = stage_map_from_data(
        [
            {
                "stage": n,
                "title": "",
                "effectiveSteps": 1,
                "dependsOn": [],
                "predictedFiles": ["src/shared.py", f"src/own{n}.py"],
            }
            for n in range(1, count + 1)
        ]
    )
    [finding] = validate(stage_map)
    pairs = count * (count - 1) // 2
    assert finding.message.startswith(f"{pairs} pairs of stages can run at the same time")
    assert f"(and {pairs - S9_PAIRS_SHOWN} more)" in finding.message
    assert len(finding.render("plan.md")) < 1000 and len(finding.stages) <= 2 * S9_PAIRS_SHOWN
