"""A run's files in the work tree's ``.okstra/`` (docs/workflow.md, Phases and runs): its
manifest, for the agents that carry the run out, and its state file, where the run stands.
Built from the run record and written here; okstra itself reads neither back (the run record
in the task tree is the truth: these are the agents' copies, written again as it changes).

Unlike the records in the task tree, both files write a field that has no value as ``null``
(an agent reads every key the format names): :data:`MANIFEST_NULLS`, :data:`STATE_NULLS`.
Their formats are ``schemas/run-manifest.schema.json`` and ``schemas/run-state.schema.json``.
"""

from __future__ import annotations

import os

from ..core.jsontext import dumps_pretty
from ..core.userfiles import write_atomic
from ..core.values import Record, field
from ..logic.phases import FINAL_VERIFICATION
from .base import check_own, to_data
from .run import Convergence, RunRecord

TYPE_CHECKING = False  # typing is for the type checker: a claim loads none of it
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

SCHEMA_VERSION = 1
WRITTEN_AT_START = ("manifest", "state", "workerResults", "carry")
"""The run files ``run start`` writes (folders end in ``/``); the others (prompt, report, data,
status, session) are the run's to write."""


class ManifestOptions(Record):
    """The run's options as its manifest gives them (``run start --option``)."""

    directive: str | None = None
    """An extra directive for the lead (``null`` when none)."""
    related_tasks: list[str] = field(default_factory=list)
    """Related task keys."""
    clarification: str | None = None
    """The clarification response carried in; left out for a run a claim started (no set-up)."""
    pr_template: str | None = None
    """release-handoff: ``default`` or the pull request template file; left out when unset."""


class RunManifest(Record):
    """``manifests/run-manifest-<type>-<seq>.json``: the run and the set-up it was started with."""

    task_key: str
    task_type: str
    seq: str
    started_at: str
    started_by: str
    task_commit: str
    """The task's event commit that started the run."""
    models: dict[str, str]
    """The model of each role the run has (empty for a run a claim started)."""
    options: ManifestOptions
    files: dict[str, str]
    """The files and folders ``run start`` wrote, by kind (:data:`WRITTEN_AT_START`)."""
    run_writes: dict[str, str]
    """The files the run writes itself, by kind."""
    base_ref: str | None = None
    """The base as given (``--base``)."""
    base_commit: str | None = None
    """The commit the run analyses."""
    workers: list[str] | None = None
    """The analysis workers (``null`` for a phase without a roster)."""
    convergence: Convergence | None = None
    """The critic opt-in."""
    verification_scope: str | None = None
    """final-verification: ``whole-task`` or ``single-stage`` (left out for other phases)."""
    stage: int | str | None = None
    """final-verification: the stage it verifies, or ``auto`` (left out for other phases)."""
    clone: str | None = None
    """The clone that started the run (left out in runs started before clones had ids)."""
    schema_version: int = SCHEMA_VERSION


MANIFEST_NULLS = ("baseRef", "baseCommit", "workers", "convergence")
"""The manifest's keys written as ``null`` when they have no value (``options.directive``
too); the others are left out then."""


class RunStateFile(Record):
    """``state/team-state-<type>-<seq>.json``: where the run stands (``run finish`` updates it)."""

    task_key: str
    task_type: str
    seq: str
    status: str
    started_at: str
    finished_at: str | None = None
    report_path: str | None = None
    schema_version: int = SCHEMA_VERSION


STATE_NULLS = ("finishedAt", "reportPath")
"""The state file's keys written as ``null`` while the run has no value for them."""


def run_manifest(task_commit: str, record: RunRecord) -> RunManifest:
    """The manifest of the run ``record``, started by the task commit ``task_commit``."""
    setup = record.setup
    options = ManifestOptions()
    if setup is not None:
        given = setup.options
        options = ManifestOptions(
            directive=given.directive,
            related_tasks=given.related_tasks if given.related_tasks is not None else [],
            clarification=given.clarification,
            pr_template=given.pr_template,
        )
    manifest = RunManifest(
        task_key=record.task_key,
        task_type=record.task_type,
        seq=record.seq,
        started_at=record.started_at,
        started_by=record.started_by,
        task_commit=task_commit,
        models=dict(setup.models) if setup is not None else {},
        options=options,
        files={kind: path for kind, path in record.paths.items() if kind in WRITTEN_AT_START},
        run_writes={
            kind: path for kind, path in record.paths.items() if kind not in WRITTEN_AT_START
        },
        base_ref=setup.base_ref if setup is not None else None,
        base_commit=record.base_commit,
        workers=setup.workers if setup is not None else None,
        convergence=record.convergence,
        clone=record.clone,
    )
    if record.task_type == FINAL_VERIFICATION:
        scope = setup.verification_scope if setup is not None else None
        stage = setup.stage if setup is not None else None
        manifest.verification_scope = scope if scope is not None else "whole-task"
        manifest.stage = stage if stage is not None else "auto"
    return manifest


def manifest_data(manifest: RunManifest) -> dict[str, Any]:
    """The manifest's JSON (:data:`MANIFEST_NULLS` kept as ``null``)."""
    data = _with_nulls(manifest, MANIFEST_NULLS)
    data["options"].setdefault("directive", None)
    return data


def manifest_bytes(task_commit: str, record: RunRecord) -> bytes:
    """The manifest file of the run ``record`` (checked against its schema in tests)."""
    data = manifest_data(run_manifest(task_commit, record))
    check_own(data, "run-manifest", f"run manifest {record.paths['manifest']}")
    return dumps_pretty(data)


def state_bytes(record: RunRecord) -> bytes:
    """The state file of the run ``record`` (checked against its schema in tests)."""
    state = RunStateFile(
        task_key=record.task_key,
        task_type=record.task_type,
        seq=record.seq,
        status=record.status,
        started_at=record.started_at,
        finished_at=record.finished_at,
        report_path=record.report_path,
    )
    data = _with_nulls(state, STATE_NULLS)
    check_own(data, "run-state", f"run state file {record.paths['state']}")
    return dumps_pretty(data)


def store_manifest(root: Path, task_commit: str, record: RunRecord) -> None:
    """Write the run's manifest under the work tree ``root`` (its folder made already)."""
    write_atomic(
        root / record.paths["manifest"], manifest_bytes(task_commit, record), "run manifest"
    )


def store_run_state(root: Path, record: RunRecord) -> None:
    """Write the run's state file under the work tree ``root``, making its folder."""
    path = root / record.paths["state"]
    os.makedirs(path.parent, exist_ok=True)
    write_atomic(path, state_bytes(record), "run state file")


def _with_nulls(record: Any, nulls: tuple[str, ...]) -> dict[str, Any]:
    data = to_data(record)
    for key in nulls:
        data.setdefault(key, None)
    return data
