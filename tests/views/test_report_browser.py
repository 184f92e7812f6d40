"""The HTML report view in a real headless browser: Debian's chromium driven by Playwright.

Playwright's own browser download is unreachable here, so the system chromium is launched by
path (``.ci/run`` installs it with apt when missing). Set ``OKSTRA_UPDATE_SCREENSHOT=1`` to
refresh ``docs/report-view.png``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pagewords import SPLIT_WORDS
from reports_data import full_report

from okstra_git.core.mdtable import cell_value, encode_cell
from okstra_git.logic.clarify import parse_clarification_items
from okstra_git.logic.reports.render import render_html
from okstra_git.logic.reports.rules import validate

# On one worker of a parallel run: one chromium (module-scoped), started once.
pytestmark = pytest.mark.xdist_group("test_report_browser")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE = 'x <script>window.__pwned = 1</script> | <img src=x onerror="window.__pwned = 2"> `y`'
MARKDOWN = (
    "Set the **approval** flag in `approval_state` first, as [the spec](https://example.com/s) "
    "says; never [run this](javascript:window.__pwned=4) or [this](<data:text/html,x>)."
)
TYPED = "42 | `configs` <script>window.__pwned = 3</script>\nsecond line\\"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
if not Path(CHROMIUM).is_file():
    pytest.skip(
        f"no chromium at {CHROMIUM}: install it with `apt-get install -y chromium` "
        "(.ci/run does); Playwright's own browser download is not reachable",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


def report_data() -> dict[str, Any]:
    data = full_report("implementation-planning")
    data["clarificationItems"][1]["statement"] = "How many configs? " + HOSTILE
    data["summary"][0]["text"] = HOSTILE
    data["summary"][1]["text"] = MARKDOWN
    data["rationale"] += " The `approval` row stays **open** until C-002 is answered."
    assert validate(data) == []
    return data


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[tuple[Any, list[str]]]:
    view = tmp_path / "final-report-implementation-planning-002.html"
    view.write_text(render_html(report_data()), "utf-8")
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on(
        "request", lambda r: None if r.url.startswith(("file:", "blob:")) else errors.append(r.url)
    )
    opened.goto(view.as_uri())
    yield opened, errors
    context.close()


def test_loads_clean_and_values_stay_inert(page: tuple[Any, list[str]]) -> None:
    view, errors = page
    assert view.evaluate("window.__pwned") is None
    assert view.locator("script").count() == 1  # ours; the values' <script> is text
    assert HOSTILE.replace("`y`", "y") in view.locator("#S-1").inner_text()
    assert view.locator("#S-1 td:not(.meta) code").all_inner_texts() == ["y"]
    assert view.evaluate("typeof window.okstraReport.encodeCell") == "function"
    assert errors == []


def test_a_meta_cell_shows_as_several_lines(page: tuple[Any, list[str]]) -> None:
    view, errors = page
    cell = view.locator("#S-1 td.meta")
    assert cell.inner_text().split("\n") == ["S-1", "Ticket: DEV-9184", "Source: claude, codex"]
    lines = cell.evaluate(
        "el => el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight)"
    )
    assert lines >= 3
    assert errors == []


def test_reader_mode_hides_audit_sections_and_back(page: tuple[Any, list[str]]) -> None:
    view, errors = page
    toggle = view.locator("#reader-toggle")
    audit = [view.locator("#evidence"), view.locator("#execution-status")]
    assert all(section.is_visible() for section in audit)
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert not any(section.is_visible() for section in audit)
    assert view.locator("#reader-summary").is_visible()
    assert view.locator("#clarification").is_visible()
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    assert all(section.is_visible() for section in audit)
    assert errors == []


def test_export_user_response_downloads_the_rows_with_the_inputs(
    page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    view, errors = page
    view.locator("#C-002 textarea").fill(TYPED)
    with view.expect_download() as download:
        view.locator("#export-response").click()
    assert download.value.suggested_filename == "user-response-implementation-planning-002.md"
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    parsed = parse_clarification_items(saved.read_text("utf-8"))
    assert parsed.schema_present and parsed.malformed == ()
    expected = report_data()["clarificationItems"]
    got = [
        (i.id, i.ticket_id, i.kind, i.statement, i.expected_form, i.blocks, i.status, i.user_input)
        for i in parsed.items
    ]
    assert got == [
        (
            e["id"],
            e["ticketId"],
            e["kind"],
            cell_value(e["statement"]),
            cell_value(e["expectedForm"]),
            e["blocks"],
            "answered" if e["id"] == "C-002" else e["status"],
            cell_value(TYPED) if e["id"] == "C-002" else e["userInput"],
        )
        for e in expected
    ]
    assert view.evaluate("window.__pwned") is None
    assert errors == []
    if os.environ.get("OKSTRA_UPDATE_SCREENSHOT") == "1":
        view.evaluate("window.scrollTo(0, 0)")
        view.screenshot(path=str(Path(__file__).resolve().parents[2] / "docs" / "report-view.png"))


def test_inline_markdown_shows_as_code_bold_and_safe_links(page: tuple[Any, list[str]]) -> None:
    view, errors = page
    row = view.locator("#S-2")
    assert row.locator("td:not(.meta) strong").all_inner_texts() == ["approval"]
    assert row.locator("td:not(.meta) code").all_inner_texts() == ["approval_state"]
    assert [a.get_attribute("href") for a in row.locator("td:not(.meta) a").all()] == [
        "https://example.com/s"
    ]
    shown = row.locator("td:not(.meta)").inner_text()
    assert "[run this](javascript:window.__pwned=4)" in shown
    assert "[this](<data:text/html,x>)" in shown
    assert view.locator("#final-verdict code", has_text="approval").count() == 1
    assert view.locator("#final-verdict strong", has_text="open").count() == 1
    visible = view.evaluate("document.body.innerText")
    assert "`" not in visible and "**" not in visible
    assert view.evaluate("window.__pwned") is None
    assert errors == []


@pytest.mark.parametrize("width", [1280, 1024, 760])
def test_no_word_is_split_across_lines(browser: Any, tmp_path: Path, width: int) -> None:
    view_file = tmp_path / "view.html"
    view_file.write_text(render_html(report_data()), "utf-8")
    context = browser.new_context(viewport={"width": width, "height": 900})
    view = context.new_page()
    view.goto(view_file.as_uri())
    words = view.evaluate(SPLIT_WORDS)
    context.close()
    assert len(words["seen"]) > 500 and "approval" in words["seen"]
    assert words["split"] == []


def test_tables_scroll_rather_than_squeeze(browser: Any, tmp_path: Path) -> None:
    view_file = tmp_path / "view.html"
    view_file.write_text(render_html(report_data()), "utf-8")
    context = browser.new_context(viewport={"width": 560, "height": 900})
    view = context.new_page()
    view.goto(view_file.as_uri())
    page_width = view.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    scrolled = view.evaluate(
        "[...document.querySelectorAll('.scroll')].filter(s => s.scrollWidth > s.clientWidth)"
        ".length"
    )
    words = view.evaluate(SPLIT_WORDS)
    context.close()
    assert page_width <= 0  # the page itself never scrolls sideways
    assert scrolled >= 1  # a table wider than the window scrolls in its own box
    assert words["split"] == []


_PIECES = st.sampled_from(
    [*"ab |`\\\n\r<>&;#-/ \u00a0\u2028", "<br>", "<BR />", "&amp;", "\\|", "``", "&#96;", "한"]
)
_VALUES = st.lists(st.lists(_PIECES, max_size=14).map("".join), min_size=1, max_size=40)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=_VALUES)
@example(values=["``<br>`a``", " `x`<br>y`", "`a\nb`"])  # one code span across a line break
def test_the_page_encodes_cells_exactly_as_okstra(
    page: tuple[Any, list[str]], values: list[str]
) -> None:
    view, _ = page
    written = view.evaluate(
        "vs => vs.map(v => [okstraReport.encodeCell(v), okstraReport.encodeCell(v, true)])",
        values,
    )
    assert written == [[encode_cell(v), encode_cell(v, code=True)] for v in values]
