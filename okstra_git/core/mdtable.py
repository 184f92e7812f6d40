"""Markdown helpers shared by the plan parsers: lines, fences, headings and pipe tables.

Only the subset okstra reads is handled. Lines are split on ``\\n`` alone (a trailing ``\\r``
is dropped) so line numbers match what editors and ``git blame`` show; ``str.splitlines``
would also split on form feeds and Unicode separators.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from .patterns import lazy

_FENCE = lazy(r" {0,3}(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*")
# Escapes first so ``\|`` and ``\``` never open anything; pipes are left to ``str.split``.
_TOKEN = lazy(r"\\.|`+", re.DOTALL)
_BACKTICK_RUN = lazy(r"`+")
_DELIMITER_CELL = re.compile(r":?-+:?")
_NOT_NAME = re.compile(r"[\W_]+")
# A line break inside a cell value: a newline, or a <br> tag (how Markdown tables write one).
_CELL_BREAK = lazy(r"\r\n|\r|\n|<br\s*/?>", re.IGNORECASE)
_BR_TAG = lazy(r"<br\s*/?>", re.IGNORECASE)
_ESCAPED_BACKSLASH = lazy(r"\\\\")
_CELL_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "|": "\\|"})
_PLAIN_CODE = lazy(r"[A-Za-z0-9._:/#+-]+")


def scan_lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(line_no, line, fenced)`` for every line; ``fenced`` marks fenced-code lines.

    Fence lines themselves count as fenced, so callers can skip them with the content.
    """
    fence = ""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if line[:4].lstrip(" ")[:1] in ("`", "~"):
            match = _FENCE().fullmatch(line)
            if match:
                marker, info = match.groups()
                if not fence:
                    # An info string after a backtick fence may not itself hold backticks.
                    if not (marker[0] == "`" and "`" in info):
                        fence = marker
                        yield number, line, True
                        continue
                elif marker[0] == fence[0] and len(marker) >= len(fence) and not info.strip():
                    fence = ""
                    yield number, line, True
                    continue
        yield number, line, bool(fence)


def heading(line: str) -> tuple[int, str] | None:
    """``(level, text)`` when ``line`` is an ATX heading (``## Title``), else None."""
    if not line[:4].lstrip(" ").startswith("#"):
        return None
    match = _HEADING.fullmatch(line)
    if match is None:
        return None
    return len(match.group(1)), (match.group(2) or "").strip()


def is_table_row(line: str) -> bool:
    """Whether ``line`` looks like a pipe-table row. okstra's tables always use a leading pipe."""
    return line.lstrip().startswith("|")


def split_table_row(line: str) -> list[str]:
    """Split one pipe-table row into stripped cells, as GitHub's table rule does (GFM).

    The optional outer pipes are dropped. Every ``|`` not preceded by a backslash splits the
    row — inside a backtick code span too, since GFM splits a row before it reads inline
    Markdown — and ``\\|`` is a literal pipe (the backslash dropped, in a code span as well).
    So ```a|b``` is two cells, ```a\\|b``` one.
    """
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    cells = _split_unescaped(body) if "\\" in body else body.split("|")
    if len(cells) > 1 and body.endswith("|") and not body.endswith("\\|"):
        cells.pop()  # the closing outer pipe
    return [cell.strip() for cell in cells]


def _split_unescaped(body: str) -> list[str]:
    """Split at pipes that no backslash precedes, ``\\|`` kept as ``|`` (GFM)."""
    cells: list[str] = []
    for part in body.split("|"):
        if cells and cells[-1].endswith("\\"):
            cells[-1] = cells[-1][:-1] + "|" + part
        else:
            cells.append(part)
    return cells


def _backtick_runs(body: str) -> dict[int, list[int]]:
    """Start offsets of every maximal backtick run, keyed by run length (sorted)."""
    runs: dict[int, list[int]] = {}
    for match in _BACKTICK_RUN().finditer(body):
        runs.setdefault(match.end() - match.start(), []).append(match.start())
    return runs


def _closing_run(runs: dict[int, list[int]], length: int, after: int) -> int | None:
    starts = runs.get(length)
    if not starts:
        return None
    index = bisect.bisect_left(starts, after)
    return starts[index] if index < len(starts) else None


def is_delimiter_row(cells: list[str]) -> bool:
    """Whether ``cells`` form the ``|---|:--:|`` row between a table's header and body."""
    return bool(cells) and all(_DELIMITER_CELL.fullmatch(cell) for cell in cells)


def header_key(cell: str) -> str:
    """The column a header cell names, as lower-case letters and digits only:
    ``**Effective steps** (≤6)`` → ``effectivesteps``, ```Ticket ID``` → ``ticketid``."""
    return _NOT_NAME.sub("", cell.split("(")[0].lower())


def unwrap_code(cell: str) -> str:
    """The cell text without one wrapping code span (```approval``` → ``approval``)."""
    text = cell.strip()
    if text.startswith("`"):
        run = len(text) - len(text.lstrip("`"))
        fence = "`" * run
        inner = text[run:]
        if len(inner) > run and inner.endswith(fence) and not inner[:-run].endswith("`"):
            inner = inner[:-run]
            if fence not in inner:
                return inner.strip()
    return text


def table_blocks(
    lines: list[tuple[int, str, bool]],
) -> Iterator[list[tuple[int, list[str]]]]:
    """Group consecutive unfenced table rows into tables of ``(line_no, cells)``."""
    block: list[tuple[int, list[str]]] = []
    for number, line, fenced in lines:
        if not fenced and is_table_row(line):
            block.append((number, split_table_row(line)))
            continue
        if block:
            yield block
            block = []
    if block:
        yield block


# ---------------------------------------------------------------------------------------------
# Cell values: what okstra writes into a table and how it reads a cell back


def encode_cell(value: str, *, code: bool = False) -> str:
    """``value`` as the Markdown of one table cell, on one line; :func:`decode_cell` reads it
    back.

    Line breaks (newlines or ``<br>``) become ``<br>``; ``|`` is backslash-escaped. Outside
    code spans ``\\`` is doubled and ``&``, ``<`` and ``>`` become entities, so no tag in a
    value is ever live Markdown HTML; inside one they stay as written, since a code span shows
    its text as it is (an entity there would show as ``&lt;``) and holds no HTML. A value that
    is one whole code span starts with ``&#96;`` so it is not unwrapped when read.
    ``code=True`` wraps a plain token (an id, a ticket, an enum value) in backticks.
    """
    if code and _PLAIN_CODE().fullmatch(value):
        return f"`{value}`"
    parts = [part.translate(_CELL_ESCAPES) for part in _CELL_BREAK().split(value)]
    text = "<br>".join(parts).strip()
    if unwrap_code(text) != text:  # the whole value is one code span: decode_cell would unwrap it
        # Its opening backtick (in the first line: text starts with it) written inert.
        at = len(parts[0]) - len(parts[0].lstrip())
        parts[0] = parts[0][:at] + "&#96;" + parts[0][at + 1 :]
    # Each line on its own: a code span never runs across a <br>, which it would show as text.
    return "<br>".join(_code_spans(part, _as_written_in_code) for part in parts).strip()


_ENCODED = lazy(r"&amp;|&lt;|&gt;|\\\\")
_AS_WRITTEN = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "\\\\": "\\"}


def _as_written_in_code(content: str) -> str:
    """A code span's content as :data:`_CELL_ESCAPES` wrote it, back as written but for its
    escaped pipes (GFM reads ``\\|`` as ``|`` in a code span too)."""
    return _ENCODED().sub(lambda m: _AS_WRITTEN[m.group()], content)


def _code_spans(text: str, in_code: Callable[[str], str] | None = None) -> str:
    """``text`` with every backtick run that closes no code span written as ``&#96;`` — such a
    run would otherwise pair with a run in a later cell of the row and swallow the ``|``
    between them (this module's reader, like many, keeps pipes inside code spans) — and each
    code span's content passed through ``in_code``."""
    if "`" not in text:
        return text
    runs = _backtick_runs(text)
    pieces: list[str] = []
    pos = done = 0
    for match in _TOKEN().finditer(text):
        start, end = match.span()
        if start < done:
            continue
        token = match.group()
        done = end
        if token[0] == "\\":
            continue
        close = _closing_run(runs, len(token), end)
        if close is None:
            pieces += [text[pos:start], "&#96;" * len(token)]
            pos = end
        else:
            done = close + len(token)
            if in_code is not None:
                pieces += [text[pos:end], in_code(text[end:close])]
                pos = close
    pieces.append(text[pos:])
    return "".join(pieces)


def _segments(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into plain text and code spans (``True``, with their backticks), paired as
    :func:`_code_spans` pairs them; a run that closes nothing is plain text."""
    runs = _backtick_runs(text) if "`" in text else {}
    found: list[tuple[str, bool]] = []
    pos = done = 0
    for match in _TOKEN().finditer(text) if runs else ():
        start, end = match.span()
        if start < done or match.group()[0] == "\\":
            done = max(done, end)
            continue
        close = _closing_run(runs, end - start, end)
        done = end
        if close is not None:
            done = close + end - start
            found += [(text[pos:start], False), (text[start:done], True)]
            pos = done
    found.append((text[pos:], False))
    return found


def decode_cell(cell: str) -> str:
    """A cell's value as a reader sees it: one wrapping code span removed, and outside code
    spans ``<br>`` as a line break, ``\\\\`` as one backslash and entities decoded (a code
    span shows its text as it is); outer whitespace stripped.

    ``decode_cell(encode_cell(v))`` is ``v`` with line breaks as ``\\n`` and outer whitespace
    stripped (``\\|`` was already undone when the row was split).
    """
    from html import unescape  # html.entities' table: only where a cell is decoded

    text = unwrap_code(cell)
    if text != cell.strip():
        return text
    out = []
    for piece, is_code in _segments(text):
        if is_code:
            out.append(piece)
            continue
        parts = _BR_TAG().split(piece)
        out.append("\n".join(unescape(_ESCAPED_BACKSLASH().sub(r"\\", p)) for p in parts))
    return "".join(out).strip()


def cell_value(value: str) -> str:
    """What :func:`decode_cell` gives back for ``value`` written with :func:`encode_cell`."""
    return "\n".join(_CELL_BREAK().split(value)).strip()
