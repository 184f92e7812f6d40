"""The Stage Map checks S1-S7 and S9 (docs/workflow.md), each failure naming its check and
stage."""

from __future__ import annotations

from .model import CHECKS, S9_PAIRS_SHOWN, STAGE_STEP_CAP, Finding, Graph, Stage, StageMap


def validate(stage_map: StageMap) -> list[Finding]:
    """Every failed Stage Map check (docs/workflow.md: S1–S7, S9), grouped by check in ``CHECKS``
    order."""
    findings = list(stage_map.parse_findings)
    graph = stage_map.graph
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


def _check_references(stages: tuple[Stage, ...], graph: Graph) -> list[Finding]:
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


def _check_cycles(graph: Graph) -> list[Finding]:
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


def _check_parallel_files(graph: Graph) -> list[Finding]:
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


def _parallel_finding(graph: Graph, name: str, pairs: list[tuple[int, int]], count: int) -> Finding:
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
