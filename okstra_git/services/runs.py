"""Runs: one execution of a phase for a task, numbered per task type (docs/workflow.md)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.strict import parsed, run_seq
from ..core.userfiles import read_json_object, workspace_relative
from ..logic.phases import (
    FINAL_VERIFICATION,
    RELEASE_HANDOFF,
    RUN_END_STATUSES,
    next_phase_after,
    waits_for_approval,
)
from ..logic.workspace import run_paths
from ..records.base import to_data
from ..records.run import (
    Convergence,
    Critic,
    RunOptions,
    RunRecord,
    RunSetup,
    load_run,
    next_seq,
    run_record_data,
)
from ..records.task import RunRef, Task, TaskState, now_iso, require_task, task_ref, write_event
from .context import Context
from .published import through_remote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def open_run(
    task: Task,
    key: TaskKey,
    task_type: str,
    seq: str,
    started_by: str,
    base_commit: str | None = None,
    convergence: Convergence | None = None,
    clone: str | None = None,
    setup: RunSetup | None = None,
) -> tuple[RunRecord, dict[str, bytes | None]]:
    """Move ``task``'s workflow to a running ``task_type`` run and give the run record with its
    tree file. Pure bookkeeping: the caller lands it in a task event (``start_run``, or the
    claim transaction that allocates an implementation run with its claims)."""
    record = RunRecord(
        task_key=task.task_key,
        task_type=task_type,
        seq=seq,
        status="running",
        started_at=now_iso(),
        started_by=started_by,
        paths=run_paths(key, task_type, seq),
        base_commit=base_commit,
        convergence=convergence,
        clone=clone,
        setup=setup,
    )
    flow = task.workflow
    flow.current_phase = task_type
    flow.current_phase_state = "running"
    flow.phase_states[task_type] = "running"
    task.latest_run = RunRef(task_type=task_type, seq=seq, status="running")
    path = f"runs/{task_type}/{seq}.json"
    return record, {path: run_record_data(record, f"{task_ref(key)}:{path}")}


def start_run(
    ctx: Context,
    key: TaskKey,
    task_type: str,
    critic: str | None = None,
    base: str | None = None,
    stage: int | None = None,
    workers: str | None = None,
    models: Sequence[str] = (),
    options: Sequence[str] = (),
) -> tuple[TaskState, RunRecord]:
    """Allocate the next seq for ``task_type``, record the run atomically, and write its
    manifest and state file in the workspace.

    ``critic`` (``PROVIDER[:MODEL]``) opts the run into a critic pass, kept as its
    ``convergence.critic``; ``base`` (default HEAD, when there is one) is the commit the run
    analyses, kept as ``baseCommit`` so a later run can tell whether the code moved
    (docs/workflow.md, Incremental re-verification). ``workers``, ``models`` (``ROLE=MODEL``)
    and ``options`` (``NAME=VALUE``) are the rest of its set-up (``logic/runsetup.py``), kept
    in the run record and the manifest with ``base`` and ``stage``.

    Phase routing (docs/workflow.md, Phases and runs): ``implementation`` only from an approved
    plan; ``final-verification`` only when the verification gate is met for its scope
    (whole-task, or ``stage``), refused with the gate's own texts (``verify.GateRefused``);
    ``release-handoff`` only with an accepted whole-task verdict on the task's HEAD.
    """
    state, record = _start(ctx, key, task_type, critic, base, stage, workers, models, options)
    write_run_files(ctx, state, record)
    return state, record


def run_setup_of(
    task_type: str,
    base: str | None,
    stage: int | None,
    workers: str | None,
    models: Sequence[str],
    options: Sequence[str],
) -> RunSetup:
    """The run's set-up from ``run start``'s flags, or BadInput naming the flag."""
    from ..logic.runsetup import run_setup  # run start's: a claim or a done does not load it

    if stage is not None and task_type != FINAL_VERIFICATION:
        raise BadInput(f"--stage picks what a final-verification run verifies, not {task_type}")
    parsed_setup = run_setup(task_type, workers, models, options)
    opts = parsed_setup["options"]
    return RunSetup(
        models=parsed_setup["models"],
        options=RunOptions(
            clarification=opts["clarification"],
            related_tasks=opts["relatedTasks"] or None,
            directive=opts["directive"],
            pr_template=opts.get("prTemplate"),
        ),
        workers=parsed_setup["workers"],
        base_ref=base,
        verification_scope=(
            None
            if task_type != FINAL_VERIFICATION
            else "whole-task"
            if stage is None
            else "single-stage"
        ),
        stage=stage,
    )


def _start(
    ctx: Context,
    key: TaskKey,
    task_type: str,
    critic: str | None,
    base: str | None,
    stage: int | None,
    workers: str | None,
    models: Sequence[str],
    options: Sequence[str],
) -> tuple[TaskState, RunRecord]:
    """The start event alone (no workspace file): what a shared start retries."""
    from ..logic.critic import parse_critic
    from .tasks import check_task_type

    check_task_type(task_type)
    setup = run_setup_of(task_type, base, stage, workers, models, options)
    convergence = None
    if critic is not None:
        convergence = Convergence(Critic(**parse_critic(critic, task_type)))
    base_commit = _base_commit(ctx, base)
    require_task(ctx.repo, key)
    if task_type == "implementation":
        from .plans import ensure_approved  # only from an approved plan (docs/workflow.md)

        ensure_approved(ctx, key)
    elif task_type == FINAL_VERIFICATION:
        from .verify import resolve_target

        resolve_target(ctx, key, stage)
    elif task_type == RELEASE_HANDOFF:
        _require_accepted_head(ctx, key)
    who = ctx.repo.identity()
    from .identity import ensure_clone_id

    clone = ensure_clone_id(ctx.repo)
    records: dict[str, RunRecord] = {}

    def change(task: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        assert task is not None and head is not None
        seq = next_seq(ctx.repo, head, task_type)
        records["run"], files = open_run(
            task, key, task_type, seq, who, base_commit, convergence, clone, setup
        )
        return task, files

    state = write_event(ctx.repo, key, change, f"run start {task_type}")
    return state, records["run"]


def written_at_start(ctx: Context, record: RunRecord) -> dict[str, str]:
    """The workspace paths ``run start`` wrote for ``record``, by kind (none in a bare
    repository, which has no workspace)."""
    if ctx.workdir is None:
        return {}
    from ..records.runfiles import WRITTEN_AT_START

    return {kind: record.paths[kind] for kind in WRITTEN_AT_START}


def write_run_files(ctx: Context, state: TaskState, record: RunRecord) -> None:
    """Write the run's manifest and state file (``records/runfiles.py``) and make its folders
    in this work tree (none in a bare repository)."""
    if ctx.workdir is None:
        return
    from ..records.runfiles import store_manifest

    make_workspace(ctx, record.paths)
    store_manifest(ctx.workdir, state.head, record)
    write_run_state(ctx, record)


def write_run_state(ctx: Context, record: RunRecord) -> None:
    """The run's state file (``state/team-state-<type>-<seq>.json``): where the run stands."""
    if ctx.workdir is None:
        return
    from ..records.runfiles import store_run_state

    store_run_state(ctx.workdir, record)


def _require_accepted_head(ctx: Context, key: TaskKey) -> None:
    """Refuse unless an accepted whole-task verdict opens the gate for the task's HEAD (the
    task worktree's branch), judged as the pre-push hook judges it."""
    from ..gate.judge import judge_head
    from .layout import task_branch

    branch = task_branch(key)
    verify = _okstra_here(ctx, "run", "start", key, "--type", FINAL_VERIFICATION)
    head = ctx.repo.read_ref(f"refs/heads/{branch}")
    if head is None:
        raise Refused(
            f"{RELEASE_HANDOFF} of {key} needs an accepted whole-task verdict on the task's "
            f"HEAD, and {key} has no task branch ({branch}) yet; implement and verify it first: "
            f"{verify}",
            hint=verify,
        )
    finding = judge_head(ctx.repo, head, str(key))
    if finding.opening is None:
        found = "; ".join(
            f"{r.verdict.verdict} {r.verdict.scope} verdict {r.why}" for r in finding.rejected
        )
        raise Refused(
            f"{RELEASE_HANDOFF} of {key} needs an accepted whole-task verdict on the task's "
            f"HEAD {head[:12]} ({branch}); found: {found or 'no verdict'}. Verify that HEAD "
            f"first: {verify}",
            hint=verify,
        )


def _base_commit(ctx: Context, base: str | None) -> str | None:
    if base is not None:
        return ctx.repo.resolve_commit(base)
    try:
        return ctx.repo.resolve_commit("HEAD")
    except BadInput:  # an unborn branch or a bare repository: no base to record
        return None


def make_workspace(ctx: Context, paths: dict[str, str]) -> None:
    """The run's `.okstra/` folders in this work tree (none in a bare repository)."""
    if ctx.workdir is None:
        return
    root = str(ctx.workdir)
    folders = {os.path.dirname(path) for path in paths.values()}  # "x/" names the folder x
    for folder in sorted(folders):
        # Every run of the type shares them: after the first, one failed mkdir each.
        try:
            os.mkdir(os.path.join(root, folder))
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(os.path.join(root, folder), exist_ok=True)


def _missing_report(ctx: Context, key: TaskKey, task_type: str, report: str) -> BadInput:
    """``run finish --report X`` where nothing is at X yet (often the path the next step named):
    how to write it — render the report data beside it if there is some, else start the data
    there. Each command runs from any folder (``git -C <clone>``, the files absolute: relative
    to the folder this ran in, git -C DIR's, not the user's)."""
    from ..logic.nextstep import line, okstra_argv

    where = ctx.clone_dir
    absolute = os.path.abspath(report)
    if absolute.endswith(".md"):
        data: str | None = absolute[: -len(".md")] + ".data.json"
    else:
        data = absolute if absolute.endswith(".json") else None
    if data is not None and data != absolute and os.path.isfile(data):
        render = line(okstra_argv("report", "render", data), where)
        return BadInput(
            f"report {report}: no such file; its report data is beside it: write the report "
            f"from it with: {render} (or finish with --report {data} itself)",
            hint=render,
        )
    out = ("--out", data) if data is not None else ()
    init = line(okstra_argv("report", "init", key, "--type", task_type, *out), where)
    if data is None:
        return BadInput(
            f"report {report}: no such file; start the run's report data with: {init}, write "
            "its 'Replace:' prompts, check it with the report validate it prints, then finish "
            "with --report and the data.json it wrote",
            hint=init,
        )
    check = line(okstra_argv("report", "validate", data), where)
    then = (
        f", or write {report} from it with: {line(okstra_argv('report', 'render', data), where)}"
        if data != absolute
        else ""
    )
    return BadInput(
        f"report {report}: no such file; start the run's report data with: {init}, write its "
        f"'Replace:' prompts, check it with: {check}, then finish with --report {data}{then}",
        hint=init,
    )


def finish_run(
    ctx: Context,
    key: TaskKey,
    task_type: str,
    seq: str,
    status: str,
    report: str | None,
    data: str | None = None,
) -> tuple[TaskState, RunRecord]:
    """Record how a run ended. ``data`` (the run's report data) is checked against the run and
    kept in the task tree beside the run record, where the next run of the type finds it."""
    from .tasks import check_task_type  # with the task listing: not loaded by a claim

    check_task_type(task_type)
    if status not in RUN_END_STATUSES:
        raise BadInput(f"--status {status!r}: one of {', '.join(RUN_END_STATUSES)}")
    parsed(run_seq, seq, "--seq")
    if status == "completed" and report is None:
        raise BadInput("--report is required when a run finishes completed")
    if report is not None and not os.path.exists(report):
        raise _missing_report(ctx, key, task_type, report)
    report_path = workspace_relative(ctx.workdir, report, "report") if report else None
    if data is None and report is not None and report.endswith(".json"):
        data = report  # the report is the run's data: keep it as such
    if data is not None and not data.endswith(".json"):
        raise BadInput(f"--data {data}: report data is a .json file (data.json)")
    from ..logic.reports.consistency import decision_problems
    from .reportfiles import MAX_DATA_BYTES
    from .reports import check_report_file

    for path in dict.fromkeys(p for p in (report, data) if p is not None):
        check_report_file(ctx, key, path, task_type)
    data_raw, data_obj = (
        read_json_object(data, "--data", MAX_DATA_BYTES) if data is not None else (None, None)
    )
    if data_obj is not None:
        _check_data_seq(data_obj, seq, data or "")
    records: dict[str, RunRecord] = {}
    # A planning run that ends with its plan approved already (plan approve ran during it)
    # leaves the task ready for implementation, not waiting for an approval it has.
    waits = waits_for_approval(task_type, status)
    if waits:
        from .plans import plan_status

        waits = bool(plan_status(ctx, key).reasons)

    def change(task: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        assert task is not None and head is not None
        state = TaskState(key, task, head)
        record = load_run(ctx.repo, state, task_type, seq)
        if record is None:
            raise Refused(f"task {key} has no {task_type} run {seq}")
        if record.status != "running":
            raise Refused(f"{task_type} run {seq} of {key} already finished ({record.status})")
        files: dict[str, bytes | None] = {}
        if data_obj is not None:
            # Checked again on the record this event replaces: a scope decided meanwhile counts.
            recorded = to_data(record.incremental_decision) if record.incremental_decision else None
            problems = decision_problems(data_obj, recorded)
            if problems:
                raise BadInput(
                    f"report data {data} does not carry {task_type} run {seq}'s decision:\n"
                    + "\n".join(f"  - {p.line()}" for p in problems)
                )
            files[data_snapshot_path(task_type, seq)] = data_raw
        record.status = status
        record.finished_at = now_iso()
        record.report_path = report_path
        records["run"] = record
        flow = task.workflow
        # `verify record` routes the task (docs/workflow.md) and marks the phase completed;
        # `run start` had set it running, so "completed" here means a verdict was recorded in
        # this run.
        routed_by_verdict = (
            task_type == FINAL_VERIFICATION and flow.phase_states.get(task_type) == "completed"
        )
        if task_type == FINAL_VERIFICATION and status == "completed" and not routed_by_verdict:
            raise _no_verdict(ctx, key, record, report, data)
        flow.phase_states[task_type] = status
        if task.latest_run and (task.latest_run.task_type, task.latest_run.seq) == (task_type, seq):
            flow.current_phase_state = status
            task.latest_run = RunRef(task_type, seq, status, report_path)
        nxt = (
            flow.next_recommended_phase or next_phase_after(task_type, status)
            if routed_by_verdict and status == "completed"
            else next_phase_after(task_type, status)
        )
        flow.next_recommended_phase = nxt
        if status == "completed":
            flow.last_completed_phase = task_type
            flow.last_safe_checkpoint = f"{task_type}-{seq}"
        flow.awaiting_approval = waits
        flow.routing_status = (
            "done"
            if nxt == "done"
            else "awaiting-approval"
            if flow.awaiting_approval
            else "rerun"
            if status != "completed"
            else "ready"
        )
        task.current_status = (
            "done" if nxt == "done" else "awaiting-approval" if flow.awaiting_approval else "active"
        )
        if report_path is not None:
            task.latest_report_path = report_path
        where = f"{task_ref(key)}:runs/{task_type}/{seq}.json"
        files[f"runs/{task_type}/{seq}.json"] = run_record_data(record, where)
        return task, files

    state = write_event(ctx.repo, key, change, f"run finish {task_type} {seq} {status}")
    if ctx.workdir is not None and (ctx.workdir / records["run"].paths["state"]).exists():
        write_run_state(ctx, records["run"])  # the state file follows the run it describes
    return state, records["run"]


def _okstra_here(ctx: Context, *args: object) -> str:
    """``git -C <this clone> okstra ARGS``: a command about this repository, one line that runs
    from any folder (an agent often runs outside the repository)."""
    from ..logic.nextstep import line, okstra_argv

    return line(okstra_argv(*args), ctx.clone_dir)


def _no_verdict(
    ctx: Context, key: TaskKey, record: RunRecord, report: str | None, data: str | None
) -> Refused:
    """``run finish --status completed`` of a final-verification run no ``verify record`` has
    routed: the record that comes first, of the run's report data (absolute: the one given,
    else the data beside the report given, else the run's own), for the stage the run
    verifies. The verdict is the data's own unless ``--verdict`` says otherwise."""
    from ..logic.verify_rules import VERDICTS

    found = os.path.abspath(data) if data is not None else None
    if found is None:
        md = os.path.abspath(report) if report is not None and report.endswith(".md") else None
        beside = [md[: -len(".md")] + ".data.json"] if md is not None else []
        roots = dict.fromkeys(str(r) for r in (ctx.workdir, ctx.clone_dir) if r is not None)
        runs = [os.path.join(r, record.paths["data"]) for r in roots]
        found = next((p for p in [*beside, *runs] if os.path.isfile(p)), runs[0] if runs else "")
    stage = record.setup.stage if record.setup is not None else None
    fix = _okstra_here(
        ctx, "verify", "record", key, *(("--stage", stage) if stage is not None else ()),
        "--report", found,
    )  # fmt: skip
    return Refused(
        f"final-verification run {record.seq} of {key} has no verdict yet: record it first "
        f"({fix}), which also decides where the task goes next; the verdict is the report "
        f"data's finalVerdict.verdictToken ({', '.join(VERDICTS)}), or give --verdict",
        hint=fix,
    )


def data_snapshot_path(task_type: str, seq: str) -> str:
    """Where ``run finish --data`` keeps a run's report data in the task tree."""
    return f"runs/{task_type}/{seq}.data.json"


def _check_data_seq(data: dict[str, Any], seq: str, shown: str) -> None:
    header = data.get("header")
    found = header.get("seq") if isinstance(header, dict) else None
    if found != seq:
        raise BadInput(f"report data {shown}: header.seq is {found!r}, but the run is {seq}")


class StartedElsewhere(Refused):
    """The run to start is running already, started by another clone (``run start --remote``
    that lost, or came late)."""


def start_run_shared(
    ctx: Context,
    remote: str,
    key: TaskKey,
    task_type: str,
    critic: str | None = None,
    base: str | None = None,
    stage: int | None = None,
    workers: str | None = None,
    models: Sequence[str] = (),
    options: Sequence[str] = (),
) -> tuple[TaskState, RunRecord]:
    """``run start --remote R``: start the run on the task as ``remote`` holds it, and publish
    the start at once (a push of the task ref leased on what the fetch saw), so two clones of
    a shared task never both start its run — which ``sync`` could only report as a conflict.
    A lost race puts the start back and refuses, naming the run the other clone started."""

    def act(state: TaskState) -> tuple[TaskState, RunRecord]:
        latest = state.task.latest_run
        if latest is not None and latest.task_type == task_type and latest.status == "running":
            record = load_run(ctx.repo, state, task_type, latest.seq)
            from .identity import clone_id

            if record is not None and record.clone != clone_id(ctx.repo):
                raise StartedElsewhere(
                    f"{task_type} run {latest.seq} of {key} is running already, started by "
                    f"{record.started_by}"
                    + (f" in clone {record.clone}" if record.clone else "")
                    + f" on {remote}: its work is that clone's; see "
                    + _okstra_here(ctx, "task", "status", key),
                    hint=_okstra_here(ctx, "task", "status", key),
                )
        return _start(ctx, key, task_type, critic, base, stage, workers, models, options)

    run_setup_of(task_type, base, stage, workers, models, options)  # bad flags: before a fetch
    state, record = through_remote(ctx, remote, key, f"start of its {task_type} run", act)
    # Only the start the remote took has files: a lost race's run number is another clone's.
    write_run_files(ctx, state, record)
    return state, record


def finish_run_shared(
    ctx: Context,
    remote: str,
    key: TaskKey,
    task_type: str,
    seq: str,
    status: str,
    report: str | None,
    data: str | None = None,
) -> tuple[TaskState, RunRecord]:
    """``run finish --remote R``: finish the run on the task as ``remote`` holds it and publish
    the finish at once, leased as ``run start --remote`` is: every clone sees the phase move
    on (and may start the next run) as soon as it fetches, not once this clone syncs.

    A final-verification finish publishes the verdict notes in the same atomic push: a clone
    that fetched the finished run without the verdict it routed on would see release-handoff
    next with no verdict on the task's HEAD, and start the verification over. A planning
    finish publishes the approval notes so: the planner's ``plan approve`` (who approved, and
    how) stayed here, and the first claim elsewhere recorded an approval of its own from the
    plan's marker."""
    from ..records.approval import APPROVALS_REF
    from ..records.verdict import VERDICTS_REF

    planning = "implementation-planning"

    return through_remote(
        ctx,
        remote,
        key,
        f"finish of its {task_type} run {seq}",
        lambda _state: finish_run(ctx, key, task_type, seq, status, report, data),
        notes={FINAL_VERIFICATION: (VERDICTS_REF,), planning: (APPROVALS_REF,)}.get(task_type, ()),
    )
