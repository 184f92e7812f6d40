"""Reports against the task's records (docs/workflow.md): report data consistent with the claims,
starter data for the task's phase, and the clarification turn-around."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.shell import okstra
from ..core.userfiles import write_atomic
from ..logic.clarify import parse_clarification_items
from ..logic.reports.consistency import StageFacts, TaskFacts, task_problems
from ..logic.reports.rules import FINAL_VERIFICATION, IMPLEMENTATION_PLANNING, Problem, validate
from ..logic.reports.starter import starter
from ..logic.workspace import run_paths, task_root
from ..records.claim import load_claims
from ..records.task import TaskState, require_task
from .context import Context

_REPORT_NAME = re.compile(r"final-report-(?P<type>[a-z-]+)-(?P<seq>[0-9]{3})\.(?:md|data\.json)")


def task_facts(ctx: Context, key: TaskKey, data: Any = None) -> TaskFacts:
    """The task's Stage Map, each stage's claim and, for report ``data``, the scope decision
    recorded on its run, as the consistency rules read them."""
    from .snapshots import stage_map_of

    state = require_task(ctx.repo, key)
    numbers: tuple[int, ...] = ()
    if state.task.latest_plan is not None:
        numbers = tuple(stage_map_of(ctx, state).numbers)
    stages = {
        number: StageFacts(found.claim.status, found.claim.report_path)
        for number, found in load_claims(ctx.repo, key).items()
    }
    return TaskFacts(str(key), numbers, stages, _run_decision(ctx, state, data))


def _run_decision(ctx: Context, state: TaskState, data: Any) -> dict[str, Any] | None:
    from ..core.keys import TASK_TYPES
    from ..records.base import to_data
    from ..records.run import load_run

    header = data.get("header") if isinstance(data, dict) else None
    task_type = header.get("taskType") if isinstance(header, dict) else None
    seq = header.get("seq") if isinstance(header, dict) else None
    if task_type not in TASK_TYPES or not (isinstance(seq, str) and seq.isdigit()):
        return None
    record = load_run(ctx.repo, state, task_type, seq)
    if record is None or record.incremental_decision is None:
        return None
    return to_data(record.incremental_decision)


def check_report(ctx: Context, key: TaskKey, data: Any) -> list[Problem]:
    """Every problem of ``data`` as report data of ``key``: the rules, then the task's records."""
    problems = validate(data)
    if isinstance(data, dict):
        problems += task_problems(data, task_facts(ctx, key, data))
    return problems


def records_check(data: dict[str, Any]) -> tuple[list[Problem], str]:
    """``report validate``'s task checks: the report's task in the repository of the current
    folder, when there is one. Returns the problems and what was (not) checked."""
    from ..core.keys import parse_task_key
    from ..records.task import load_task
    from .context import open_context

    try:
        key = parse_task_key(str(data["header"]["taskKey"]))
    except (BadInput, KeyError, TypeError):
        return [], "task records not checked: header.taskKey is not a task key"
    try:
        ctx = open_context()
    except BadInput:
        return [], "task records not checked: not in a git repository"
    if load_task(ctx.repo, key) is None:
        return [], f"task records not checked: no task {key} in this repository"
    facts = task_facts(ctx, key, data)
    return task_problems(data, facts), f"checked against the records of {key}"


def check_report_file(ctx: Context, key: TaskKey, path: str, task_type: str) -> None:
    """Refuse (exit 2, nothing stored) a report a command is about to record for a run of
    ``task_type``, naming every problem.

    Report data (``*.json``) must pass every rule, match the task's records and be a report of
    that phase. A Markdown report is the human artifact: okstra reads back only its §5 (the
    approval gate, ``clarify status`` and ``clarify resume``), so it must be UTF-8 text whose
    §5, if it has one, is readable.
    """
    from ..logic.planfile import read_plan_file

    if path.endswith(".json"):
        from .reportfiles import read_data

        data = read_data(path)[1]
        problems = check_report(ctx, key, data)
        found = (
            data.get("header", {}).get("taskType") if isinstance(data.get("header"), dict) else None
        )
        if found is not None and found != task_type:
            problems.append(
                Problem(
                    "/header/taskType",
                    "report-file",
                    f"{found!r}: this is recorded as the report of a {task_type} run",
                )
            )
        if problems:
            raise BadInput(
                f"report {path} is not valid report data of a {task_type} run of {key}:\n"
                + "\n".join(f"  - {p.line()}" for p in problems)
            )
        return
    parsed = parse_clarification_items(read_plan_file(path, "report").text)
    if parsed.malformed:
        raise BadInput(
            f"report {path}: §5 has {len(parsed.malformed)} line(s) okstra cannot read:\n"
            + "\n".join(f"  - line {row.line}: {row.reason}" for row in parsed.malformed)
        )


# ---------------------------------------------------------------------------------------------
# Starter data


def starter_for_task(
    ctx: Context,
    key: TaskKey,
    task_type: str | None = None,
    stage: int | None = None,
    language: str = "en",
) -> dict[str, Any]:
    """Valid report data for the task's phase (``task_type``, default its current phase): its
    run seq, and what the records already know — the plan's Stage Map for a planning run, the
    verified stages and their implementation reports for a final verification."""
    from .tasks import check_task_type

    state = require_task(ctx.repo, key)
    task_type = task_type or state.task.workflow.current_phase
    check_task_type(task_type)
    if stage is not None and task_type != FINAL_VERIFICATION:
        raise BadInput(f"--stage is for final-verification reports, not {task_type}")
    seq = run_seq(ctx, state, task_type)
    extra: dict[str, Any] = {}
    if task_type == IMPLEMENTATION_PLANNING and state.task.latest_plan is not None:
        extra["stage_map"] = _plan_stage_map(ctx, state)
    if task_type == FINAL_VERIFICATION:
        facts = task_facts(ctx, key)
        if stage is not None and facts.stage_numbers and stage not in facts.stage_numbers:
            raise BadInput(
                f"--stage {stage}: the Stage Map of {key} has stages "
                f"{', '.join(map(str, facts.stage_numbers))}"
            )
        stages = [stage] if stage is not None else list(facts.stage_numbers)
        extra["scope"] = "single-stage" if stage is not None else "whole-task"
        extra["stages"] = stages
        extra["source_reports"] = [
            {"stage": n, "path": facts.stages[n].report_path}
            for n in stages
            if n in facts.stages and facts.stages[n].report_path
        ]
    return starter(str(key), task_type, seq, language, **extra)


def run_seq(ctx: Context, state: TaskState, task_type: str) -> str:
    """The run a report of ``task_type`` belongs to: the one running now, else the next."""
    from ..records.run import next_seq

    latest = state.task.latest_run
    if latest is not None and latest.task_type == task_type and latest.status == "running":
        return latest.seq
    return next_seq(ctx.repo, state.head, task_type)


def _plan_stage_map(ctx: Context, state: TaskState) -> list[dict[str, Any]]:
    from .snapshots import stage_map_of

    stage_map = stage_map_of(ctx, state)
    rows = stage_map.to_data()
    for row, stage in zip(rows, stage_map.stages, strict=True):
        row["steps"] = list(stage.steps)
    return rows


def init_report(
    ctx: Context,
    key: TaskKey,
    task_type: str | None,
    stage: int | None,
    language: str,
    out: str | None,
    force: bool,
) -> tuple[Path, dict[str, Any]]:
    """Write :func:`starter_for_task` data to ``out`` (default: beside the run's report);
    an existing file is kept unless ``force``."""
    data = starter_for_task(ctx, key, task_type, stage, language)
    header = data["header"]
    path = Path(out) if out else default_data_path(ctx, key, header["taskType"], header["seq"])
    if not out:
        path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    try:
        write_atomic(path, text.encode("utf-8"), "report data", new=not force)
    except BadInput as exc:
        if path.exists() and not force:
            raise Refused(
                f"report data {path} already exists; keep editing it, or start over with --force",
                hint=okstra("report", "validate", path),
            ) from exc
        raise
    return path, data


def default_data_path(ctx: Context, key: TaskKey, task_type: str, seq: str) -> Path:
    """``…/runs/<type>/reports/final-report-<type>-<seq>.data.json`` in the work tree, beside
    the report it renders to."""
    if ctx.workdir is None:
        raise BadInput(f"{ctx.repo.git_dir} is a bare repository: give the output with --out")
    report = run_paths(key, task_type, seq)["report"]
    return ctx.workdir / (report.removesuffix(".md") + ".data.json")


# ---------------------------------------------------------------------------------------------
# The clarification turn-around (docs/workflow.md)


@dataclass(frozen=True)
class Resumed:
    """What ``clarify resume`` staged."""

    report: str
    """The report the user edited (workspace-relative)."""
    staged: str
    """``…/instruction-set/clarification-response.md`` (workspace-relative)."""
    sidecars: list[str]
    """The ``user-response-*.md`` files appended, in order."""
    task_type: str
    """The phase to rerun."""
    open_items: int
    """§5 rows still open or answered (the next run reconciles them)."""
    command: str
    """The command that reruns the phase."""


def resume_clarification(ctx: Context, key: TaskKey, editor: str | None) -> Resumed:
    """Open the task's latest report in ``editor`` (None: do not edit), then stage it with the
    run's user-response sidecars appended as the next run's clarification response."""
    from ..logic.planfile import read_plan_file

    workdir = ctx.workdir
    if workdir is None:
        raise BadInput(f"{ctx.repo.git_dir} is a bare repository: reports live in a work tree")
    state = require_task(ctx.repo, key)
    relpath, task_type = _latest_report(state)
    path = workdir / relpath
    if not path.is_file():
        raise Refused(
            f"the latest report of {key} is {relpath}, which is not in this work tree "
            f"({workdir}); run the command where the report was written"
        )
    if editor is not None:
        _edit(editor, path)
    report = read_plan_file(path, "report")
    parsed = parse_clarification_items(report.text)
    if parsed.malformed:
        lines = [f"  - {relpath}:{row.line}: {row.reason}" for row in parsed.malformed]
        raise Refused(
            f"§5 of {relpath} has {len(parsed.malformed)} line(s) okstra cannot read; nothing "
            "was staged — fix them and run the command again:\n" + "\n".join(lines)
        )
    root = workdir / task_root(key)
    folder = root / "runs" / task_type / "user-responses"
    sidecars = sorted(folder.glob("user-response-*.md")) if folder.is_dir() else []
    parts = [report.text.rstrip("\n") + "\n"]
    for sidecar in sidecars:
        shown = sidecar.relative_to(workdir).as_posix()
        parts.append(
            f"\n---\n\n<!-- okstra: user response appended from {shown} -->\n\n"
            + read_plan_file(sidecar, "user response").text.rstrip("\n")
            + "\n"
        )
    target = root / "instruction-set" / "clarification-response.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, "".join(parts).encode("utf-8"), "clarification response")
    return Resumed(
        report=relpath,
        staged=target.relative_to(workdir).as_posix(),
        sidecars=[s.relative_to(workdir).as_posix() for s in sidecars],
        task_type=task_type,
        open_items=sum(item.status in ("open", "answered") for item in parsed.items),
        command=okstra("run", "start", str(key), "--type", task_type),
    )


def _latest_report(state: TaskState) -> tuple[str, str]:
    """The latest report (Markdown, workspace-relative) and the phase it reports on."""
    task = state.task
    relpath = task.latest_report_path
    if relpath is None:
        raise Refused(
            f"task {state.key} has no finished run with a report yet (a run records its report "
            f"with `git okstra run finish … --report PATH`)"
        )
    if relpath.endswith(".json"):
        markdown = re.sub(r"(\.data)?\.json$", ".md", relpath)
        raise Refused(
            f"the latest report of {state.key} is report data ({relpath}); render it to "
            f"{markdown} first: " + okstra("report", "render", relpath, "--md", markdown)
        )
    named = _REPORT_NAME.search(relpath)
    if named is not None:
        return relpath, named.group("type")
    latest = task.latest_run
    return relpath, latest.task_type if latest is not None else task.workflow.current_phase


def _edit(editor: str, path: Path) -> None:
    try:
        argv = shlex.split(editor)
    except ValueError as exc:
        raise BadInput(f"$EDITOR {editor!r} cannot be split into a command: {exc}") from exc
    if not argv:
        raise BadInput("$EDITOR is empty; set it (e.g. export EDITOR=vi) or pass --no-edit")
    try:
        done = subprocess.run([*argv, str(path)], check=False)
    except OSError as exc:
        raise BadInput(f"$EDITOR {argv[0]!r} cannot be started: {exc.strerror}") from exc
    if done.returncode != 0:
        raise Refused(
            f"the editor exited with status {done.returncode}; nothing was staged "
            f"({path} keeps whatever the editor saved)"
        )


def editor_from_environment() -> str:
    """``$EDITOR``, which ``clarify resume`` opens the report in."""
    editor = os.environ.get("EDITOR", "").strip()
    if not editor:
        raise BadInput(
            "$EDITOR is not set; set it (e.g. export EDITOR=vi) or pass --no-edit to stage the "
            "report as it is"
        )
    return editor
