"""The Stage Map of a plan (SPEC §3): parsing, validation (S1–S7, S9) and graph helpers.

A plan lists its stages in the ``## 5.5 Stage Map`` table and describes each one in a
``### Stage N — Title`` section (numbered steps, then a ``#### Stage Exit Contract`` with the
predicted files). Report data carries the same map as ``implementationPlanning.stageMap``.

Parsing is tolerant: a problem that makes part of the map unreadable becomes an S1 finding and
the parser carries on, so one ``validate`` call reports every failure it can. Edges of the
depends-on graph point from a stage to the stages it depends on; "a reaches b" means b depends
on a, directly or through other stages (work flows from a to b).
"""

from __future__ import annotations

import re
from functools import cached_property

from ...core.errors import BadInput
from ...core.mdtable import (
    header_key,
    heading,
    is_delimiter_row,
    scan_lines,
    table_blocks,
    unwrap_code,
)
from ...core.values import Value, init, remember

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

STAGE_STEP_CAP = 6
"""Most effective steps one stage may have (seed 000: the ≤6 stage cap)."""

CHECKS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S9")
"""Validation checks in report order (S8 is not part of okstra-git)."""

CANONICAL_HEADER = "| Stage | Title | Effective steps | Depends-on |"

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
_SUB_BULLET = re.compile(r"[ \t]+[-*+][ \t]+(.*)")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_NONE_WORDS = {"", "(none)", "none", "-", "—", "–", "n/a", "(없음)", "없음"}
_COLUMNS = {
    "stage": ("Stage", {"stage"}),
    "title": ("Title", {"title"}),
    "steps": ("Effective steps", {"effectivesteps", "effectivestep"}),
    "depends": ("Depends-on", {"dependson", "depends"}),
}


class Finding(Value):
    """One failed check, naming the stage(s) and, for Markdown plans, the line."""

    __slots__ = ("check", "line", "message", "stages")
    check: str
    """The check id: ``S1`` … ``S7`` or ``S9``."""
    stages: tuple[int, ...]
    """The stage numbers involved (a pair for S9, the cycle for S4); empty when none applies."""
    line: int | None
    """1-based line in the plan; None for report data or when no line applies."""
    message: str
    """One sentence saying what is wrong and how to fix it."""

    def __init__(self, check: str, stages: tuple[int, ...], line: int | None, message: str) -> None:
        init(self, check=check, stages=stages, line=line, message=message)

    def render(self, path: str) -> str:
        """``path:line: S5: message`` — the form the CLI prints."""
        where = path if self.line is None else f"{path}:{self.line}"
        return f"{where}: {self.check}: {self.message}"


class Stage(Value):
    """One row of the Stage Map, joined with its ``### Stage N`` section."""

    __slots__ = (
        "contract_line",
        "depends_on",
        "effective_steps",
        "files_line",
        "line",
        "number",
        "predicted_files",
        "section_line",
        "steps",
        "title",
    )
    number: int
    """The stage number from the Stage column."""
    title: str
    """The Title cell."""
    effective_steps: int | None
    """The Effective steps cell; None when it is missing or not a whole number (an S1 finding)."""
    depends_on: tuple[int, ...]
    """Stage numbers this stage depends on, in the order written, without repeats."""
    steps: tuple[str, ...]
    """Text of each numbered step in the stage's section (empty for report data)."""
    predicted_files: tuple[str, ...]
    """Files named on the Stage Exit Contract's predicted-files line, in order, without repeats."""
    line: int | None
    """Line of the table row; None for report data."""
    section_line: int | None
    """Line of the ``### Stage N`` heading; None when the plan has no such section."""
    contract_line: int | None
    """Line of the ``#### Stage Exit Contract`` heading inside that section, if any."""
    files_line: int | None
    """Line of the predicted-files label inside the contract, if any."""

    def __init__(
        self,
        number: int,
        title: str,
        effective_steps: int | None,
        depends_on: tuple[int, ...],
        steps: tuple[str, ...],
        predicted_files: tuple[str, ...],
        line: int | None,
        section_line: int | None = None,
        contract_line: int | None = None,
        files_line: int | None = None,
    ) -> None:
        init(
            self,
            number=number,
            title=title,
            effective_steps=effective_steps,
            depends_on=depends_on,
            steps=steps,
            predicted_files=predicted_files,
            line=line,
            section_line=section_line,
            contract_line=contract_line,
            files_line=files_line,
        )


class StageMap(Value):
    """A plan's stages plus what went wrong while reading them."""

    __slots__ = ("_graph_cache", "dependencies_known", "from_markdown", "line",
                 "parse_findings", "path", "stages")  # fmt: skip

    stages: tuple[Stage, ...]
    """Stages in table (or list) order; a duplicated number appears once per row."""
    path: str
    """Where the map came from, for messages: the plan file or the data field."""
    line: int | None
    """Line of the ``Stage Map`` heading; None for report data or when it is absent."""
    parse_findings: tuple[Finding, ...]
    """Problems met while parsing (S1 unreadable parts, S2 stray or repeated sections)."""
    from_markdown: bool
    """Whether stage sections were read; report data has no step lists, so S6 is skipped."""
    dependencies_known: bool
    """False when the table has no Depends-on column; then S3, S4 and S9 are skipped."""

    def __init__(
        self,
        stages: tuple[Stage, ...],
        path: str,
        line: int | None = None,
        parse_findings: tuple[Finding, ...] = (),
        from_markdown: bool = True,
        dependencies_known: bool = True,
    ) -> None:
        init(
            self,
            stages=stages,
            path=path,
            line=line,
            parse_findings=parse_findings,
            from_markdown=from_markdown,
            dependencies_known=dependencies_known,
        )

    def stage(self, number: int) -> Stage | None:
        """The first stage with ``number``, or None."""
        return self._graph.by_number.get(number)

    @property
    def numbers(self) -> list[int]:
        """Distinct stage numbers in table order."""
        return list(self._graph.by_number)

    def to_data(self) -> list[dict[str, Any]]:
        """The report-data form: ``[{stage, title, effectiveSteps, dependsOn, predictedFiles}]``.

        Inverse of ``stage_map_from_data`` for a map that parsed cleanly.
        """
        return [
            {
                "stage": stage.number,
                "title": stage.title,
                "effectiveSteps": stage.effective_steps,
                "dependsOn": list(stage.depends_on),
                "predictedFiles": list(stage.predicted_files),
            }
            for stage in self.stages
        ]

    @property
    def _graph(self) -> _Graph:
        try:
            return self._graph_cache
        except AttributeError:
            return remember(self, "_graph_cache", _Graph(self.stages))


class _Graph:
    """Strongly connected components and transitive upstream sets, computed once per map."""

    def __init__(self, stages: Iterable[Stage]) -> None:
        self.by_number: dict[int, Stage] = {}
        for stage in stages:
            self.by_number.setdefault(stage.number, stage)
        self.bit = {number: 1 << i for i, number in enumerate(self.by_number)}
        self.edges = {
            number: tuple(d for d in stage.depends_on if d in self.bit and d != number)
            for number, stage in self.by_number.items()
        }
        self.components = _strongly_connected(list(self.by_number), self.edges)
        # Tarjan emits a component only after every component it depends on, so one pass in
        # emission order sees each dependency's upstream set complete.
        self.upstream: dict[int, int] = {}
        for component in self.components:
            members = set(component)
            mask = 0
            for number in component:
                for dep in self.edges[number]:
                    if dep not in members:
                        mask |= self.bit[dep] | self.upstream[dep]
            if len(component) > 1:
                for number in component:
                    mask |= self.bit[number]
            for number in component:
                self.upstream[number] = mask

    @cached_property
    def downstream(self) -> dict[int, int]:
        """Bit mask of the stages each stage reaches (its transitive dependents): the mirror of
        ``upstream``, in reverse emission order so each dependent's set is complete first."""
        dependents: dict[int, list[int]] = {number: [] for number in self.by_number}
        for number, deps in self.edges.items():
            for dep in deps:
                dependents[dep].append(number)
        down: dict[int, int] = {}
        for component in reversed(self.components):
            members = set(component)
            mask = 0
            for number in component:
                for dependent in dependents[number]:
                    if dependent not in members:
                        mask |= self.bit[dependent] | down[dependent]
            if len(component) > 1:
                for number in component:
                    mask |= self.bit[number]
            for number in component:
                down[number] = mask
        return down

    def reaches(self, a: int, b: int) -> bool:
        return a in self.bit and b in self.bit and bool(self.upstream[b] & self.bit[a])


def _strongly_connected(nodes: list[int], edges: dict[int, tuple[int, ...]]) -> list[list[int]]:
    """Tarjan's algorithm without recursion (a long dependency chain must not hit the limit)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    components: list[list[int]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(edges[root]))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def reaches(stage_map: StageMap, a: int, b: int) -> bool:
    """Whether stage ``b`` depends on stage ``a`` through one or more depends-on edges."""
    return stage_map._graph.reaches(a, b)


def downstream_closure(stage_map: StageMap, stages: Iterable[int]) -> set[int]:
    """``stages`` plus every stage that depends on one of them, directly or transitively.

    Numbers not in the map are left out, so an unknown number can never leak into a scope;
    callers that must refuse unknown numbers check ``stage_map.stage(n)`` first.
    """
    graph = stage_map._graph
    start = {n for n in stages if n in graph.bit}
    mask = 0
    for number in start:
        mask |= graph.bit[number]
    return start | {n for n, up in graph.upstream.items() if up & mask}


# ---------------------------------------------------------------------------------------------
# Markdown


def parse_plan(text: str, path: str) -> StageMap:
    """Read the Stage Map and the stage sections of a Markdown plan.

    Never raises on odd input: an absent section, a table missing columns or an unreadable
    cell becomes an S1 finding in ``parse_findings``, and whatever is readable is kept.
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
            steps=section.steps,
            predicted_files=section.files,
            section_line=section.line,
            contract_line=section.contract_line,
            files_line=section.files_line,
        )
        if (section := first_section.get(row.number))
        else row
        for row in rows
    )
    return StageMap(stages, path, map_line, tuple(findings), dependencies_known=dependencies_known)


class _Section(Value):
    __slots__ = ("contract_line", "files", "files_line", "line", "number", "steps")
    number: int
    line: int
    steps: tuple[str, ...]
    contract_line: int | None
    files_line: int | None
    files: tuple[str, ...]

    def __init__(
        self,
        number: int,
        line: int,
        steps: tuple[str, ...],
        contract_line: int | None,
        files_line: int | None,
        files: tuple[str, ...],
    ) -> None:
        init(
            self,
            number=number,
            line=line,
            steps=steps,
            contract_line=contract_line,
            files_line=files_line,
            files=files,
        )


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
                bullet = None if more_fenced else _SUB_BULLET.fullmatch(more)
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


# ---------------------------------------------------------------------------------------------
# Report data


def stage_map_from_data(
    items: list[dict[str, Any]], path: str = "implementationPlanning.stageMap"
) -> StageMap:
    """Build a map from report data ``[{stage, title, effectiveSteps, dependsOn, predictedFiles}]``.

    Besides the canonical types, okstra's older forms are read: a numeric string for ``stage``
    and ``effectiveSteps``, a ``"(none)"`` / ``"1, 2"`` string for ``dependsOn`` and a
    comma-separated string for ``predictedFiles``. A list that is not a list of objects raises
    BadInput; an unreadable field is an S1 finding.
    """
    if not isinstance(items, list):
        raise BadInput(f"{path}: expected a list of stage objects, found {_json_type(items)}")
    findings: list[Finding] = []
    stages: list[Stage] = []
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            raise BadInput(f"{where}: expected a stage object, found {_json_type(item)}")
        number = _data_int(item.get("stage"))
        if number is None:
            findings.append(
                Finding(
                    "S1", (), None, f"{where}.stage {item.get('stage')!r} is not a stage number"
                )
            )
            continue
        title = item.get("title")
        if not isinstance(title, str):
            findings.append(Finding("S1", (number,), None, f"{where}.title must be a string"))
            title = ""
        effective_steps = _data_int(item.get("effectiveSteps"))
        if effective_steps is None:
            findings.append(
                Finding(
                    "S1",
                    (number,),
                    None,
                    f"{where}.effectiveSteps {item.get('effectiveSteps')!r} is not a whole number",
                )
            )
        depends_on, readable = _data_depends(item.get("dependsOn", "(none)"))
        if not readable:
            findings.append(
                Finding(
                    "S1",
                    (number,),
                    None,
                    f"{where}.dependsOn must be a list of stage numbers or `(none)`",
                )
            )
        files_value = item.get("predictedFiles", [])
        if isinstance(files_value, str):
            files = _file_names(files_value)
        elif isinstance(files_value, list) and all(isinstance(f, str) for f in files_value):
            files = [_normal_path(f) for f in files_value if f.strip()]
        else:
            findings.append(
                Finding("S1", (number,), None, f"{where}.predictedFiles must be a list of paths")
            )
            files = []
        stages.append(
            Stage(
                number=number,
                title=title,
                effective_steps=effective_steps,
                depends_on=depends_on,
                steps=(),
                predicted_files=tuple(dict.fromkeys(files)),
                line=None,
            )
        )
    if not items:
        findings.append(
            Finding("S1", (), None, f"{path} is empty: a plan needs at least one stage")
        )
    return StageMap(tuple(stages), path, None, tuple(findings), from_markdown=False)


def _json_type(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), repr(value))


def _data_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return None


def _data_depends(value: object) -> tuple[tuple[int, ...], bool]:
    if isinstance(value, str):
        return _parse_depends(value)
    if isinstance(value, list):
        numbers = [_data_int(v) for v in value]
        known = tuple(dict.fromkeys(n for n in numbers if n is not None))
        return known, None not in numbers
    return (), value is None


# ---------------------------------------------------------------------------------------------
# Validation


def validate(stage_map: StageMap) -> list[Finding]:
    """Every failed check of SPEC §3 (S1–S7, S9), grouped by check in ``CHECKS`` order."""
    findings = list(stage_map.parse_findings)
    graph = stage_map._graph
    stages = stage_map.stages

    findings += _check_numbering(stages)
    if stage_map.dependencies_known:
        findings += _check_references(stages, graph)
        findings += _check_cycles(graph)
    for stage in stages:
        findings += _check_stage(stage, stage_map.from_markdown)
    if stage_map.dependencies_known:
        findings += _check_parallel_files(graph)
    findings.sort(key=lambda f: CHECKS.index(f.check))
    return findings


def _check_numbering(stages: tuple[Stage, ...]) -> list[Finding]:
    findings = []
    first_line: dict[int, int | None] = {}
    for stage in stages:
        if stage.number in first_line:
            findings.append(
                Finding(
                    "S2",
                    (stage.number,),
                    stage.line,
                    f"stage {stage.number} is listed twice"
                    + (f" (first at line {first_line[stage.number]})" if stage.line else "")
                    + "; stage numbers must be unique",
                )
            )
        else:
            first_line[stage.number] = stage.line
    count = len(first_line)
    missing = sorted(set(range(1, count + 1)) - set(first_line))
    for number, line in first_line.items():
        if not 1 <= number <= count:
            findings.append(
                Finding(
                    "S2",
                    (number,),
                    line,
                    f"stage {number} is out of sequence: {count} stage(s) must be numbered "
                    f"1..{count} (missing: {', '.join(map(str, missing))})",
                )
            )
    return findings


def _check_references(stages: tuple[Stage, ...], graph: _Graph) -> list[Finding]:
    findings = []
    for stage in stages:
        for dep in stage.depends_on:
            if dep == stage.number:
                message = f"stage {stage.number} depends on itself"
            elif dep not in graph.bit:
                message = (
                    f"stage {stage.number} depends on stage {dep}, which is not in the Stage Map"
                )
            else:
                continue
            findings.append(Finding("S3", (stage.number,), stage.line, message))
    return findings


def _check_cycles(graph: _Graph) -> list[Finding]:
    findings = []
    for component in graph.components:
        if len(component) < 2:
            continue
        members = set(component)
        start = min(members)
        cycle = _cycle_through(start, members, graph.edges)
        findings.append(
            Finding(
                "S4",
                tuple(sorted(members)),
                graph.by_number[start].line,
                f"stages {', '.join(map(str, sorted(members)))} form a depends-on cycle: "
                f"{' → '.join(map(str, cycle))} (each depends on the next); remove one edge",
            )
        )
    findings.sort(key=lambda f: f.stages)
    return findings


def _cycle_through(start: int, members: set[int], edges: dict[int, tuple[int, ...]]) -> list[int]:
    """A shortest depends-on path from ``start`` back to itself inside one component."""
    previous: dict[int, int] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for dep in edges[node]:
                if dep == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if dep in members and dep not in previous:
                    previous[dep] = node
                    following.append(dep)
        frontier = following
    return [start]


def _check_stage(stage: Stage, from_markdown: bool) -> list[Finding]:
    findings = []
    n = stage.number
    steps = stage.effective_steps
    if steps is not None and not 1 <= steps <= STAGE_STEP_CAP:
        findings.append(
            Finding(
                "S5",
                (n,),
                stage.line,
                f"stage {n} has {steps} effective steps; a stage holds 1 to {STAGE_STEP_CAP} "
                f"— split it" + ("" if steps else " (or drop the empty stage)"),
            )
        )
    if from_markdown and steps is not None:
        if stage.section_line is None:
            findings.append(
                Finding(
                    "S6",
                    (n,),
                    stage.line,
                    f"stage {n} has no `### Stage {n} — …` section listing its {steps} steps",
                )
            )
        elif len(stage.steps) != steps:
            findings.append(
                Finding(
                    "S6",
                    (n,),
                    stage.section_line,
                    f"stage {n} claims {steps} effective steps but its section lists "
                    f"{len(stage.steps)} numbered step(s)",
                )
            )
    if from_markdown:
        if stage.section_line is None:
            message = f"stage {n} has no `### Stage {n}` section, so no Stage Exit Contract"
        elif stage.contract_line is None:
            message = f"stage {n} has no `#### Stage Exit Contract` in its section"
        elif stage.files_line is None:
            message = (
                f"stage {n}'s Stage Exit Contract has no predicted-files line; add "
                f"`- Added/changed files (predicted): ...` (or `- 추가/변경된 파일 (예측): ...`)"
            )
        elif not stage.predicted_files:
            message = (
                f"stage {n}'s predicted-files line names no files; list them in backticks, "
                f"comma separated"
            )
        else:
            return findings
        line = stage.files_line or stage.contract_line or stage.section_line or stage.line
        findings.append(Finding("S7", (n,), line, message))
    elif not stage.predicted_files:
        findings.append(Finding("S7", (n,), None, f"stage {n} has no predictedFiles"))
    return findings


S9_PAIRS_SHOWN = 10
"""Most stage pairs one S9 finding lists; the rest are counted ("and N more")."""


def _check_parallel_files(graph: _Graph) -> list[Finding]:
    """S9, one finding per shared file: the pairs of its stages where neither reaches the
    other, counted exactly and listed up to S9_PAIRS_SHOWN. Bit masks keep it linear in the
    stages sharing a file (2000 stages sharing one file: ~2M pairs, a few ms, one finding)."""
    owners: dict[str, list[int]] = {}
    for number, stage in graph.by_number.items():
        for name in stage.predicted_files:
            owners.setdefault(name, []).append(number)
    number_at = {bit.bit_length() - 1: number for number, bit in graph.bit.items()}
    findings = []
    for name, numbers in owners.items():
        if len(numbers) < 2:
            continue
        ordered = sorted(numbers)
        later = 0  # owners after the current one in number order
        after: list[int] = []
        for number in reversed(ordered):
            after.append(later)
            later |= graph.bit[number]
        after.reverse()
        count = 0
        pairs: list[tuple[int, int]] = []
        for number, others in zip(ordered, after, strict=True):
            parallel = others & ~(graph.upstream[number] | graph.downstream[number])
            count += parallel.bit_count()
            while parallel and len(pairs) < S9_PAIRS_SHOWN:
                low = parallel & -parallel
                pairs.append((number, number_at[low.bit_length() - 1]))
                parallel ^= low
        if count:
            findings.append(_parallel_finding(graph, name, sorted(pairs), count))
    findings.sort(key=lambda f: (f.stages, f.message))
    return findings


def _parallel_finding(
    graph: _Graph, name: str, pairs: list[tuple[int, int]], count: int
) -> Finding:
    fix = "merge the shared work into one stage or add a depends-on between them"
    a, b = pairs[0]
    later = graph.by_number[b]
    line = later.files_line or later.line
    if count == 1:
        message = (
            f"stages {a} and {b} can run at the same time (neither depends on the other) but "
            f"both predict `{name}`; {fix}"
        )
        return Finding("S9", (a, b), line, message)
    shown = ", ".join(f"{x} and {y}" for x, y in pairs)
    more = f" (and {count - len(pairs)} more)" if count > len(pairs) else ""
    message = (
        f"{count} pairs of stages can run at the same time (neither depends on the other) but "
        f"all predict `{name}`: stages {shown}{more}; {fix}"
    )
    involved = tuple(sorted({n for pair in pairs for n in pair}))
    return Finding("S9", involved, line, message)
