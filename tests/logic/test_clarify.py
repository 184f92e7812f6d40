from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plans import BLOCKED_PLAN, BLOCKED_PLAN_CHECKED, DIAMOND_PLAN, LINEAR_PLAN

from okstra_git.core.errors import BadInput
from okstra_git.logic.clarify import (
    ClarificationItem,
    append_audit_line,
    approval_problems,
    detect_language,
    find_approval_markers,
    flip_marker,
    parse_clarification_items,
    unresolved_approval_blockers,
)

HEADER = (
    "| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |\n"
    "|---|---|---|---|---|---|---|---|\n"
)


def section5(*rows: str, header: str = HEADER) -> str:
    return (
        "- [x] Approved\n\n## 5. Clarification Items\n\n"
        + header
        + "".join(rows)
        + "\n## 6. Next\n"
    )


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if needle in line)


# ---------------------------------------------------------------------------------------------
# Parsing §5


def test_blocked_plan_rows() -> None:
    report = parse_clarification_items(BLOCKED_PLAN)
    assert report.schema_present
    assert report.line == line_of(BLOCKED_PLAN, "## 5. Clarification Items")
    assert report.malformed == ()
    assert [(i.id, i.blocks, i.status) for i in report.items] == [
        ("C-001", "approval", "resolved"),
        ("C-002", "next-phase", "open"),
        ("C-003", "approval", "open"),
    ]
    first = report.items[0]
    assert first == ClarificationItem(
        id="C-001",
        ticket_id="CFG-12",
        kind="decision",
        statement=(
            "Should unknown config keys fail the run or only warn? Stage 1 rejects them today."
        ),
        expected_form="(a) fail (b) warn",
        blocks="approval",
        status="resolved",
        user_input="(a) fail",
        line=line_of(BLOCKED_PLAN, "| C-001 |"),
    )
    assert [i.id for i in unresolved_approval_blockers(report)] == ["C-003"]


@pytest.mark.parametrize(
    ("text", "present", "count"),
    [
        (LINEAR_PLAN, True, 0),  # heading and a placeholder line: a confident "no items"
        (section5(), True, 0),  # header and delimiter only
        (section5("| - |  |  |  |  |  |  |  |\n"), True, 0),  # a placeholder row
        (DIAMOND_PLAN, False, 0),  # no §5 at all
        ("", False, 0),
    ],
    ids=["placeholder-line", "header-only", "placeholder-row", "no-section", "empty"],
)
def test_absent_versus_empty_versus_rows(text: str, present: bool, count: int) -> None:
    report = parse_clarification_items(text)
    assert report.schema_present is present
    assert len(report.items) == count
    assert unresolved_approval_blockers(report) == []


LEGACY = """\
- [x] Approved

### 4.5.9 Open Questions

| ID | Ticket ID | 질문 | Blocking (예/아니오) | 기대 답 형태 | Status |
|----|-----------|------|----------------------|--------------|--------|
| OQ-001 | `T-1` | 질문 | 예 | 예/아니오 | open |

## 5. Clarification Requests for the Next Run

### 5.1 추가 자료 요청 (Additional Materials Requested)

| 자료 ID | Ticket ID | 무엇을 | 어디에서 | 어디에 | Status | 메모 |
|---------|-----------|--------|----------|--------|--------|------|
| A1 | `T-1` | 로그 | Datadog | logs/ | open | |

### 5.2 사용자 확인 질문 (Questions for the User)

| 질문 ID | Ticket ID | 이유 | 질문 | 형태 | Blocking (예 / 아니오) | Status | 답변 |
|---------|-----------|------|------|------|------------------------|--------|------|
| Q1 | `T-1` | 이유 | 질문 | 보기 | 예 | open | |
"""


def test_legacy_layout_is_schema_absent() -> None:
    report = parse_clarification_items(LEGACY)
    assert not report.schema_present
    assert report.items == ()
    assert approval_problems(LEGACY, "legacy.md") == []


def test_new_heading_over_a_legacy_table_is_read_strictly() -> None:
    # Only a report with no §5 section is "schema absent": under the new heading a
    # table that is not the §5 table is an error, never silently skipped.
    text = LEGACY.replace(
        "## 5. Clarification Requests for the Next Run", "## 5. Clarification Items"
    )
    report = parse_clarification_items(text)
    assert report.schema_present
    assert report.line == line_of(text, "## 5. Clarification Items")
    assert [row.line for row in report.malformed] == [
        line_of(text, "| 자료 ID |"),
        line_of(text, "| 질문 ID |"),
    ]
    assert "expected column `ID`, `Kind`, `Statement`, `Expected form`, `Blocks`" in (
        report.malformed[0].reason
    )
    (problem,) = approval_problems(text, "p.md")
    assert problem.startswith("§5 has 2 line(s) the approval gate cannot read:")


def test_state_instead_of_status_names_the_expected_column() -> None:
    header = HEADER.replace("| Status |", "| State |")
    text = section5("| C-001 | T | decision | a | b | approval | open | |\n", header=header)
    report = parse_clarification_items(text)
    assert report.schema_present and report.items == ()
    (row,) = report.malformed
    assert row.line == line_of(text, "| State |")
    assert row.reason.startswith(
        "table header is not the §5 header: expected column `Status`; found unknown column "
        "`State` — the columns are ID | Ticket ID | Kind | Statement | Expected form | Blocks | "
        "Status | User input"
    )
    (problem,) = approval_problems(text, "p.md", require_marker=False)
    assert f"line {row.line}: table header is not the §5 header" in problem


def test_unknown_kind_names_the_allowed_values() -> None:
    text = section5("| C-001 | T | question | a | b | approval | open | |\n")
    (row,) = parse_clarification_items(text).malformed
    assert row.reason == "unknown Kind='question' (one of material, decision, data-point)"
    assert approval_problems(text, "p.md")


def test_template_headers_with_annotations() -> None:
    header = (
        "| ID | Ticket ID | Kind | Statement (무엇이 필요한지 + 왜) "
        "| Expected form (답·자료의 모양) | `Blocks` | **Status** "
        "| User input (사용자가 다음 run 전에 채움) |\n"
        "|----|----|----|----|----|----|----|----|\n"
    )
    text = section5(
        "| C-001 | `T` | `data-point` | 행 수 | 정수 | `approval` | `Answered` | 42 |\n",
        header=header,
    )
    (item,) = parse_clarification_items(text).items
    assert (item.kind, item.blocks, item.status, item.user_input) == (
        "data-point",
        "approval",
        "answered",
        "42",
    )
    assert item.statement == "행 수"
    assert unresolved_approval_blockers(parse_clarification_items(text)) == [item]


def test_columns_found_by_name_in_any_order() -> None:
    header = (
        "| Status | Blocks | User input | ID | Kind | Ticket ID | Expected form | Statement |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    text = section5(
        "| open | approval | 42 | C-009 | data-point | T-1 | int | how many |\n", header=header
    )
    (item,) = parse_clarification_items(text).items
    assert (item.id, item.blocks, item.status, item.kind, item.user_input, item.statement) == (
        "C-009",
        "approval",
        "open",
        "data-point",
        "42",
        "how many",
    )


def test_a_partial_header_is_refused() -> None:
    text = section5(
        "| open | approval | C-009 |\n", header="| Status | Blocks | ID |\n|---|---|---|\n"
    )
    (row,) = parse_clarification_items(text).malformed
    assert "expected column `Ticket ID`, `Kind`, `Statement`, `Expected form`, `User input`" in (
        row.reason
    )


def test_malformed_rows_are_skipped_not_fatal() -> None:
    text = section5(
        "| C-001 | T | decision | a | b | approval | open | |\n",
        "| C-002 | T | decision | a | b | c | approval | open | |\n",  # unescaped pipe
        "| C-003 | T | decision | a \\| b | `x\\|y` | approval | open | |\n",  # escaped: fine
        "| C-007 | T | decision | a | `x|y` | approval | open |\n",  # GFM: splits in code too
        "| C-004 | T | decision | a | b | approval | pending | |\n",  # unknown status
        "| C-005 | T | material | a | b | none | resolved\n",  # short row: still readable
        "| C-006 | T | Decision | a | b | Next-Phase | Open | |\n",  # any case
    )
    report = parse_clarification_items(text)
    assert [i.id for i in report.items] == ["C-001", "C-003", "C-005", "C-006"]
    assert report.items[1].statement == "a | b"
    assert report.items[1].expected_form == "x|y"
    assert (report.items[3].kind, report.items[3].blocks) == ("decision", "next-phase")
    assert [row.line for row in report.malformed] == [
        line_of(text, "| C-002"),
        line_of(text, "| C-007"),
        line_of(text, "| C-004"),
    ]
    assert "9 cells" in report.malformed[0].reason
    assert report.malformed[2].reason == (
        "unknown Status='pending' (one of open, answered, resolved, obsolete)"
    )


def test_only_section_5_is_read() -> None:
    late = (
        "\n## 7. Follow-ups\n\n" + HEADER + "| C-100 | T | decision | a | b | approval | open | |\n"
    )
    fenced = "\n```\n" + HEADER + "| C-200 | T | decision | a | b | approval | open | |\n```\n"
    text = section5(fenced) + late
    report = parse_clarification_items(text)
    assert report.schema_present
    assert report.items == ()


def test_subsection_and_second_table_inside_section_5() -> None:
    text = section5(
        "| C-001 | T | decision | a | b | approval | open | |\n",
        "\n### 5.2 More\n\n",
        HEADER,
        "| C-002 | T | decision | a | b | approval | answered | |\n",
    )
    blockers = unresolved_approval_blockers(parse_clarification_items(text))
    assert [(i.id, i.status) for i in blockers] == [("C-001", "open"), ("C-002", "answered")]


@pytest.mark.parametrize(
    ("blocks", "status", "blocking"),
    [
        ("approval", "open", True),
        ("approval", "answered", True),
        ("Approval", "OPEN", True),
        ("approval", "resolved", False),
        ("approval", "obsolete", False),
        ("next-phase", "open", False),
        ("none", "answered", False),
    ],
)
def test_unresolved_approval_blockers(blocks: str, status: str, blocking: bool) -> None:
    text = section5(f"| C-1 | T | decision | s | e | {blocks} | {status} | |\n")
    assert bool(unresolved_approval_blockers(parse_clarification_items(text))) is blocking


# ---------------------------------------------------------------------------------------------
# Markers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- [ ] Approved\n", [(1, False)]),
        ("x\n- [x] Approved", [(2, True)]),
        ("- [X] Approved  \r\n", [(1, True)]),
        ("  * [x] Approved\n", [(1, True)]),
        ("- [x] Approved\n- [ ] Approved\n", [(1, True), (2, False)]),
        ("Tick `- [ ] Approved` to approve.\n", []),
        # The report template's labelled line (seed 002) is a marker, its note aside:
        ("- 승인 여부 (사용자가 직접 편집): `- [ ] Approved` ← 승인하려면 변경\n", [(1, False)]),
        ("- 승인 여부 (사용자가 직접 편집): `- [x] Approved` ← 승인하려면 변경\n", [(1, True)]),
        ("- **Approval (edit it yourself)**: `- [X] Approved`\r\n", [(1, True)]),
        ("  * Approval: `- [x] Approved` <- tick it\n", [(1, True)]),
        # …but only as a labelled list item with the marker alone in its backticks:
        ("Approval: `- [x] Approved`\n", []),
        ("- `- [x] Approved`\n", []),
        ("- Approval: `- [x] Approved` once ready\n", []),
        ("- Approval: `- [x] Approved by Kim`\n", []),
        ("- Approval `x`: `- [x] Approved`\n", []),
        ("- Approval: `- [x] Approved` ← a\n- Tick: `- [ ] Approved`\n", [(1, True), (2, False)]),
        ("- [x] Approved by Kim\n", []),
        ("- [x] approved\n", []),
        ("-[x] Approved\n", []),
        ("```\n- [x] Approved\n```\n", []),
        ("> - [x] Approved\n", []),
    ],
)
def test_find_approval_markers(text: str, expected: list[tuple[int, bool]]) -> None:
    assert find_approval_markers(text) == expected


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_flip_marker_changes_only_that_line(newline: str) -> None:
    text = LINEAR_PLAN.replace("\n", newline)
    flipped = flip_marker(text, "plan.md")
    before = text.split("\n")
    after = flipped.split("\n")
    number = line_of(LINEAR_PLAN, "- [ ] Approved")
    assert after[number - 1] == "- [x] Approved" + newline[:-1]
    assert before[: number - 1] == after[: number - 1]
    assert before[number:] == after[number:]
    assert find_approval_markers(flipped) == [(number, True)]
    assert flip_marker(flipped) == flipped  # already approved: unchanged


def test_flip_marker_keeps_indentation_and_missing_final_newline() -> None:
    assert flip_marker("a\n  - [ ] Approved") == "a\n  - [x] Approved"
    assert flip_marker("* [ ] Approved   \n") == "- [x] Approved\n"


@pytest.mark.parametrize("text", ["no marker here\n", "- [ ] Approved\n- [x] Approved\n"])
def test_flip_marker_needs_exactly_one_marker(text: str) -> None:
    with pytest.raises(BadInput, match=r"^plan\.md: a plan needs exactly one"):
        flip_marker(text, "plan.md")


SEED_LABELLED_LINE = (
    "- 승인 여부 (사용자가 직접 편집): `- [ ] Approved` ← 승인하려면 `[ ]` 를 `[x]` 로 "
    "변경하여 저장하세요."
)
SEED_APPROVAL_BLOCK = f"""\
## User Approval Request (사용자 승인 게이트)

{SEED_LABELLED_LINE}
- 승인 후 다음 단계 명령어 (방법 A — 수동 편집):

## 5. Clarification Items

| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |
|---|---|---|---|---|---|---|---|
| C-001 | T-1 | decision | Which? | a/b | approval | resolved | a |
"""


def test_the_templates_labelled_line_approves_and_is_ticked_in_place() -> None:
    """The seed's template puts the marker inside a labelled line; ticking it (by hand or by
    ``plan approve``) approves, and the label and the note stay as written."""
    assert approval_problems(SEED_APPROVAL_BLOCK, "p.md")[0].startswith(
        "approved plan has no recognised user-approval marker"
    )
    by_hand = SEED_APPROVAL_BLOCK.replace("`- [ ] Approved`", "`- [x] Approved`")
    assert approval_problems(by_hand, "p.md") == []
    flipped = flip_marker(SEED_APPROVAL_BLOCK, "p.md")
    assert flipped == by_hand
    assert flip_marker(flipped) == flipped
    audited = append_audit_line(flipped, "2026-06-06T09:30:00+09:00")
    assert "`- [x] Approved` ← 승인하려면 `[ ]` 를 `[x]` 로 변경하여 저장하세요.\n" \
        "- 승인 일시 (CLI ack): 2026-06-06T09:30:00+09:00\n" in audited  # fmt: skip
    assert approval_problems(audited, "p.md") == []
    blocked = by_hand.replace("| approval | resolved |", "| approval | open |")
    assert approval_problems(blocked, "p.md")[0].startswith(
        "approved plan marker is set but §5 has 1 unresolved"
    )


def test_append_audit_line_korean_and_english() -> None:
    when = "2026-06-06T09:30:00+09:00"
    korean = append_audit_line(flip_marker(DIAMOND_PLAN), when)
    number = line_of(DIAMOND_PLAN, "- [ ] Approved")
    assert korean.split("\n")[number] == f"- 승인 일시 (CLI ack): {when}"
    english = append_audit_line(flip_marker(LINEAR_PLAN), when)
    assert english.split("\n")[number + 1] == f"- Approved at (CLI ack): {when}"
    assert english.count("\n") == LINEAR_PLAN.count("\n") + 1
    forced = append_audit_line(LINEAR_PLAN, when, "ko")
    assert f"- 승인 일시 (CLI ack): {when}" in forced


def test_append_audit_line_keeps_line_endings() -> None:
    assert append_audit_line("a\r\n- [x] Approved\r\nb\r\n", "T", "en") == (
        "a\r\n- [x] Approved\r\n- Approved at (CLI ack): T\r\nb\r\n"
    )
    assert append_audit_line("- [x] Approved", "T", "en") == (
        "- [x] Approved\n- Approved at (CLI ack): T"
    )
    with pytest.raises(BadInput):
        append_audit_line("nothing", "T", "en")
    with pytest.raises(ValueError):
        append_audit_line("- [x] Approved", "T", "fr")


@pytest.mark.parametrize(
    ("text", "language"),
    [("plain English", "en"), ("영어와 한글", "ko"), ("", "en"), ("ㄱ", "ko")],
)
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


# ---------------------------------------------------------------------------------------------
# Refusal texts


def test_blocker_refusal_text_is_exact() -> None:
    assert approval_problems(BLOCKED_PLAN_CHECKED, "plans/plan-001.md") == [
        "approved plan marker is set but §5 has 1 unresolved Blocks=approval row(s); "
        "resolve them or mark them obsolete before approving:\n"
        "  - C-003 (Status=open)\n"
        "  file: plans/plan-001.md"
    ]


def test_every_blocking_row_is_named() -> None:
    text = BLOCKED_PLAN_CHECKED.replace("| `next-phase` | open |", "| `approval` | answered |")
    (problem,) = approval_problems(text, "p.md")
    assert problem.splitlines() == [
        "approved plan marker is set but §5 has 2 unresolved Blocks=approval row(s); "
        "resolve them or mark them obsolete before approving:",
        "  - C-002 (Status=answered)",
        "  - C-003 (Status=open)",
        "  file: p.md",
    ]


def test_missing_marker_refusal() -> None:
    (problem,) = approval_problems(LINEAR_PLAN, "plan.md", key="demo:config:cache-cli")
    first, *rest = problem.splitlines()
    assert first == "approved plan has no recognised user-approval marker: plan.md"
    assert any("- [x] Approved" in line for line in rest)
    assert any("git okstra plan approve demo:config:cache-cli" in line for line in rest)


def test_all_problems_are_reported() -> None:
    problems = approval_problems(BLOCKED_PLAN, "p.md")
    assert [p.splitlines()[0] for p in problems] == [
        "approved plan has no recognised user-approval marker: p.md",
        "cannot approve: §5 has 1 unresolved Blocks=approval row(s); "
        "resolve them or mark them obsolete before approving:",
    ]


def test_cli_approve_checks_only_section_5() -> None:
    assert approval_problems(LINEAR_PLAN, "p.md", require_marker=False) == []
    (problem,) = approval_problems(BLOCKED_PLAN, "p.md", require_marker=False)
    assert problem.startswith("cannot approve: §5 has 1 unresolved")


def test_two_markers_refused() -> None:
    text = "- [x] Approved\n" + LINEAR_PLAN
    (problem,) = approval_problems(text, "p.md")
    assert problem.startswith("approved plan has 2 user-approval marker lines (lines 1, 9)")


def test_unreadable_rows_refuse_approval() -> None:
    text = section5("| C-1 | T | decision | a | b | c | approval | open | |\n")
    (problem,) = approval_problems(text, "p.md")
    assert problem.splitlines()[0] == "§5 has 1 line(s) the approval gate cannot read:"
    assert problem.splitlines()[-1] == "  file: p.md"


@pytest.mark.parametrize(
    "text",
    [flip_marker(LINEAR_PLAN), flip_marker(DIAMOND_PLAN), LEGACY],
    ids=["no-items", "schema-absent", "legacy"],
)
def test_approved_plans_pass(text: str) -> None:
    assert approval_problems(text, "p.md") == []


def test_resolved_blocker_passes() -> None:
    text = BLOCKED_PLAN_CHECKED.replace("| `approval` | open |", "| `approval` | obsolete |")
    assert approval_problems(text, "p.md") == []


# ---------------------------------------------------------------------------------------------
# Robustness


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    report = parse_clarification_items(text)
    unresolved_approval_blockers(report)
    approval_problems(text, "fuzz.md")
    find_approval_markers(text)


_NOISE = st.lists(
    st.one_of(
        st.sampled_from(BLOCKED_PLAN_CHECKED.split("\n")),
        st.sampled_from(["- [ ] Approved", "- [x] Approved\r", "```", "## 5. Clarification Items"]),
        st.text(alphabet="|`\\- x[]Approved\r", max_size=20),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_NOISE)
def test_marker_edits_touch_one_line_or_raise_bad_input(lines: list[str]) -> None:
    text = "\n".join(lines)
    approval_problems(text, "fuzz.md")
    try:
        flipped = flip_marker(text)
    except BadInput:
        assert len(find_approval_markers(text)) != 1
        return
    old, new = text.split("\n"), flipped.split("\n")
    assert len(old) == len(new)
    assert sum(a != b for a, b in zip(old, new, strict=True)) <= 1
    audited = append_audit_line(flipped, "T")
    assert len(audited.split("\n")) == len(new) + 1
    assert [m[1] for m in find_approval_markers(audited)] == [True]


def test_binary_ish_input() -> None:
    blob = bytes(range(256)).decode("latin-1") * 2000
    assert not parse_clarification_items(blob).schema_present
    assert find_approval_markers(blob) == []


@pytest.mark.slow
def test_a_fifty_megabyte_report_parses() -> None:
    prose = "Background for the rows below, with `code`, a | pipe and 한글 in every line.\n"
    row = "| C-9 | T | decision | a \\| pipe and `co\\|de` | x | none | resolved | |\n"
    text = BLOCKED_PLAN_CHECKED.replace(
        "### 5.1 Clarification Items table",
        prose * (48_000_000 // len(prose)) + "### 5.1 Clarification Items table",
    ).replace("| C-003 |", row * 20_000 + "| C-003 |")
    assert len(text) >= 49_000_000
    report = parse_clarification_items(text)
    markers = find_approval_markers(text)
    assert len(report.items) == 20_003
    assert [i.id for i in unresolved_approval_blockers(report)] == ["C-003"]
    assert markers == [(line_of(BLOCKED_PLAN_CHECKED, "- [x] Approved"), True)]
