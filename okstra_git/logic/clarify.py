"""§5 Clarification Items and the approval marker of a plan (docs/workflow.md), as pure text
functions.

The §5 table has eight columns, ``ID | Ticket ID | Kind | Statement | Expected form | Blocks |
Status | User input`` (in any order; a header cell may add a note in parentheses). A report without
a ``## 5. Clarification Items`` section (the legacy ``4.5.9 Open Questions`` / ``5.1`` / ``5.2``
layout) is "schema absent", which is not the same as "no items": the approval gate then relies on
the marker alone. Under that heading okstra is strict (docs/workflow.md): a table whose header is
not those eight columns, or a row it cannot read (an unknown Kind, Blocks or Status, too many
cells), is reported, and blocks approval, instead of being skipped.
"""

from __future__ import annotations

import re

from ..core.errors import BadInput
from ..core.mdtable import (
    decode_cell,
    header_key,
    heading,
    is_delimiter_row,
    scan_lines,
    table_blocks,
)
from ..core.patterns import lazy
from ..core.shell import okstra
from ..core.values import Value

KINDS = ("material", "decision", "data-point")
BLOCKS = ("approval", "next-phase", "none")
STATUSES = ("open", "answered", "resolved", "obsolete")
UNRESOLVED = frozenset({"open", "answered"})
"""Statuses that still need the user; on a ``Blocks=approval`` row they block approval."""

CANONICAL_MARKER = "- [x] Approved"
AUDIT_LABELS = {"ko": "승인 일시 (CLI ack): ", "en": "Approved at (CLI ack): "}

_SECTION = re.compile(r"5\.?\s+clarification items\b", re.IGNORECASE)
_MARKER = re.compile(r"([ \t]*)[-*+] \[([ xX])\][ \t]+Approved[ \t]*")
# The report template's labelled line (seed 002): a list item whose label ends in a colon, then
# the marker in backticks, then nothing or an arrow and a note —
# ``- 승인 여부 (사용자가 직접 편집): `- [ ] Approved` ← 승인하려면 …``.
_LABELLED = lazy(
    r"[ \t]*[-*+][ \t]+[^`\r\n]*[^`\s]:[ \t]*`[-*+] \[([ xX])\][ \t]+Approved[ \t]*`"
    r"(?:[ \t]+(?:←|<-)[^\r\n]*)?[ \t]*"
)
# A pattern string, compiled (and cached by ``re``) on first use: compiling this class costs
# ~1 ms, and only ``plan approve`` needs it, not every command that imports this module.
_HANGUL = r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]"
_BLANK = {"", "-", "—", "–"}
COLUMNS = (
    "ID",
    "Ticket ID",
    "Kind",
    "Statement",
    "Expected form",
    "Blocks",
    "Status",
    "User input",
)
"""The §5 columns in their canonical order (docs/workflow.md)."""
_FIELDS = dict(
    zip(
        map(header_key, COLUMNS),
        ("id", "ticket_id", "kind", "statement", "expected_form", "blocks", "status", "user_input"),
        strict=True,
    )
)


class ClarificationItem(Value):
    """One row of the §5 table; cells are unwrapped from backticks and stripped."""

    id: str
    """The row id, ``C-001`` style (empty if the cell was empty)."""
    ticket_id: str
    """The Ticket ID cell."""
    kind: str
    """``material``, ``decision`` or ``data-point``, lower-cased (other values kept as written)."""
    statement: str
    """What is asked and why."""
    expected_form: str
    """The shape of the answer the plan expects."""
    blocks: str
    """``approval``, ``next-phase`` or ``none``, lower-cased."""
    status: str
    """``open``, ``answered``, ``resolved`` or ``obsolete``, lower-cased."""
    user_input: str
    """What the user wrote in the last column."""
    line: int
    """1-based line of the row in the report."""


class MalformedRow(Value):
    """A §5 table line that could not be read safely: a row, or a table header that is not the
    §5 header (then the table's rows are not read)."""

    line: int
    """1-based line of the row or header."""
    reason: str
    """Why it was skipped, naming what was expected."""


class ClarificationReport(Value):
    """What a report's §5 says: absent, present without rows, or present with rows."""

    schema_present: bool
    """Whether the report has a ``## 5. Clarification Items`` section; False for legacy
    reports and reports without §5."""
    items: tuple[ClarificationItem, ...] = ()
    """The readable rows, in order."""
    line: int | None = None
    """Line of the ``## 5. Clarification Items`` heading, if present."""
    malformed: tuple[MalformedRow, ...] = ()
    """Lines that could not be read: rows (too many cells, an unknown Kind, Blocks or Status)
    and table headers that are not the §5 header."""


def parse_clarification_items(text: str) -> ClarificationReport:
    """Read the ``## 5. Clarification Items`` section of a report. Never raises on odd text."""
    lines = list(scan_lines(text))
    start = end = None
    for i, (_, line, fenced) in enumerate(lines):
        parsed = None if fenced else heading(line)
        if parsed is None:
            continue
        level, title = parsed
        if start is None:
            if level == 2 and _SECTION.match(title):
                start = i
        elif level <= 2:
            end = i
            break
    if start is None:
        return ClarificationReport(schema_present=False)
    section = lines[start + 1 : end]
    heading_line = lines[start][0]

    # The heading with only a placeholder line is a confident "no items".
    items: list[ClarificationItem] = []
    malformed: list[MalformedRow] = []
    for table in table_blocks(section):
        header_problem = _header_problem(table[0])
        if header_problem is not None:
            malformed.append(header_problem)
        else:
            _read_rows(table, items, malformed)
    return ClarificationReport(True, tuple(items), heading_line, tuple(malformed))


def _header_problem(header: tuple[int, list[str]]) -> MalformedRow | None:
    """Why a table header under §5 is not the §5 header, naming the columns expected."""
    line, cells = header
    keys = [header_key(cell) for cell in cells]
    missing = [name for name in COLUMNS if header_key(name) not in keys]
    unknown = [cell for cell, key in zip(cells, keys, strict=True) if key not in _FIELDS]
    repeated = sorted({cell for cell, key in zip(cells, keys, strict=True) if keys.count(key) > 1})
    if not (missing or unknown or repeated):
        return None
    parts = []
    if missing:
        parts.append("expected column " + ", ".join(f"`{name}`" for name in missing))
    if unknown:
        parts.append("found unknown column " + ", ".join(f"`{cell}`" for cell in unknown))
    if repeated:
        parts.append("found repeated column " + ", ".join(f"`{cell}`" for cell in repeated))
    return MalformedRow(
        line,
        f"table header is not the §5 header: {'; '.join(parts)} — the columns are "
        f"{' | '.join(COLUMNS)}",
    )


def _read_rows(
    table: list[tuple[int, list[str]]],
    items: list[ClarificationItem],
    malformed: list[MalformedRow],
) -> None:
    header = [header_key(cell) for cell in table[0][1]]
    column = {_FIELDS[key]: i for i, key in enumerate(header)}
    for line, cells in table[1:]:
        if is_delimiter_row(cells):
            continue
        if len(cells) > len(header):
            malformed.append(
                MalformedRow(
                    line,
                    f"{len(cells)} cells but the header has {len(header)}; "
                    f"write a literal | inside a cell as \\|",
                )
            )
            continue
        # A row may stop early (Markdown allows it): the missing cells are empty.
        values = {
            field: decode_cell(cells[i]) if i < len(cells) else "" for field, i in column.items()
        }
        kind, blocks, status = (values[f].lower() for f in ("kind", "blocks", "status"))
        if blocks in _BLANK and status in _BLANK:
            continue  # a placeholder row such as "| - | | … |"
        wrong = [
            f"{name}={values[field]!r} (one of {', '.join(allowed)})"
            for name, field, value, allowed in (
                ("Kind", "kind", kind, KINDS),
                ("Blocks", "blocks", blocks, BLOCKS),
                ("Status", "status", status, STATUSES),
            )
            if value not in allowed
        ]
        if wrong:
            malformed.append(MalformedRow(line, "unknown " + "; ".join(wrong)))
            continue
        items.append(
            ClarificationItem(
                id=values["id"],
                ticket_id=values["ticket_id"],
                kind=kind,
                statement=values["statement"],
                expected_form=values["expected_form"],
                blocks=blocks,
                status=status,
                user_input=values["user_input"],
                line=line,
            )
        )


def unresolved_approval_blockers(report: ClarificationReport) -> list[ClarificationItem]:
    """Rows with ``Blocks=approval`` whose Status is open or answered (none if schema absent)."""
    return [
        item for item in report.items if item.blocks == "approval" and item.status in UNRESOLVED
    ]


# ---------------------------------------------------------------------------------------------
# The approval marker


def _checkbox(line: str) -> int | None:
    """Where the marker's box character (`` ``, ``x`` or ``X``) is in ``line``, when the line is
    a marker line: exactly ``- [ ] Approved`` (indentation and trailing blanks aside), or the
    template's labelled line with the marker in backticks (:data:`_LABELLED`)."""
    match = _MARKER.fullmatch(line)
    if match:
        return match.start(2)
    match = _LABELLED().fullmatch(line)
    return match.start(1) if match else None


def find_approval_markers(text: str) -> list[tuple[int, bool]]:
    """``(line_no, checked)`` for every marker line: exactly ``- [ ] Approved``, or the report
    template's labelled line ``- <label>: `- [ ] Approved` ← <note>``.

    A mention in prose, or in backticks anywhere but a labelled list item, is not a marker;
    lines inside fenced code are ignored.
    """
    markers = []
    for number, line, fenced in scan_lines(text):
        if fenced or "Approved" not in line:
            continue
        box = _checkbox(line)
        if box is not None:
            markers.append((number, line[box] != " "))
    return markers


def _single_marker(text: str, path: str) -> int:
    markers = find_approval_markers(text)
    if len(markers) != 1:
        where = ", ".join(str(number) for number, _ in markers) or "none found"
        raise BadInput(
            f"{path}: a plan needs exactly one `- [ ] Approved` marker line "
            f"(found {len(markers)}: {where}); fix the plan's approval block"
        )
    return markers[0][0]


def flip_marker(text: str, path: str = "plan") -> str:
    """The plan with its marker line changed to ``- [x] Approved`` (a labelled line keeps its
    label and note, only its box is ticked); every other byte is kept.

    A plan already approved comes back unchanged. Raises BadInput unless there is exactly one
    marker line.
    """
    number = _single_marker(text, path)
    parts = text.split("\n")
    old = parts[number - 1]
    line, ending = old.removesuffix("\r"), ("\r" if old.endswith("\r") else "")
    bare = _MARKER.fullmatch(line)
    if bare is not None:
        parts[number - 1] = bare.group(1) + CANONICAL_MARKER + ending
    else:
        box = _checkbox(line)
        assert box is not None  # _single_marker found it
        if line[box] == " ":
            parts[number - 1] = line[:box] + "x" + line[box + 1 :] + ending
    return "\n".join(parts)


def detect_language(text: str) -> str:
    """``ko`` when the text contains Hangul, else ``en``."""
    return "ko" if re.search(_HANGUL, text) else "en"


def append_audit_line(
    text: str, when_iso: str, language: str | None = None, path: str = "plan"
) -> str:
    """Insert ``- 승인 일시 (CLI ack): <when>`` (``Approved at`` in English) after the marker.

    ``language`` is ``ko`` or ``en``; None detects it from the text. The new line copies the
    marker line's indentation and line ending; nothing else changes.
    """
    language = language or detect_language(text)
    if language not in AUDIT_LABELS:
        raise ValueError(f"language must be one of {sorted(AUDIT_LABELS)}, not {language!r}")
    number = _single_marker(text, path)
    parts = text.split("\n")
    marker = parts[number - 1]
    indent = marker[: len(marker) - len(marker.lstrip(" \t"))]
    ending = "\r" if marker.endswith("\r") else ""
    parts.insert(number, f"{indent}- {AUDIT_LABELS[language]}{when_iso}{ending}")
    return "\n".join(parts)


class ApprovalText(Value):
    """What a plan's own text says about its approval: checks 1–2 of the approval gate
    (docs/workflow.md), read once."""

    markers: list[tuple[int, bool]]
    """``(line_no, checked)`` of every marker line (:func:`find_approval_markers`)."""
    clarification: ClarificationReport
    """The §5 table as read."""
    blockers: list[ClarificationItem]
    """Its unresolved ``Blocks=approval`` rows."""

    @property
    def marker_set(self) -> bool:
        """Exactly one marker line, and it is ticked."""
        return len(self.markers) == 1 and self.markers[0][1]

    def problems(self, path: str, *, key: str = "KEY", require_marker: bool = True) -> list[str]:
        """Every reason the text does not allow approval, as refusals print them.

        ``require_marker=False`` is for ``plan approve``, which ticks the marker itself and so
        only needs §5 to be clear. The approval note (check 3) is the caller's business.
        """
        problems = []
        markers = self.markers
        checked = any(is_checked for _, is_checked in markers)
        if require_marker:
            if len(markers) > 1:
                problems.append(
                    f"approved plan has {len(markers)} user-approval marker lines (lines "
                    f"{', '.join(str(n) for n, _ in markers)}); keep exactly one "
                    f"`{CANONICAL_MARKER}`: {path}"
                )
            elif not checked:
                problems.append(
                    f"approved plan has no recognised user-approval marker: {path}\n"
                    f"  canonical form (one line in the approval block at the top): "
                    f"{CANONICAL_MARKER}\n"
                    "  or let okstra check §5 and tick it for you: "
                    + okstra("plan", "approve", key)
                )
        if self.blockers:
            lead = "approved plan marker is set but §5 has" if checked else "cannot approve: §5 has"
            lines = [
                f"{lead} {len(self.blockers)} unresolved Blocks=approval row(s); "
                f"resolve them or mark them obsolete before approving:"
            ]
            lines += [
                f"  - {item.id or f'line {item.line}'} (Status={item.status})"
                for item in self.blockers
            ]
            lines.append(f"  file: {path}")
            problems.append("\n".join(lines))
        malformed = self.clarification.malformed
        if malformed:
            lines = [f"§5 has {len(malformed)} line(s) the approval gate cannot read:"]
            lines += [f"  - line {row.line}: {row.reason}" for row in malformed]
            lines.append(f"  file: {path}")
            problems.append("\n".join(lines))
        return problems


def read_approval_text(text: str) -> ApprovalText:
    """The approval marker(s) and §5 of a plan. Never raises on odd text."""
    report = parse_clarification_items(text)
    return ApprovalText(find_approval_markers(text), report, unresolved_approval_blockers(report))


def approval_problems(
    text: str, path: str, *, key: str = "KEY", require_marker: bool = True
) -> list[str]:
    """Every reason the plan is not approved by its own text (:meth:`ApprovalText.problems`);
    an empty list means the text allows approval."""
    return read_approval_text(text).problems(path, key=key, require_marker=require_marker)


# ---------------------------------------------------------------------------------------------
# Legacy carry-in (seed 002): 4.5.9 Open Questions / 5.1 / 5.2 rows as §5 rows

_LEGACY_ID = lazy(r"(OQ-?\d+|A-?\d+|Q-?\d+)")


def legacy_items(text: str) -> list[ClarificationItem]:
    """The rows of a legacy report's ``4.5.9 Open Questions`` (``OQ-*``), ``5.1`` materials
    (``A*``) and ``5.2`` questions (``Q*``) tables as §5 rows, numbered ``C-001``… in order:
    ``A`` → ``material``, ``Q`` and ``OQ`` → ``decision``; ``Blocks=approval`` only for an open
    question marked blocking, else ``next-phase``; the legacy id kept at the head of the
    statement (``[legacy OQ-003] …``). None for a report that has a §5 table."""
    if parse_clarification_items(text).schema_present:
        return []
    out: list[ClarificationItem] = []
    for table in table_blocks(list(scan_lines(text))):
        header = [cell.lower() for cell in table[0][1]]

        def column(*words: str, cells: list[str], header: list[str] = header) -> str:
            for i, name in enumerate(header):
                if i < len(cells) and any(w in name for w in words):
                    return decode_cell(cells[i])
            return ""

        for line, cells in table[1:]:
            if is_delimiter_row(cells) or not cells:
                continue
            legacy = decode_cell(cells[0])
            if not _LEGACY_ID().fullmatch(legacy):
                continue
            kind = "material" if legacy.startswith("A") else "decision"
            used = {0}
            ticket = column("ticket", cells=cells)
            status = column("status", cells=cells).lower()
            blocking = column("blocking", cells=cells).lower()
            user = column("사용자 답변", "사용자가 첨부", "user", "answer", cells=cells)
            expected = column("기대", "expected", cells=cells)
            for i, name in enumerate(header):
                if any(w in name for w in ("ticket", "status", "blocking", "기대", "expected")):
                    used.add(i)
                if any(w in name for w in ("사용자 답변", "사용자가 첨부", "user", "answer")):
                    used.add(i)
            rest = [decode_cell(c) for i, c in enumerate(cells) if i not in used and c.strip()]
            approval = legacy.startswith("OQ") and blocking in ("예", "yes", "y", "true")
            out.append(
                ClarificationItem(
                    id=f"C-{len(out) + 1:03d}",
                    ticket_id=ticket,
                    kind=kind,
                    statement=f"[legacy {legacy}] " + " — ".join(rest),
                    expected_form=expected,
                    blocks="approval" if approval else "next-phase",
                    status=status if status in STATUSES else "open",
                    user_input=user,
                    line=line,
                )
            )
    return out


def items_table(items: list[ClarificationItem]) -> str:
    """``items`` as a ``## 5. Clarification Items`` section (Markdown)."""
    from ..core.mdtable import encode_cell

    lines = [
        "## 5. Clarification Items",
        "",
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    for item in items:
        values = (
            item.id, item.ticket_id, item.kind, item.statement, item.expected_form,
            item.blocks, item.status, item.user_input,
        )  # fmt: skip
        lines.append("| " + " | ".join(encode_cell(v) for v in values) + " |")
    return "\n".join(lines) + "\n"
