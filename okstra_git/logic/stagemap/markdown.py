"""Reading a plan's Stage Map and stage sections from Markdown: tolerant, every unreadable part an
S1 finding."""

from __future__ import annotations

import functools
import re

from ...core.mdtable import (
    header_key,
    heading,
    is_delimiter_row,
    scan_lines,
    table_blocks,
    unwrap_code,
)
from ...core.patterns import lazy
from ...core.values import Value
from .model import CANONICAL_HEADER, Finding, Stage, StageMap

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


_MAP_HEADING = re.compile(r"(?:[0-9.]+\s+)?stage map\b(?:\s*\(.*\))?", re.IGNORECASE)


_STAGE_HEADING = re.compile(
    r"stage\s+([0-9]{1,9})(?![0-9])(?:\s*[—–:-]+\s*|\s+|$)(.*)", re.IGNORECASE
)


_CONTRACT_HEADING = re.compile(r"(?:[0-9.]+\s+)?stage exit contract\b", re.IGNORECASE)


_STAGE_CELL = re.compile(r"(?:stage\s*)?([0-9]{1,9})", re.IGNORECASE)


_INTEGER = re.compile(r"[0-9]{1,9}")


_STEP = re.compile(r"([ \t]*)[0-9]+[.)][ \t]+(\S.*)")


_FILES_LABEL = re.compile(
    r"\s*(?:[-*+]\s+)?(?:추가/변경된\s*파일\s*\(예측\)|added/changed\s+files\s*\(predicted\))"
    r"\s*[:：]\s*(.*)",
    re.IGNORECASE,
)


_SUB_BULLET = lazy(r"[ \t]+[-*+][ \t]+(.*)")


_CODE_SPAN = re.compile(r"`([^`]+)`")


_NONE_WORDS = {"", "(none)", "none", "-", "—", "–", "n/a", "(없음)", "없음"}


_COLUMNS = {
    "stage": ("Stage", {"stage"}),
    "title": ("Title", {"title"}),
    "steps": ("Effective steps", {"effectivesteps", "effectivestep"}),
    "depends": ("Depends-on", {"dependson", "depends"}),
}


@functools.lru_cache(maxsize=32)
def parse_plan(text: str, path: str) -> StageMap:
    """Read the Stage Map and the stage sections of a Markdown plan.

    Never raises on odd input: an absent section, a table missing columns or an unreadable
    cell becomes an S1 finding in ``parse_findings``, and whatever is readable is kept.

    A function of its arguments alone, and a StageMap is immutable (tuples of values), so one
    parse is shared: ``task status`` reads the plan twice — its approval, then its stages —
    and the board does that for every task.
    """
    lines = list(scan_lines(text))
    headings = [
        (i, parsed[0], parsed[1])
        for i, (_, line, fenced) in enumerate(lines)
        if not fenced and (parsed := heading(line)) is not None
    ]
    findings: list[Finding] = []

    # Prefer a heading that is just "5.5 Stage Map" over one that merely starts like it
    # ("Stage Map self-check" in a planning checklist).
    map_pos = next((p for p, h in enumerate(headings) if _MAP_HEADING.fullmatch(h[2])), None)
    if map_pos is None:
        map_pos = next((p for p, h in enumerate(headings) if _MAP_HEADING.match(h[2])), None)
    if map_pos is None:
        findings.append(
            Finding(
                "S1", (), None, f"no `## 5.5 Stage Map` section with a `{CANONICAL_HEADER}` table"
            )
        )
        return StageMap((), path, None, tuple(findings))
    map_start = headings[map_pos][0]
    # The table sits above the first heading after the section title (normally the first stage
    # section); a table further down is not the map.
    table_end = headings[map_pos + 1][0] if map_pos + 1 < len(headings) else len(lines)
    map_line = lines[map_start][0]
    rows, dependencies_known = _read_table(lines[map_start + 1 : table_end], map_line, findings)

    sections = _read_sections(lines, headings)
    first_section: dict[int, _Section] = {}
    for section in sections:
        first = first_section.setdefault(section.number, section)
        if first is not section:
            findings.append(
                Finding(
                    "S2",
                    (section.number,),
                    section.line,
                    f"stage {section.number} has a second `### Stage {section.number}` section "
                    f"(the first is at line {first.line}); keep one",
                )
            )
    numbers = {row.number for row in rows}
    if rows:
        for number, section in first_section.items():
            if number not in numbers:
                findings.append(
                    Finding(
                        "S2",
                        (number,),
                        section.line,
                        f"section `### Stage {number}` has no row in the Stage Map table; "
                        f"add the row or renumber the section",
                    )
                )
    stages = tuple(
        row.replace(
            steps=own.steps,
            predicted_files=own.files,
            section_line=own.line,
            contract_line=own.contract_line,
            files_line=own.files_line,
        )
        if (own := first_section.get(row.number))
        else row
        for row in rows
    )
    return StageMap(stages, path, map_line, tuple(findings), dependencies_known=dependencies_known)


class _Section(Value):
    number: int
    line: int
    steps: tuple[str, ...]
    contract_line: int | None
    files_line: int | None
    files: tuple[str, ...]


def _clean_cell(cell: str) -> str:
    return unwrap_code(cell.replace("**", "")).strip()


def _read_table(
    lines: list[tuple[int, str, bool]], map_line: int, findings: list[Finding]
) -> tuple[list[Stage], bool]:
    """The table's rows as stages without their sections, and whether it has Depends-on."""
    table = None
    for block in table_blocks(lines):
        if "stage" in {header_key(cell) for cell in block[0][1]}:
            table = block
            break
    if table is None:
        findings.append(
            Finding("S1", (), map_line, f"the Stage Map section has no `{CANONICAL_HEADER}` table")
        )
        return [], False

    header_line, header = table[0]
    keys = [header_key(cell) for cell in header]
    column: dict[str, int | None] = {}
    for name, (_, aliases) in _COLUMNS.items():
        column[name] = next((i for i, key in enumerate(keys) if key in aliases), None)
    missing = [label for name, (label, _) in _COLUMNS.items() if column[name] is None]
    if missing:
        findings.append(
            Finding(
                "S1",
                (),
                header_line,
                f"the Stage Map table lacks the {', '.join(missing)} column(s); "
                f"the header must be `{CANONICAL_HEADER}`",
            )
        )
    body = table[1:]
    if body and is_delimiter_row(body[0][1]):
        body = body[1:]
    else:
        findings.append(
            Finding(
                "S1",
                (),
                header_line,
                "the Stage Map table has no `|---|` delimiter row under its header",
            )
        )

    rows: list[Stage] = []
    for line, cells in body:
        if is_delimiter_row(cells):
            continue
        if len(cells) != len(header):
            findings.append(
                Finding(
                    "S1",
                    (),
                    line,
                    f"this Stage Map row has {len(cells)} cells but the header has "
                    f"{len(header)}; write a literal | inside a cell as \\|",
                )
            )
            # An unescaped pipe most likely sits in the free-text Title: rejoin it there so the
            # number columns after it still line up.
            extra = len(cells) - len(header)
            title_at = column["title"]
            if extra > 0 and title_at is not None:
                joined = " | ".join(cells[title_at : title_at + extra + 1])
                cells = [*cells[:title_at], joined, *cells[title_at + extra + 1 :]]
        stage_text = _cell(cells, column["stage"])
        match = _STAGE_CELL.fullmatch(stage_text)
        if match is None:
            findings.append(
                Finding("S1", (), line, f"stage cell {stage_text!r} is not a stage number")
            )
            continue
        number = int(match.group(1))
        effective_steps = None
        if column["steps"] is not None:
            steps_text = _cell(cells, column["steps"])
            if _INTEGER.fullmatch(steps_text):
                effective_steps = int(steps_text)
            else:
                findings.append(
                    Finding(
                        "S1",
                        (number,),
                        line,
                        f"stage {number}: the effective-steps cell {steps_text!r} "
                        f"is not a whole number",
                    )
                )
        depends_text = _cell(cells, column["depends"])
        depends_on, readable = _parse_depends(depends_text)
        if not readable:
            findings.append(
                Finding(
                    "S1",
                    (number,),
                    line,
                    f"stage {number}: the depends-on cell {depends_text!r} must be `(none)` "
                    f"or a comma list of stage numbers",
                )
            )
        title = _cell(cells, column["title"])
        rows.append(Stage(number, title, effective_steps, depends_on, (), (), line))
    if not any(not is_delimiter_row(cells) for _, cells in body):
        findings.append(Finding("S1", (), header_line, "the Stage Map table has no stage rows"))
    return rows, column["depends"] is not None


def _cell(cells: list[str], index: int | None) -> str:
    if index is None or index >= len(cells):
        return ""
    return _clean_cell(cells[index])


def _parse_depends(text: str) -> tuple[tuple[int, ...], bool]:
    """The stage numbers in a depends-on value and whether it was well formed.

    Numbers are salvaged from a malformed value ("1 and 2") so the graph checks stay useful.
    """
    if text.strip().lower() in _NONE_WORDS:
        return (), True
    numbers: list[int] = []
    readable = True
    for token in text.split(","):
        match = _STAGE_CELL.fullmatch(_clean_cell(token))
        if match:
            numbers.append(int(match.group(1)))
        else:
            readable = False
            numbers.extend(int(digits) for digits in _INTEGER.findall(token))
    return tuple(dict.fromkeys(numbers)), readable


def _read_sections(
    lines: list[tuple[int, str, bool]], headings: list[tuple[int, int, str]]
) -> list[_Section]:
    sections: list[_Section] = []
    for pos, (start, level, title) in enumerate(headings):
        match = _STAGE_HEADING.match(title)
        if match is None or level < 2:
            continue
        end_pos = _end_position(headings, pos)
        end = headings[end_pos][0] if end_pos < len(headings) else len(lines)
        contract = next(
            (
                p
                for p in range(pos + 1, end_pos)
                if headings[p][1] > level and _CONTRACT_HEADING.match(headings[p][2])
            ),
            None,
        )
        contract_start = contract_end = end
        if contract is not None:
            contract_start = headings[contract][0]
            contract_end_pos = _end_position(headings, contract)
            contract_end = (
                headings[contract_end_pos][0] if contract_end_pos < len(headings) else len(lines)
            )
        steps = _numbered_steps(lines[start + 1 : contract_start] + lines[contract_end:end])
        files_line, files = _predicted_files(lines[contract_start + 1 : contract_end])
        sections.append(
            _Section(
                number=int(match.group(1)),
                line=lines[start][0],
                steps=steps,
                contract_line=lines[contract_start][0] if contract is not None else None,
                files_line=files_line,
                files=files,
            )
        )
    return sections


def _end_position(headings: list[tuple[int, int, str]], pos: int) -> int:
    """Position in ``headings`` of the heading that closes the section opened at ``pos``."""
    level = headings[pos][1]
    for later in range(pos + 1, len(headings)):
        if headings[later][1] <= level:
            return later
    return len(headings)


def _numbered_steps(lines: list[tuple[int, str, bool]]) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for _, line, fenced in lines:
        if fenced or not line.lstrip(" \t")[:1].isdigit():
            continue
        match = _STEP.fullmatch(line)
        if match:
            found.append((len(match.group(1).expandtabs(4)), match.group(2).strip()))
    if not found:
        return ()
    # Steps are the outermost numbered list; deeper numbered items are sub-points of a step.
    outer = min(indent for indent, _ in found)
    return tuple(text for indent, text in found if indent == outer)


def _predicted_files(lines: list[tuple[int, str, bool]]) -> tuple[int | None, tuple[str, ...]]:
    for i, (number, line, fenced) in enumerate(lines):
        if fenced:
            continue
        match = _FILES_LABEL.fullmatch(line.replace("**", ""))
        if match is None:
            continue
        files = _file_names(match.group(1))
        if not files:
            # The list may continue as indented sub-bullets under the label.
            for _, more, more_fenced in lines[i + 1 :]:
                bullet = None if more_fenced else _SUB_BULLET().fullmatch(more)
                if bullet is None:
                    break
                files += _file_names(bullet.group(1))
        return number, tuple(dict.fromkeys(files))
    return None, ()


def _file_names(text: str) -> list[str]:
    spans = _CODE_SPAN.findall(text)
    names = spans if spans else text.split(",")
    return [
        _normal_path(name)
        for name in names
        if name.strip() and name.strip().lower() not in _NONE_WORDS
    ]


def _normal_path(name: str) -> str:
    name = name.strip()
    while name.startswith("./"):
        name = name[2:]
    return name


class SectionText(Value):
    """One ``### Stage N`` section of a plan as written: what a worker reads of its stage."""

    number: int
    """The stage number in the heading."""
    markdown: str
    """The whole section, its heading included, up to the next heading of its level or above."""
    contract: str | None
    """The ``#### Stage Exit Contract`` subsection, its heading included; None when absent."""


def stage_sections(text: str) -> dict[int, SectionText]:
    """The plan's stage sections as written, by stage number (the first section of a number,
    as :func:`parse_plan` reads it), trailing blank lines trimmed."""
    lines = list(scan_lines(text))
    headings = [
        (i, parsed[0], parsed[1])
        for i, (_, line, fenced) in enumerate(lines)
        if not fenced and (parsed := heading(line)) is not None
    ]

    def body(start: int, end: int) -> str:
        return "\n".join(line for _, line, _ in lines[start:end]).rstrip()

    found: dict[int, SectionText] = {}
    for pos, (start, level, title) in enumerate(headings):
        match = _STAGE_HEADING.match(title)
        if match is None or level < 2 or int(match.group(1)) in found:
            continue
        end_pos = _end_position(headings, pos)
        end = headings[end_pos][0] if end_pos < len(headings) else len(lines)
        contract = None
        for p in range(pos + 1, end_pos):
            if headings[p][1] > level and _CONTRACT_HEADING.match(headings[p][2]):
                close = _end_position(headings, p)
                contract = body(
                    headings[p][0], headings[close][0] if close < len(headings) else end
                )
                break
        number = int(match.group(1))
        found[number] = SectionText(number, body(start, end), contract)
    return found
