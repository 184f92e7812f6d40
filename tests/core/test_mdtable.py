from __future__ import annotations

import pytest
from hypothesis import given, settings
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
        ("| `a|b` | c |", ["`a|b`", "c"]),
        ("| ``x`y|z`` | c |", ["``x`y|z``", "c"]),
        ("| `a\\|b` |", ["`a|b`"]),
        ("| `open | c |", ["`open", "c"]),
        ("| ``a` | b |", ["``a`", "b"]),
        ("| \\` | b ` |", ["\\`", "b `"]),
        ("| \\\\| b |", ["\\\\", "b"]),
        ("| a \\\\|", ["a \\\\"]),
        ("| `x` |", ["`x`"]),
        ("| `x|` |", ["`x|`"]),
        ("| `a\\` | b |", ["`a\\`", "b"]),
        ("| 한글 | `표|셀` |", ["한글", "`표|셀`"]),
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


@given(st.lists(_PLAIN.filter(lambda s: s.strip() != ""), min_size=1, max_size=6))
def test_pipes_inside_code_spans_do_not_split(cells: list[str]) -> None:
    wrapped = [f"`{cell}`" for cell in cells]
    assert split_table_row("| " + " | ".join(wrapped) + " |") == wrapped


@given(st.text(max_size=300))
def test_helpers_accept_any_text(text: str) -> None:
    for _, line, _ in scan_lines(text):
        split_table_row(line)
        heading(line)
        unwrap_code(line)


def _reference_split(line: str) -> list[str]:
    """A slow character-by-character statement of the splitting rules, as an oracle."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    runs = {}  # start → length of every maximal backtick run
    i = 0
    while i < len(body):
        if body[i] == "`":
            j = i
            while j < len(body) and body[j] == "`":
                j += 1
            runs[i] = j - i
            i = j
        else:
            i += 1
    cells, buf, i, closed = [], "", 0, False
    while i < len(body):
        closed = False
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            buf += "|" if body[i + 1] == "|" else body[i : i + 2]
            i += 2
        elif char == "`":
            k = 1
            while i + k < len(body) and body[i + k] == "`":
                k += 1
            close = next((s for s, n in sorted(runs.items()) if s >= i + k and n == k), None)
            if close is None:
                buf += "`" * k
                i += k
            else:
                buf += body[i : close + k].replace("\\|", "|")
                i = close + k
        elif char == "|":
            cells.append(buf)
            buf, i, closed = "", i + 1, i + 1 == len(body)
        else:
            buf += char
            i += 1
    if not closed or not cells:
        cells.append(buf)
    return [cell.strip() for cell in cells]


@given(st.text(alphabet="|`\\ a", max_size=40))
def test_split_matches_the_reference_rules(line: str) -> None:
    assert split_table_row(line) == _reference_split(line)


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
