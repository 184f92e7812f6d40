"""A run's manifest and state file (records/runfiles.py): built from the run record, with the
keys agents read written as null when they have no value, and checked against their schemas
(schemas/run-manifest.schema.json, run-state.schema.json) as the tests write them."""

from __future__ import annotations

import json

import pytest

from okstra_git.core.errors import BadInput
from okstra_git.core.keys import parse_task_key
from okstra_git.logic.workspace import run_paths
from okstra_git.records.run import RunOptions, RunRecord, RunSetup
from okstra_git.records.runfiles import WRITTEN_AT_START, manifest_bytes, state_bytes

KEY = parse_task_key("p:g:i")
COMMIT = "c" * 40


def record(task_type: str, seq: str = "001", **fields: object) -> RunRecord:
    return RunRecord(
        task_key=str(KEY), task_type=task_type, seq=seq, status="running",
        started_at="2026-12-02T00:00:00Z", started_by="A <a@example.invalid>",
        paths=run_paths(KEY, task_type, seq), **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_claimed_runs_manifest_names_every_key_an_agent_reads():
    """A run a claim starts has no set-up: its manifest still has the null keys and the
    options' defaults, and no clarification."""
    run = record("implementation", clone="0123456789abcdef")
    manifest = json.loads(manifest_bytes(COMMIT, run))
    nulls = ("baseRef", "baseCommit", "workers", "convergence")
    assert {k: manifest[k] for k in nulls} == dict.fromkeys(nulls)
    assert manifest["options"] == {"directive": None, "relatedTasks": []}
    assert manifest["models"] == {} and manifest["taskCommit"] == COMMIT
    assert manifest["clone"] == "0123456789abcdef"
    assert set(manifest["files"]) == set(WRITTEN_AT_START)
    assert not set(manifest["runWrites"]) & set(WRITTEN_AT_START)
    assert "stage" not in manifest and "verificationScope" not in manifest


def test_a_final_verification_manifest_says_what_it_verifies():
    whole = json.loads(manifest_bytes(COMMIT, record("final-verification")))
    assert (whole["verificationScope"], whole["stage"]) == ("whole-task", "auto")
    setup = RunSetup(
        models={"lead": "opus"}, options=RunOptions(directive="be brief"), workers=["codex"],
        verification_scope="single-stage", stage=2,
    )  # fmt: skip
    one = json.loads(manifest_bytes(COMMIT, record("final-verification", setup=setup)))
    assert (one["verificationScope"], one["stage"], one["workers"]) == (
        "single-stage",
        2,
        ["codex"],
    )
    assert one["options"] == {"directive": "be brief", "relatedTasks": [], "clarification": "none"}


def test_the_state_file_has_null_until_the_run_finishes():
    run = record("implementation")
    assert json.loads(state_bytes(run))["finishedAt"] is None
    run.status, run.finished_at, run.report_path = "completed", "2026-12-02T01:00:00Z", "r.md"
    finished = json.loads(state_bytes(run))
    assert (finished["status"], finished["reportPath"]) == ("completed", "r.md")


def test_what_the_schemas_refuse():
    """The tests write under OKSTRA_CHECK_OWN_RECORDS=1 (conftest): a file that breaks its
    schema is refused, naming the field."""
    with pytest.raises(BadInput, match=r"run-manifest.schema.json:\n  - seq"):
        manifest_bytes(COMMIT, record("implementation", seq="1"))
    with pytest.raises(BadInput, match=r"run-state.schema.json:\n  - status"):
        state_bytes(_bad_status())


def _bad_status() -> RunRecord:
    run = record("implementation")
    run.status = "lost"
    return run
