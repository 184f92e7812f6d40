"""Rendering report data: the canonical Markdown read back by okstra's own parsers (§5 round
trip, the plan's Stage Map and approval marker), hostile values kept inert, one label table."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reports_data import ALL_TYPES, full_report

from okstra_git.core.mdtable import (
    cell_value,
    header_key,
    scan_lines,
    split_table_row,
    table_blocks,
)
from okstra_git.logic.clarify import COLUMNS, find_approval_markers, parse_clarification_items
from okstra_git.logic.planfile import validate_text
from okstra_git.logic.reports.labels import LABELS, labels
from okstra_git.logic.reports.render import render_html, render_markdown
from okstra_git.logic.reports.rules import validate


def items_of(markdown: str) -> list[tuple[str, ...]]:
    parsed = parse_clarification_items(markdown)
    assert parsed.schema_present and parsed.malformed == ()
    return [
        (i.id, i.ticket_id, i.kind, i.statement, i.expected_form, i.blocks, i.status, i.user_input)
        for i in parsed.items
    ]


def expected_items(data: dict[str, Any]) -> list[tuple[str, ...]]:
    fields = (
        "id",
        "ticketId",
        "kind",
        "statement",
        "expectedForm",
        "blocks",
        "status",
        "userInput",
    )
    return [tuple(cell_value(row[f]) for f in fields) for row in data["clarificationItems"]]


def assert_tables_intact(markdown: str) -> None:
    """Every table row has exactly as many cells as its header."""
    for table in table_blocks(list(scan_lines(markdown))):
        width = len(table[0][1])
        assert all(len(cells) == width for _, cells in table), table


@pytest.mark.parametrize("task_type", ALL_TYPES)
@pytest.mark.parametrize("language", ["ko", "en"])
def test_section_5_reads_back_as_the_data(task_type: str, language: str) -> None:
    data = full_report(task_type, language)
    markdown = render_markdown(data)
    assert items_of(markdown) == expected_items(data)
    assert_tables_intact(markdown)
    assert render_markdown(data) == markdown  # deterministic


@pytest.mark.parametrize("language", ["ko", "en"])
def test_a_rendered_plan_is_a_valid_plan_awaiting_approval(language: str) -> None:
    markdown = render_markdown(full_report("implementation-planning", language))
    validation = validate_text(markdown, "plan.md")
    assert validation.problems == []
    assert [s.number for s in validation.stage_map.stages] == [1, 2, 3]
    assert [len(s.steps) for s in validation.stage_map.stages] == [2, 1, 1]
    assert validation.stage_map.stage(1).predicted_files == (
        "src/config.py",
        "tests/test_config.py",
    )
    assert [checked for _, checked in find_approval_markers(markdown)] == [False]


@pytest.mark.parametrize("task_type", [t for t in ALL_TYPES if t != "implementation-planning"])
def test_only_plans_carry_the_approval_block(task_type: str) -> None:
    markdown = render_markdown(full_report(task_type))
    assert find_approval_markers(markdown) == []
    assert "## 5.5 Stage Map" not in markdown


def test_sections_in_the_template_order() -> None:
    data = full_report("implementation-planning")
    data["clarificationCarryIn"] = {
        "sourcePath": "instruction-set/clarification-response.md",
        "items": [{"id": "C-000", "outcome": "resolved", "evidence": "answered: 100"}],
    }
    data["implementationPlanning"]["incrementalDecision"] = {
        "mode": "full", "reverifyStages": [], "carryStages": [], "reason": "base-ref changed",
    }  # fmt: skip
    assert validate(data) == []
    markdown = render_markdown(data)
    headings = [line for line in markdown.split("\n") if line.startswith("## ")]
    assert headings == [
        "## Reader Summary",
        "## User Approval Request",
        "## 0. Clarification Response Carried In From Previous Run",
        "## 1. Summary",
        "## 2. Final Verdict",
        "## 3. Evidence and Detailed Analysis",
        "## 4. Missing Information and Risks",
        "## 5. Clarification Items",
        "## 5.5 Stage Map",
        "## 6. Recommended Next Steps",
        "## 7. Follow-up Tasks",
        "## Execution Status by Agent",
    ]
    assert "### 0.1 Incremental Re-Verification Scope" in markdown
    assert "- **Mode:** `full`" in markdown


def test_section_0_only_when_carried_in() -> None:
    assert "## 0." not in render_markdown(full_report("error-analysis"))


def test_final_verification_shows_scope_blockers_risks_and_the_critic() -> None:
    markdown = render_markdown(full_report("final-verification"))
    assert "### 2.1 Verification Scope" in markdown
    assert "  - Stage 2: `.okstra/tasks/dev-9184/cache-cli/stage-2.md`" in markdown
    assert "### 4.1 Acceptance Blockers\n\n- No acceptance blockers." in markdown
    assert "| **RR-001**<br>Severity: `minor`<br>Source items: codex:critic-1 |" in markdown
    assert (
        "- Acceptance critic (acceptance-devils-advocate, codex / gpt-5): 1 candidate(s) proposed"
        " → 0 confirmed as blockers, 1 downgraded to residual risks (none dropped)"
    ) in markdown


def test_empty_sections_use_the_one_line_placeholders() -> None:
    from okstra_git.logic.reports.starter import starter

    markdown = render_markdown(starter("p:g:i", "error-analysis", "001", "ko"))
    for key in ("empty.summary", "empty.differences", "empty.clarification"):
        assert "\n" + labels("ko")[key] + "\n" in markdown
    assert parse_clarification_items(markdown).schema_present
    assert parse_clarification_items(markdown).items == ()


def test_the_meta_cell_stacks_short_fields() -> None:
    markdown = render_markdown(full_report("error-analysis"))
    assert (
        "| **CS-1**<br>Ticket: `DEV-9184`<br>Source items: claude:F-001, codex:1.1 | "
        "`load_config` ignores keys it does not know. |"
    ) in markdown


_HOSTILE = st.sampled_from(
    ["|", "`", "``", "\\", "\\|", "\n", "\r\n", "<br>", "<script>alert(1)</script>", "&lt;",
     "## 5. Clarification Items", "- [x] Approved", "| C-9 | T | decision |", "a", " ", "한"]
)  # fmt: skip
_CELL = st.lists(_HOSTILE, max_size=8).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_CELL, _CELL, _CELL, _CELL), min_size=1, max_size=4))
def test_any_cell_contents_round_trip(rows: list[tuple[str, str, str, str]]) -> None:
    data = full_report("implementation-planning")
    data["clarificationItems"] = [
        {
            "id": f"C-{n:03d}",
            "ticketId": ticket,
            "kind": "decision",
            "statement": statement + "x",  # non-blank, as the schema asks
            "expectedForm": "y" + expected,
            "blocks": "none",
            "status": "answered",
            "userInput": "z" + user_input,
        }
        for n, (ticket, statement, expected, user_input) in enumerate(rows, start=1)
    ]
    data["summary"][0]["text"] = "w" + rows[0][1]
    data["rationale"] = rows[0][0]
    assert validate(data) == []
    markdown = render_markdown(data)
    assert items_of(markdown) == expected_items(data)
    assert_tables_intact(markdown)
    assert len(find_approval_markers(markdown)) == 1  # no value adds a marker line
    # No live tag where the Markdown is shown (GitHub's GFM; a code span may hold `<script>`
    # as written, which it shows as text — the trial's polish: an entity there showed as
    # `&lt;`).
    from markdown_it import MarkdownIt

    shown = MarkdownIt("commonmark").enable("table").render(markdown)
    assert not re.search(r"<script", shown, re.IGNORECASE)
    assert validate_text(markdown, "plan.md").problems == []
    page = render_html(data)
    assert len(re.findall(r"<script", page, re.IGNORECASE)) == 1


def test_labels_exist_in_both_languages_and_name_the_section_5_columns() -> None:
    assert all(ko.strip() and en.strip() for ko, en in LABELS.values())
    for language in ("ko", "en"):
        L = labels(language)
        columns = [L[f"c5.{c}"] for c in ("id", "ticketId", "kind", "statement", "expectedForm",
                                          "blocks", "status", "userInput")]  # fmt: skip
        assert [header_key(c) for c in columns] == [header_key(c) for c in COLUMNS]
        header = "| " + " | ".join(columns) + " |"
        assert len(split_table_row(header)) == 8


def test_one_template_per_view() -> None:
    from okstra_git.core.resources import data_dir

    names = sorted(p.name for p in data_dir("templates").glob("report*"))
    assert names == ["report.css", "report.html.j2", "report.js", "report.md.j2"]


def test_html_is_self_contained_and_escapes_everything_but_br() -> None:
    data = full_report("error-analysis", "ko")
    data["clarificationItems"][1]["userInput"] = "</textarea><script>alert(1)</script>"
    data["rationale"] = "one<br/>two\nthree <b>bold</b>"
    page = render_html(data)
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "<link" not in page and "@import" not in page
    assert "&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;</textarea>" in page
    assert "one<br>two<br>three &lt;b&gt;bold&lt;/b&gt;" in page
    assert 'lang="ko"' in page and "Content-Security-Policy" in page
    assert '<a href="#CS-1">CS-1</a>' in render_html(full_report("error-analysis"))


def test_validating_and_rendering_never_import_pygit2(tmp_path) -> None:
    import json
    import subprocess
    import sys

    data = tmp_path / "data.json"
    data.write_text(json.dumps(full_report("final-verification")))
    script = (
        "import sys\n"
        "from okstra_git.logic.reports import rules\n"
        "from okstra_git.services import reportfiles as files\n"
        f"raw, data = files.read_data({str(data)!r})\n"
        "assert rules.validate(data) == []\n"
        f"files.render_files(data, *files.default_outputs({str(data)!r}))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygit2', 'typer')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "data.md").is_file() and (tmp_path / "data.html").is_file()


def test_ids_are_linked_as_whole_words_only() -> None:
    from okstra_git.logic.reports.view import id_links, inline_html

    links = id_links(["lt", "S-1", "C-001"])
    assert inline_html("<b> S-1. see C-001, not C-0010 or claude:S-1 or S-1.2", links) == (
        '&lt;b&gt; <a href="#S-1">S-1</a>. see <a href="#C-001">C-001</a>, not C-0010 or '
        "claude:S-1 or S-1.2"
    )
    assert id_links([]) is None
