from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from okstra_git.core.mdtable import (
    cell_value,
    decode_cell,
    encode_cell,
    header_key,
    heading,
    is_delimiter_row,
    scan_lines,
    split_table_row,
    table_blocks,
    unwrap_code,
)


@pytest.mark.parametrize(
    ("line", "cells"),
    [
        ("| a | b |", ["a", "b"]),
        ("|a|b", ["a", "b"]),
        ("a | b |", ["a", "b"]),
        ("  | a |  ", ["a"]),
        ("| a |  |", ["a", ""]),
        ("| c \\| d | e |", ["c | d", "e"]),
        ("| ends escaped \\|", ["ends escaped |"]),
        # GFM: a pipe splits the row inside a code span too; only \| is a literal pipe.
        ("| `a|b` | c |", ["`a", "b`", "c"]),
        ("| ``x`y|z`` | c |", ["``x`y", "z``", "c"]),
        ("| `a\\|b` |", ["`a|b`"]),
        ("| `open | c |", ["`open", "c"]),
        ("| \\` | b ` |", ["\\`", "b `"]),
        ("| \\\\| b |", ["\\| b"]),
        ("| `x` |", ["`x`"]),
        ("| `x|` |", ["`x", "`"]),
        ("| `a\\` | b |", ["`a\\`", "b"]),
        ("| 한글 | `표\\|셀` |", ["한글", "`표|셀`"]),
        ("|", [""]),
    ],
)
def test_split_table_row(line: str, cells: list[str]) -> None:
    assert split_table_row(line) == cells


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        (["---", ":--", "--:", ":-:"], True),
        (["-"], True),
        (["---", "x"], False),
        (["", "---"], False),
        ([], False),
    ],
)
def test_is_delimiter_row(cells: list[str], expected: bool) -> None:
    assert is_delimiter_row(cells) is expected


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("`approval`", "approval"),
        ("  ` open `  ", "open"),
        ("``a`b``", "a`b"),
        ("plain", "plain"),
        ("`a` and `b`", "`a` and `b`"),
        ("`unclosed", "`unclosed"),
        ("``", "``"),
        ("`", "`"),
    ],
)
def test_unwrap_code(cell: str, expected: str) -> None:
    assert unwrap_code(cell) == expected


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("Ticket ID", "ticketid"),
        ("**Depends-on**", "dependson"),
        ("`Blocks`", "blocks"),
        ("Effective steps (≤6)", "effectivesteps"),
        ("Statement (무엇이 필요한지 + 왜)", "statement"),
        ("user_input", "userinput"),
        ("단계", "단계"),
    ],
)
def test_header_key(cell: str, expected: str) -> None:
    assert header_key(cell) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("## 5.5 Stage Map", (2, "5.5 Stage Map")),
        ("### Stage 1 — 설정 ###", (3, "Stage 1 — 설정")),
        ("   # Title", (1, "Title")),
        ("##", (2, "")),
        ("## C# notes", (2, "C# notes")),
        ("#hashtag", None),
        ("    # indented code", None),
        ("####### seven", None),
        ("text", None),
    ],
)
def test_heading(line: str, expected: tuple[int, str] | None) -> None:
    assert heading(line) == expected


def test_scan_lines_tracks_fences_and_keeps_editor_line_numbers() -> None:
    text = "a\r\n```py\n## no\n~~~\n```\n## yes\f still line 6\n~~~~\n```\n~~~~\nend"
    rows = list(scan_lines(text))
    assert [(n, fenced) for n, _, fenced in rows] == [
        (1, False),
        (2, True),
        (3, True),
        (4, True),  # a ~~~ line cannot close a ``` fence
        (5, True),
        (6, False),
        (7, True),
        (8, True),
        (9, True),
        (10, False),
    ]
    assert rows[0][1] == "a"
    assert rows[5][1] == "## yes\f still line 6"


def test_table_blocks_splits_on_non_table_lines_and_skips_fences() -> None:
    text = "| a |\n|---|\n| 1 |\n\n| b |\n```\n| c |\n```\n"
    blocks = list(table_blocks(scan_lines(text)))
    assert blocks == [[(1, ["a"]), (2, ["---"]), (3, ["1"])], [(5, ["b"])]]


_PLAIN = st.text(
    alphabet=st.characters(blacklist_characters="\\`\n\r", blacklist_categories=("Cs",)),
    max_size=12,
)


@given(st.lists(_PLAIN, min_size=1, max_size=6))
def test_escaped_pipes_round_trip(cells: list[str]) -> None:
    line = "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
    assert split_table_row(line) == [cell.strip() for cell in cells]


@given(st.text(max_size=300))
def test_helpers_accept_any_text(text: str) -> None:
    for _, line, _ in scan_lines(text):
        split_table_row(line)
        heading(line)
        unwrap_code(line)


def _gfm_cells(line: str, count: int) -> list[str] | None:
    """The cells GitHub's table rule reads in ``line`` as a table's header row, from a real
    GFM implementation (markdown-it-py's table rule; None: no table of ``count`` columns)."""
    from markdown_it import MarkdownIt

    text = f"{line}\n|{'---|' * count}\n"
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    if not any(t.type == "table_open" for t in tokens):
        return None
    cells, inside = [], False
    for token in tokens:
        if token.type == "th_open":
            inside = True
        elif token.type == "inline" and inside:
            cells.append(token.content)
            inside = False
        elif token.type == "thead_close":
            break
    return cells


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="|`\\ ab", max_size=40))
def test_cells_split_as_githubs_table_rule_splits_them(body: str) -> None:
    """okstra's §5 (and every table it reads) splits a row as GFM does: checked against a real
    GFM implementation, pipes in code spans and backslashes included."""
    line = f"| {body} |"
    ours = split_table_row(line)
    assert _gfm_cells(line, len(ours)) == ours


def test_a_pipe_in_a_code_span_of_a_section_5_cell_is_read_as_github_reads_it() -> None:
    from okstra_git.logic.clarify import parse_clarification_items

    head = (
        "## 5. Clarification Items\n\n"
        "| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    split = head + "| C-001 | T | decision | Pick `a|b` | x | none | open | |\n"
    report = parse_clarification_items(split)
    assert report.items == () and "9 cells but the header has 8" in report.malformed[0].reason
    assert len(_gfm_cells(split.splitlines()[-1], 9) or []) == 9  # GitHub sees 9 cells too
    escaped = head + "| C-001 | T | decision | Pick `a\\|b` | x | none | open | |\n"
    (item,) = parse_clarification_items(escaped).items
    assert item.statement == "Pick `a|b`"
    assert (_gfm_cells(escaped.splitlines()[-1], 8) or [])[3] == "Pick `a|b`"


# ---------------------------------------------------------------------------------------------
# Cell values written by okstra and read back

_CELL_PIECES = st.sampled_from(
    [*"ab |`\\\n\r<>&;#-/ ", "<br>", "<BR />", "&amp;", "\\|", "``", "&#96;", "<script>", "한"]
)
_CELL_TEXT = (st.lists(_CELL_PIECES, max_size=12).map("".join) | st.text()).map(
    lambda s: "".join(
        ch for ch in s if ch in "\t\n\r" or not (ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F)
    )
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_CELL_TEXT, min_size=1, max_size=4))
@example(["``<br>`a``"])  # one code span across a line break: it kept a code span over the <br>
def test_encoded_cells_read_back_as_written(values: list[str]) -> None:
    row = "| " + " | ".join(encode_cell(v) for v in values) + " |"
    assert "\n" not in row and "\r" not in row
    cells = split_table_row(row)
    assert [decode_cell(c) for c in cells] == [cell_value(v) for v in values]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("a | b", "a \\| b"),
        ("line 1\nline 2<br/>line 3", "line 1<br>line 2<br>line 3"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("`wrapped`", "&#96;wrapped&#96;"),
        ("`code` then text", "`code` then text"),
        ("x `a|b` y", "x `a\\|b` y"),
        ("a`` b", "a&#96;&#96; b"),
        ("C:\\dir", "C:\\\\dir"),
    ],
)
def test_encode_cell_examples(value: str, cell: str) -> None:
    assert encode_cell(value) == cell
    assert decode_cell(split_table_row(f"| {cell} |")[0]) == cell_value(value)


def test_code_wraps_plain_tokens_only() -> None:
    assert encode_cell("DEV-9184", code=True) == "`DEV-9184`"
    assert encode_cell("a b", code=True) == "a b"
    assert decode_cell("`DEV-9184`") == "DEV-9184"


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet="ab<>&;|\\ #", min_size=1, max_size=12).filter(lambda s: s.strip() == s),
    st.text(alphabet="ab<>& ", max_size=6),
)
def test_a_code_span_in_a_cell_shows_its_text_as_written_on_github(code: str, plain: str) -> None:
    """Inside a code span GitHub shows `&lt;` as typed, so encode_cell leaves `<`, `&` and `>`
    there as they are (a pipe still escaped, as GFM's table rule wants), and the text around
    it still shows its own `<` and `&` (checked against markdown-it's GFM table rule)."""
    from markdown_it import MarkdownIt

    value = f"{plain}`{code}` x"
    row = f"| {encode_cell(value)} |\n|---|\n"
    inline = next(
        t for t in MarkdownIt("commonmark").enable("table").parse(row) if t.type == "inline"
    )
    spans = [c.content for c in inline.children or [] if c.type == "code_inline"]
    texts = "".join(c.content for c in inline.children or [] if c.type == "text")
    assert spans == [code], (value, row, inline.children)
    assert texts.strip() == (plain + " x").strip(), (value, row)
    assert decode_cell(split_table_row(row.splitlines()[0])[0]) == value.strip()
