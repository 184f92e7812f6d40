"""The Stage Map model: stages, the findings of its checks, and its depends-on graph."""

from __future__ import annotations

from functools import cached_property

from ...core.values import Value, remember

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

STAGE_STEP_CAP = 6
"""Most effective steps one stage may have (seed 000: the ≤6 stage cap)."""

CHECKS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S9")
"""Validation checks in report order (S8 is not part of okstra-git)."""

CANONICAL_HEADER = "| Stage | Title | Effective steps | Depends-on |"


class Finding(Value):
    """One failed check, naming the stage(s) and, for Markdown plans, the line."""

    check: str
    """The check id: ``S1`` … ``S7`` or ``S9``."""
    stages: tuple[int, ...]
    """The stage numbers involved (a pair for S9, the cycle for S4); empty when none applies."""
    line: int | None
    """1-based line in the plan; None for report data or when no line applies."""
    message: str
    """One sentence saying what is wrong and how to fix it."""

    def render(self, path: str) -> str:
        """``path:line: S5: message`` — the form the CLI prints."""
        where = path if self.line is None else f"{path}:{self.line}"
        return f"{where}: {self.check}: {self.message}"


class Stage(Value):
    """One row of the Stage Map, joined with its ``### Stage N`` section."""

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
    section_line: int | None = None
    """Line of the ``### Stage N`` heading; None when the plan has no such section."""
    contract_line: int | None = None
    """Line of the ``#### Stage Exit Contract`` heading inside that section, if any."""
    files_line: int | None = None
    """Line of the predicted-files label inside the contract, if any."""


class StageMap(Value):
    """A plan's stages plus what went wrong while reading them."""

    _memo = ("_graph_cache",)

    stages: tuple[Stage, ...]
    """Stages in table (or list) order; a duplicated number appears once per row."""
    path: str
    """Where the map came from, for messages: the plan file or the data field."""
    line: int | None = None
    """Line of the ``Stage Map`` heading; None for report data or when it is absent."""
    parse_findings: tuple[Finding, ...] = ()
    """Problems met while parsing (S1 unreadable parts, S2 stray or repeated sections)."""
    from_markdown: bool = True
    """Whether stage sections were read; report data has no step lists, so S6 is skipped."""
    dependencies_known: bool = True
    """False when the table has no Depends-on column; then S3, S4 and S9 are skipped."""

    def stage(self, number: int) -> Stage | None:
        """The first stage with ``number``, or None."""
        return self.graph.by_number.get(number)

    @property
    def numbers(self) -> list[int]:
        """Distinct stage numbers in table order."""
        return list(self.graph.by_number)

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
    def graph(self) -> Graph:
        try:
            return self._graph_cache  # type: ignore[attr-defined]  # a slot, not a field
        except AttributeError:
            return remember(self, "_graph_cache", Graph(self.stages))


def reaches(stage_map: StageMap, a: int, b: int) -> bool:
    """Whether stage ``b`` depends on stage ``a`` through one or more depends-on edges."""
    return stage_map.graph.reaches(a, b)


def downstream_closure(stage_map: StageMap, stages: Iterable[int]) -> set[int]:
    """``stages`` plus every stage that depends on one of them, directly or transitively.

    Numbers not in the map are left out, so an unknown number can never leak into a scope;
    callers that must refuse unknown numbers check ``stage_map.stage(n)`` first.
    """
    graph = stage_map.graph
    start = {n for n in stages if n in graph.bit}
    mask = 0
    for number in start:
        mask |= graph.bit[number]
    return start | {n for n, up in graph.upstream.items() if up & mask}


# ---------------------------------------------------------------------------------------------
# Report data


# ---------------------------------------------------------------------------------------------
# Validation


S9_PAIRS_SHOWN = 10
"""Most stage pairs one S9 finding lists; the rest are counted ("and N more")."""


class Graph:
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
