"""``incremental scope KEY``: decide a running run's re-verification scope from the task's own
records, and record the decision on the run (docs/workflow.md).

Where the inputs live (all in the task ref, so every clone that synced the task decides alike):

- the current run: the task's running run of the type (``--type``/``--seq`` to name another);
- the previous run: the highest-numbered *completed* run of the same type before it;
- the previous report data: ``runs/<type>/<seq>.data.json``, the snapshot ``run finish --data``
  keeps (absent: the previous analysis is unknown, so the decision is full);
- the base commits: each run record's ``baseCommit``, resolved at ``run start``.

The decision lands on the current run's record (``incrementalDecision``), where ``run finish
--data`` holds the report data to it. The previous data is also copied into the run's
`.okstra/` carry folder so ``incremental carry`` can read it as a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.strict import parsed, run_seq
from ..core.userfiles import write_atomic
from ..core.values import Value
from ..logic.incremental import FULL, ScopeDecision, decide_scope, stage_map_of
from ..records.base import loads
from ..records.run import IncrementalDecision, RunRecord, load_run, run_record_data, run_seqs
from ..records.task import Task, TaskState, require_task, task_ref, write_event
from .context import Context
from .runs import data_snapshot_path
from .tasks import check_task_type


class TaskScope(Value):
    """The decision for one run, with what a caller needs to carry the rest forward."""

    decision: ScopeDecision
    run: RunRecord
    """The current run, with the decision recorded."""
    prev_seq: str | None
    """The previous completed run of the type, if any."""
    prev_data: str | None
    """The previous run's report data, copied into this run's carry folder (work-tree
    relative), when there is a work tree and the data was kept."""


def _current_run(
    ctx: Context, state: TaskState, task_type: str | None, seq: str | None
) -> RunRecord:
    """The named run, else the latest running run of ``task_type``, else the task's latest
    run; it must still be running (a finished run's scope is history)."""
    if seq is not None:
        parsed(run_seq, seq, "--seq")
    latest = state.task.latest_run
    if task_type is None:
        if latest is None:
            raise Refused(f"task {state.key} has no run; start one first with git okstra run start")
        task_type, seq = latest.task_type, seq or latest.seq
    check_task_type(task_type)
    if seq is None:
        running = [
            s
            for s in run_seqs(ctx.repo, state.head, task_type)
            if (r := load_run(ctx.repo, state, task_type, s)) is not None and r.status == "running"
        ]
        if not running:
            raise Refused(f"task {state.key} has no running {task_type} run")
        seq = running[-1]
    record = load_run(ctx.repo, state, task_type, seq)
    if record is None:
        raise Refused(f"task {state.key} has no {task_type} run {seq}")
    if record.status != "running":
        raise Refused(
            f"{task_type} run {seq} of {state.key} already finished ({record.status}); "
            "a scope is decided for a running run"
        )
    return record


def _previous(ctx: Context, state: TaskState, record: RunRecord) -> RunRecord | None:
    earlier = [
        s for s in run_seqs(ctx.repo, state.head, record.task_type) if int(s) < int(record.seq)
    ]
    for seq in reversed(earlier):
        run = load_run(ctx.repo, state, record.task_type, seq)
        if run is not None and run.status == "completed":
            return run
    return None


def decide_for_task(
    ctx: Context,
    key: TaskKey,
    impacted: Sequence[int],
    cutoff: Fraction,
    task_type: str | None = None,
    seq: str | None = None,
) -> TaskScope:
    """Decide the scope of the running run against the previous completed one and record it."""
    state = require_task(ctx.repo, key)
    current = _current_run(ctx, state, task_type, seq)
    previous = _previous(ctx, state, current)
    prev_raw = None
    if previous is not None:
        path = data_snapshot_path(previous.task_type, previous.seq)
        prev_raw = ctx.repo.read_path(state.head, path)
    if previous is None:
        decision = ScopeDecision(
            FULL, (), (), f"no completed {current.task_type} run before this one"
        )
    elif prev_raw is None:
        decision = ScopeDecision(
            FULL, (), (),
            f"{previous.task_type} run {previous.seq} kept no report data "
            "(run finish --data), so what it verified is unknown",
        )  # fmt: skip
    else:
        where = f"{task_ref(key)}:{data_snapshot_path(previous.task_type, previous.seq)}"
        data = loads(prev_raw, where)
        if not isinstance(data, dict):
            raise BadInput(f"{where}: expected a JSON object")
        decision = decide_scope(
            stage_map_of(data, where),
            impacted,
            previous.base_commit,
            current.base_commit,
            cutoff,
        )
    record = _record(ctx, key, current, decision, sorted(set(impacted)), previous)
    prev_data = None
    if prev_raw is not None and previous is not None and ctx.workdir is not None:
        prev_data = _materialize(ctx.workdir, record, previous, prev_raw)
    return TaskScope(decision, record, previous.seq if previous else None, prev_data)


def _record(
    ctx: Context,
    key: TaskKey,
    current: RunRecord,
    decision: ScopeDecision,
    impacted: list[int],
    previous: RunRecord | None,
) -> RunRecord:
    saved: dict[str, RunRecord] = {}
    path = f"runs/{current.task_type}/{current.seq}.json"

    def change(task: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        assert task is not None and head is not None
        state = TaskState(key, task, head)
        record = load_run(ctx.repo, state, current.task_type, current.seq)
        if record is None or record.status != "running":
            raise Refused(
                f"{current.task_type} run {current.seq} of {key} finished while its scope was "
                "being decided"
            )
        record.incremental_decision = IncrementalDecision(
            mode=decision.mode,
            reverify_stages=list(decision.reverify_stages),
            carry_stages=list(decision.carry_stages),
            reason=decision.reason,
            impacted=impacted,
            prev_seq=previous.seq if previous else None,
            prev_base_sha=previous.base_commit if previous else None,
            cur_base_sha=record.base_commit,
        )
        saved["run"] = record
        return task, {path: run_record_data(record, f"{task_ref(key)}:{path}")}

    event = f"incremental scope {current.task_type} {current.seq}: {decision.mode}"
    write_event(ctx.repo, key, change, event)
    return saved["run"]


def _materialize(workdir: Path, record: RunRecord, previous: RunRecord, raw: bytes) -> str:
    folder = record.paths["carry"]
    relpath = f"{folder}previous-data-{previous.task_type}-{previous.seq}.json"
    target = workdir / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, raw, "previous report data")
    return relpath
