"""Reports against the task's records (docs/workflow.md): report data consistent with the claims,
starter data for the task's phase, and the clarification turn-around."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.shell import okstra
from ..core.userfiles import write_atomic
from ..core.values import Value
from ..logic.clarify import items_table, legacy_items, parse_clarification_items
from ..logic.reports.consistency import StageFacts, TaskFacts, task_problems, time_problems
from ..logic.reports.rules import (
    FINAL_VERIFICATION,
    IMPLEMENTATION,
    IMPLEMENTATION_PLANNING,
    VERDICTS,
    Problem,
    validate,
)
from ..logic.reports.starter import ask_blocker, decide, starter
from ..logic.workspace import run_paths, task_root
from ..records.claim import load_claims
from ..records.task import TaskState, require_task
from .context import Context

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..logic.nextstep import Step

_REPORT_NAME = re.compile(r"final-report-(?P<type>[a-z-]+)-(?P<seq>[0-9]{3})\.(?:md|data\.json)")


def task_facts(ctx: Context, key: TaskKey, data: Any = None) -> TaskFacts:
    """The task's Stage Map, each stage's claim, the approved plan's unresolved §5 rows and,
    for report ``data``, the scope decision recorded on its run and when it started, as the
    consistency rules read them."""
    from .snapshots import snapshot, stage_map_of

    state = require_task(ctx.repo, key)
    numbers: tuple[int, ...] = ()
    open_items: tuple[dict[str, str], ...] = ()
    plan = state.task.latest_plan
    if plan is not None:
        numbers = tuple(stage_map_of(ctx, state).numbers)
        parsed = parse_clarification_items(snapshot(ctx, state, plan).text)
        open_items = tuple(
            {"id": item.id, "status": item.status, "statement": item.statement}
            for item in parsed.items
            if item.id and item.status in ("open", "answered")
        )
    found_claims = load_claims(ctx.repo, key)
    stages = {
        number: StageFacts(found.claim.status, found.claim.report_path, found.claim.run_id)
        for number, found in found_claims.items()
    }
    decision, started = _run_facts(ctx, state, data)
    header = data.get("header") if isinstance(data, dict) else None
    stage = header.get("stage") if isinstance(header, dict) else None
    if isinstance(stage, int) and stage in found_claims:
        claim = found_claims[stage].claim
        if claim.run_id == f"implementation-{header.get('seq') if header else ''}":
            started = max(started or "", claim.started_at) or None
    return TaskFacts(str(key), numbers, stages, decision, open_items, started)


def _run_facts(
    ctx: Context, state: TaskState, data: Any
) -> tuple[dict[str, Any] | None, str | None]:
    """The incremental scope decision recorded on the report's own run and when that run
    started (None, None without such a run)."""
    from ..core.keys import TASK_TYPES
    from ..records.base import to_data
    from ..records.run import load_run

    header = data.get("header") if isinstance(data, dict) else None
    task_type = header.get("taskType") if isinstance(header, dict) else None
    seq = header.get("seq") if isinstance(header, dict) else None
    if task_type not in TASK_TYPES or not (isinstance(seq, str) and seq.isdigit()):
        return None, None
    record = load_run(ctx.repo, state, task_type, seq)
    if record is None:
        return None, None
    decision = record.incremental_decision
    return (to_data(decision) if decision is not None else None), record.started_at


def check_report(ctx: Context, key: TaskKey, data: Any) -> list[Problem]:
    """Every problem of ``data`` as report data of ``key``: the rules, then the task's records
    (its claims, the approved plan, when its run started, the clock)."""
    problems = validate(data)
    if isinstance(data, dict):
        facts = task_facts(ctx, key, data)
        problems += task_problems(data, facts)
        problems += time_problems(data, _now(), facts.run_started_at)
    return problems


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


class RecordsChecked(Value):
    """How ``report validate`` checked the report against its task's records."""

    key: str | None = None
    """The task whose records it was checked against (None: not checked)."""
    skipped: str | None = None
    """Why not: ``asked`` (``--no-task``), ``bad-key`` (header.taskKey is not a task key),
    ``no-repository``, or ``no-task`` (no task ``key`` in this repository)."""


def records_check(data: dict[str, Any]) -> tuple[list[Problem], RecordsChecked]:
    """``report validate``'s task checks: the report's task in the repository of the current
    folder, when there is one. Returns the problems and what was (not) checked."""
    from ..core.keys import parse_task_key
    from ..records.task import load_task
    from .context import open_context

    try:
        key = parse_task_key(str(data["header"]["taskKey"]))
    except (BadInput, KeyError, TypeError):
        return [], RecordsChecked(skipped="bad-key")
    try:
        ctx = open_context()
    except BadInput:
        return [], RecordsChecked(skipped="no-repository")
    if load_task(ctx.repo, key) is None:
        return [], RecordsChecked(str(key), "no-task")
    facts = task_facts(ctx, key, data)
    found = task_problems(data, facts) + time_problems(data, _now(), facts.run_started_at)
    return found, RecordsChecked(str(key))


def clock_check(data: dict[str, Any]) -> list[Problem]:
    """``report validate --no-task``'s one check beyond the rules: generatedAt is not ahead of
    this clock."""
    return time_problems(data, _now(), None)


def check_report_file(
    ctx: Context, key: TaskKey, path: str, task_type: str, stage: int | None = None
) -> None:
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
        named = (
            data.get("header", {}).get("stage") if isinstance(data.get("header"), dict) else None
        )
        if stage is not None and named is not None and named != stage:
            problems.append(
                Problem(
                    "/header/stage",
                    "report-file",
                    f"{named!r}: this is recorded as the report of stage {stage}",
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
    verdict: str | None = None,
) -> dict[str, Any]:
    """Report data for the task's phase (``task_type``, default its current phase, or
    final-verification with a ``verdict``) that passes every rule and the task's records once
    its ``Replace:`` prompts are written: its run seq, and what the records already know — the
    plan's Stage Map for a planning run; for an implementation report the stage it covers
    (``stage``), whether other stages are still open (then the task goes on implementing) and
    the approved plan's unresolved §5 rows; for a final verification the verified stages, their
    implementation reports and, with ``verdict``, that verdict everywhere the rules tie it.

    Refused, with the reason, where no such report can exist yet (a final verification with
    no done stage to verify)."""
    from .tasks import check_task_type

    state = require_task(ctx.repo, key)
    if task_type is None:
        task_type = FINAL_VERIFICATION if verdict else state.task.workflow.current_phase
    check_task_type(task_type)
    if verdict is not None and verdict not in VERDICTS:
        raise BadInput(f"--verdict {verdict!r}: one of {', '.join(VERDICTS)}")
    if verdict is not None and task_type != FINAL_VERIFICATION:
        raise BadInput(
            f"--verdict is for final-verification reports: a {task_type} report carries no "
            "verdict (its token is not-applicable)"
        )
    if stage is not None and task_type not in (FINAL_VERIFICATION, IMPLEMENTATION):
        raise BadInput(
            f"--stage is for implementation (a stage report) and final-verification reports, "
            f"not {task_type}"
        )
    facts = task_facts(ctx, key)
    if stage is not None and stage not in facts.stage_numbers:
        have = ", ".join(map(str, facts.stage_numbers)) or "none (no plan was submitted)"
        raise BadInput(f"--stage {stage}: the Stage Map of {key} has stages {have}")
    seq = run_seq(ctx, state, task_type)
    extra: dict[str, Any] = {}
    if task_type == IMPLEMENTATION_PLANNING and state.task.latest_plan is not None:
        extra["stage_map"] = _plan_stage_map(ctx, state)
    if task_type == IMPLEMENTATION:
        claim = facts.stages.get(stage) if stage is not None else None
        if claim is not None and claim.run_id and claim.status != "released":
            seq = claim.run_id.rsplit("-", 1)[-1]
        run = f"implementation-{seq}"
        mine = (
            {stage}
            if stage is not None
            else {n for n, c in facts.stages.items() if c.status == "started" and c.run_id == run}
        )
        extra["stage"] = stage
        extra["open_stages"] = [
            n
            for n in facts.stage_numbers
            if n not in mine and (n not in facts.stages or facts.stages[n].status != "done")
        ]
        extra["open_items"] = [dict(item) for item in facts.open_plan_items]
    all_done = bool(facts.stage_numbers) and all(
        n in facts.stages and facts.stages[n].status == "done" for n in facts.stage_numbers
    )
    if task_type == FINAL_VERIFICATION:
        stages = _verified_stages(key, facts, stage)
        extra["scope"] = "single-stage" if stage is not None else "whole-task"
        extra["stages"] = stages
        extra["source_reports"] = [
            {"stage": n, "path": facts.stages[n].report_path}
            for n in stages
            if n in facts.stages and facts.stages[n].report_path
        ]
    from .remoteview import home_remote

    data = starter(str(key), task_type, seq, language, remote=home_remote(ctx.repo), **extra)
    if verdict is not None:
        decide(data, verdict, all_done)
        if verdict != "accepted":
            ask_blocker(data)
    return data


def _verified_stages(key: TaskKey, facts: TaskFacts, stage: int | None) -> list[int]:
    """The stages a final verification of ``key`` verifies (``stage`` alone, or every Stage Map
    stage); refused when they are not all done — no report of that verification could pass."""
    numbers = facts.stage_numbers
    status = {n: facts.stages[n].status if n in facts.stages else "unclaimed" for n in numbers}
    done = [n for n in numbers if status[n] == "done"]
    hint = okstra("task", "status", key)
    if not done:
        raise Refused(
            f"no stage of {key} is done, so there is nothing for a final-verification to "
            f"verify and no valid report of one to start; finish a stage first (stage done), "
            f"then run report init again",
            hint=hint,
        )
    if stage is not None and status[stage] != "done":
        raise Refused(
            f"stage {stage} of {key} is {status[stage]}: a single-stage final-verification "
            f"verifies a done stage (done: {', '.join(map(str, done))})",
            hint=okstra("report", "init", key, "--type", FINAL_VERIFICATION, "--stage", done[0]),
        )
    if stage is None and len(done) < len(numbers):
        waiting = ", ".join(f"{n} ({status[n]})" for n in numbers if status[n] != "done")
        raise Refused(
            f"a whole-task final-verification of {key} covers every stage, and stage(s) "
            f"{waiting} are not done; finish them, or verify one done stage with --stage N",
            hint=okstra("report", "init", key, "--type", FINAL_VERIFICATION, "--stage", done[0]),
        )
    return [stage] if stage is not None else list(numbers)


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
    verdict: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Write :func:`starter_for_task` data to ``out`` (default: beside the run's report; missing
    folders are made); an existing file is kept unless ``force``."""
    data = starter_for_task(ctx, key, task_type, stage, language, verdict)
    header = data["header"]
    path = (
        Path(out)
        if out
        else default_data_path(ctx, key, header["taskType"], header["seq"], header.get("stage"))
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(
            f"--out {path}: cannot make its folder {path.parent}: {exc.strerror}"
        ) from exc
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


def default_data_path(
    ctx: Context, key: TaskKey, task_type: str, seq: str, stage: int | None = None
) -> Path:
    """``…/runs/<type>/reports/final-report-<type>-<seq>.data.json`` in the worktree this runs
    in, beside the report it renders to; a stage report's beside the stage's report,
    ``stage-<N>-report-implementation-<seq>.md``, in this clone's main worktree (where ``task
    status`` names the stage reports, whichever worktree this runs in)."""
    if ctx.workdir is None:
        raise BadInput(f"{ctx.repo.git_dir} is a bare repository: give the output with --out")
    report = report_of(key, task_type, seq, stage)
    # A run's report stays with the run's other files, in the worktree it runs in (a final
    # verification's in the task worktree, where run start wrote its manifest).
    root = Path(ctx.clone_dir) if report_is_stages(task_type, stage) else ctx.workdir
    return root / (report.removesuffix(".md") + ".data.json")


def report_is_stages(task_type: str, stage: int | None) -> bool:
    """Whether report data of ``task_type`` and ``stage`` is one stage's report (``stage
    done --report``) rather than its run's."""
    return stage is not None and task_type == IMPLEMENTATION


def report_of(key: TaskKey, task_type: str, seq: str, stage: int | None = None) -> str:
    """The workspace-relative report (``.md``) that report data of this run (and stage) is
    the data of, wherever the data itself is written."""
    if report_is_stages(task_type, stage):
        from ..logic.workspace import stage_report_path

        assert stage is not None
        return stage_report_path(key, seq, stage)
    return run_paths(key, task_type, seq)["report"]


def report_step(
    ctx: Context | None, key_text: str, data: str, header: dict[str, Any] | None = None
) -> tuple[str | None, Step | None]:
    """What follows a report data file ``data`` of ``key_text`` (``report init``, ``report
    validate``): the task's next step's line that records it (``nextstep.taking``), and the
    step itself (None: no task here to ask). ``header`` (the data's) names the run, and stage,
    it is the report of: a step that records that report records ``data`` instead, wherever
    ``data`` was written (``report init --out``)."""
    from ..core.errors import OkstraError
    from ..logic.nextstep import taking
    from .context import open_context
    from .status import next_for

    try:
        ctx = ctx or open_context()
        key = ctx.key(key_text)
        step = next_for(ctx, key)
    except OkstraError:
        return None, None
    report = ""
    if header is not None:
        task_type, seq, stage = header.get("taskType"), header.get("seq"), header.get("stage")
        if isinstance(task_type, str) and isinstance(seq, str):
            report = report_of(key, task_type, seq, stage if isinstance(stage, int) else None)
    return taking(step, os.path.abspath(data), report), step


# ---------------------------------------------------------------------------------------------
# The clarification turn-around (docs/workflow.md)


class Resumed(Value):
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
    relpath, task_type = _latest_report(state, workdir)
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
    legacy = legacy_items(report.text) if not parsed.schema_present else []
    if legacy:
        # Seed 002's legacy carry-in: the 4.5.9 / 5.1 / 5.2 rows as one §5 table.
        parts.append(
            "\n---\n\n<!-- okstra: the legacy 4.5.9 / 5.1 / 5.2 rows of this report as §5 rows "
            "(A → material, Q and OQ → decision; the legacy id kept in the statement) -->\n\n"
            + items_table(legacy)
        )
    target = root / "instruction-set" / "clarification-response.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, "".join(parts).encode("utf-8"), "clarification response")
    return Resumed(
        report=relpath,
        staged=target.relative_to(workdir).as_posix(),
        sidecars=[s.relative_to(workdir).as_posix() for s in sidecars],
        task_type=task_type,
        open_items=sum(item.status in ("open", "answered") for item in parsed.items or legacy),
        command=okstra("run", "start", str(key), "--type", task_type),
    )


def _latest_report(state: TaskState, workdir: Path) -> tuple[str, str]:
    """The latest report (Markdown, workspace-relative) and the phase it reports on: report
    data's Markdown, rendered beside it in ``workdir``, when the run recorded its data."""
    task = state.task
    relpath = task.latest_report_path
    if relpath is None:
        raise Refused(
            f"task {state.key} has no finished run with a report yet (a run records its report "
            f"with `git okstra run finish … --report PATH`)"
        )
    if relpath.endswith(".json"):
        markdown = re.sub(r"(\.data)?\.json$", ".md", relpath)
        if not (workdir / markdown).is_file():
            # Absolute: the command runs from any folder (relpath is the work tree's).
            render = okstra("report", "render", workdir / relpath, "--md", workdir / markdown)
            raise Refused(
                f"the latest report of {state.key} is report data ({relpath}); render it to "
                f"{markdown} first: {render}",
                hint=render,
            )
        relpath = markdown
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
