"""``incremental scope KEY`` against a real task: inputs from the task's records, the decision
recorded on the run, and ``run finish --data`` holding the report to it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import git, okstra
from reports_data import fill_prompts

from okstra_git.core.errors import BadInput, Refused
from okstra_git.logic.reports.starter import starter
from okstra_git.services.context import open_context
from okstra_git.services.incremental import decide_for_task
from okstra_git.services.runs import finish_run, start_run
from okstra_git.views.incremental import scope_data

KEY = "p:g:i"
IP = "implementation-planning"
# 1 <- 3 <- 4, 2 alone
DEPS = {1: [], 2: [], 3: [1], 4: [3]}


def planning_data(seq: str, items: list[dict], decision: dict | None = None) -> dict:
    """Valid report data of planning run ``seq`` (the starter ``report init`` writes)."""
    stage_map = [
        {"stage": n, "title": f"stage {n}", "effectiveSteps": 1, "dependsOn": d,
         "predictedFiles": [f"s{n}.py"], "steps": [f"Edit `s{n}.py`."]}
        for n, d in DEPS.items()
    ]  # fmt: skip
    data = fill_prompts(starter(KEY, IP, seq, stage_map=stage_map))
    planning = data["implementationPlanning"]
    planning["planBodyVerification"]["planItems"] = items
    if decision is not None:
        planning["incrementalDecision"] = decision
    return data


def item(n: int, stage: int, verdict: str = "AGREE") -> dict:
    return {"id": f"P-{n}", "stage": stage, "statement": f"item {n}", "verdict": verdict}


FIRST_ITEMS = [item(1, 1), item(2, 2), item(3, 3), item(4, 4)]


def finish(repo: Path, seq: str, data: dict | None) -> None:
    ctx = open_context(repo)
    report = repo / f"report-{seq}.md"
    report.write_text("# report\n")
    path = None
    if data is not None:
        path = repo / f"data-{seq}.json"
        path.write_text(json.dumps(data))
    finish_run(ctx, ctx.key(KEY), IP, seq, "completed", str(report), str(path) if path else None)


@pytest.fixture
def planned(repo: Path) -> Path:
    """A task whose first planning run finished with its report data kept, and a second run."""
    assert okstra(repo, "task", "new", KEY, "--type", IP).returncode == 0
    ctx = open_context(repo)
    start_run(ctx, ctx.key(KEY), IP)
    finish(repo, "001", planning_data("001", FIRST_ITEMS))
    start_run(ctx, ctx.key(KEY), IP)
    return repo


def run_record(repo: Path, seq: str) -> dict:
    return json.loads(git(repo, "show", f"refs/okstra/tasks/g/i:runs/{IP}/{seq}.json"))


def decide(repo: Path, impacted: list[int], **kw):
    ctx = open_context(repo)
    return decide_for_task(ctx, ctx.key(KEY), impacted, Fraction(1, 2), **kw)


def test_the_decision_comes_from_the_task_and_is_recorded_on_the_run(planned: Path):
    kept = git(planned, "show", f"refs/okstra/tasks/g/i:runs/{IP}/001.data.json")
    assert json.loads(kept)["implementationPlanning"]["planBodyVerification"]["planItems"]
    scope = decide(planned, [3])
    out = scope_data(scope)
    assert (out["mode"], out["reverify_stages"], out["carry_stages"]) == (
        "incremental",
        [3, 4],
        [1, 2],
    )
    assert (out["seq"], out["prev_seq"]) == ("002", "001")
    assert (planned / out["prev_data"]).read_text() == kept
    assert out["carry_command"].startswith("git okstra incremental carry --prev-data ")
    recorded = run_record(planned, "002")["incrementalDecision"]
    head = git(planned, "rev-parse", "HEAD")
    assert recorded == {
        "mode": "incremental",
        "reverifyStages": [3, 4],
        "carryStages": [1, 2],
        "reason": out["reason"],
        "impacted": [3],
        "prevSeq": "001",
        "prevBaseSha": head,
        "curBaseSha": head,
    }
    log = git(planned, "log", "--format=%s", "-1", "refs/okstra/tasks/g/i")
    assert log == f"incremental scope {IP} 002: incremental"


def test_run_finish_holds_the_report_to_the_recorded_decision(planned: Path):
    decision = decide(planned, [3]).decision.to_data()
    before = git(planned, "rev-parse", "refs/okstra/tasks/g/i")
    with pytest.raises(BadInput, match="the run's record says it re-verifies incrementally"):
        finish(planned, "002", planning_data("002", [item(3, 3), item(4, 4)]))
    wrong = {**decision, "carryStages": [2]}
    with pytest.raises(BadInput, match=r"carryStages: \[2\] differs from the decision"):
        finish(planned, "002", planning_data("002", [item(3, 3)], wrong))
    with pytest.raises(BadInput, match=r"header\.seq is '001', but the run is 002"):
        finish(planned, "002", planning_data("001", [item(3, 3)], decision))
    assert git(planned, "rev-parse", "refs/okstra/tasks/g/i") == before
    finish(planned, "002", planning_data("002", [item(3, 3)], decision))
    assert run_record(planned, "002")["status"] == "completed"


def test_full_when_the_base_moved(planned: Path):
    (planned / "new.py").write_text("x = 1\n")
    git(planned, "add", "new.py")
    git(planned, "commit", "-qm", "new")
    ctx = open_context(planned)
    start_run(ctx, ctx.key(KEY), IP)  # run 003 on the new HEAD; run 002 stays running
    scope = decide(planned, [3])  # the latest running run: 003
    assert scope.run.seq == "003" and scope.decision.mode == "full"
    assert "the base changed" in scope.decision.reason
    assert scope.decision.reverify_stages == (1, 2, 3, 4)
    assert "carry_command" not in scope_data(scope)
    assert decide(planned, [3], seq="002").decision.mode == "incremental"


def test_full_without_a_previous_run_or_its_data(repo: Path):
    okstra(repo, "task", "new", KEY, "--type", IP)
    ctx = open_context(repo)
    start_run(ctx, ctx.key(KEY), IP)
    scope = decide(repo, [1])
    assert scope.decision.mode == "full" and scope.prev_seq is None
    assert "no completed implementation-planning run" in scope.decision.reason
    finish(repo, "001", None)
    start_run(ctx, ctx.key(KEY), IP)
    scope = decide(repo, [1])
    assert scope.decision.mode == "full" and scope.prev_seq == "001"
    assert "kept no report data" in scope.decision.reason
    assert run_record(repo, "002")["incrementalDecision"]["mode"] == "full"
    finish(repo, "002", planning_data("002", FIRST_ITEMS))  # a full decision needs no block


def test_a_finished_or_missing_run_is_refused(planned: Path):
    with pytest.raises(Refused, match="already finished"):
        decide(planned, [3], task_type=IP, seq="001")
    with pytest.raises(Refused, match="no implementation-planning run 009"):
        decide(planned, [3], task_type=IP, seq="009")
    with pytest.raises(Refused, match="no running error-analysis run"):
        decide(planned, [3], task_type="error-analysis")
    with pytest.raises(BadInput, match="--seq"):
        decide(planned, [3], seq="../x")


# -- through the real CLI -----------------------------------------------------------------------


def test_the_cli_scope_carry_and_finish(planned: Path):
    out = okstra(planned, "incremental", "scope", KEY, "--impacted", "3", "--json")
    assert out.returncode == 0, out.stderr
    scope = json.loads(out.stdout)
    assert scope["ok"] is True and scope["mode"] == "incremental"
    assert scope["reverify_stages"] == [3, 4] and scope["carry_stages"] == [1, 2]
    # The printed carry command runs as is once this run's data exists.
    decision = {
        "mode": "incremental",
        "reverifyStages": [3, 4],
        "carryStages": [1, 2],
        "reason": scope["reason"],
    }
    data_path = planned / run_record(planned, "002")["paths"]["data"]
    data_path.write_text(
        json.dumps(planning_data("002", [item(3, 3, "DISAGREE"), item(4, 4)], decision))
    )
    import shlex

    argv = shlex.split(scope["carry_command"])
    carried = okstra(planned, *argv[2:])
    assert carried.returncode == 0, carried.stderr
    assert carried.stdout.strip().startswith("merged 2 carried-forward plan item(s) from seq 001")
    merged = json.loads(data_path.read_text())
    items = merged["implementationPlanning"]["planBodyVerification"]["planItems"]
    assert [(i["id"], i.get("carriedForwardFromSeq")) for i in items] == [
        ("P-1", "001"), ("P-2", "001"), ("P-3", None), ("P-4", None),
    ]  # fmt: skip
    (planned / "r.md").write_text("# plan 002\n")
    done = okstra(planned, "run", "finish", KEY, "--type", IP, "--seq", "002", "--status",
                  "completed", "--report", "r.md", "--data", str(data_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    kept = git(planned, "show", f"refs/okstra/tasks/g/i:runs/{IP}/002.data.json")
    assert json.loads(kept) == merged


def test_the_cli_pure_scope_is_deterministic_and_checks_its_input(tmp_path: Path):
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(planning_data("001", FIRST_ITEMS)))
    args = ["incremental", "scope", "--prev-data", str(prev), "--cur-base-sha", "c" * 40,
            "--prev-base-sha", "c" * 40, "--impacted", "3,1"]  # fmt: skip
    first = okstra(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {
        "mode": "full",
        "reverify_stages": [1, 2, 3, 4],
        "carry_stages": [],
        "reason": "the closure 1, 3, 4 is 3 of 4 stages, more than the 0.5 cutoff",
    }
    assert okstra(tmp_path, *args).stdout == first.stdout
    wider = json.loads(okstra(tmp_path, *args, "--cutoff", "0.75").stdout)
    assert (wider["mode"], wider["carry_stages"]) == ("incremental", [2])
    for bad, message in (
        (["--impacted", "x"], "--impacted 'x'"),
        (["--cutoff", "2"], "--cutoff '2': must be between 0 and 1"),
        (["--seq", "002"], "--type and --seq name a run of KEY"),
    ):
        proc = okstra(tmp_path, *args, *bad)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    proc = okstra(tmp_path, "incremental", "scope", "--prev-data", str(prev))
    assert proc.returncode == 2 and "missing --cur-base-sha, --prev-base-sha" in proc.stderr
    prev.write_text('{"implementationPlanning": {"stageMap": 5}}')
    proc = okstra(tmp_path, *args)
    assert proc.returncode == 2 and "implementationPlanning.stageMap" in proc.stderr


def test_the_cli_carry_refuses_drift_and_writes_nothing(tmp_path: Path):
    prev, cur, out = tmp_path / "prev.json", tmp_path / "cur.json", tmp_path / "out.json"
    prev.write_text(json.dumps(planning_data("001", FIRST_ITEMS)))
    drifted = planning_data("002", [])
    drifted["schemaVersion"] = 2
    cur.write_text(json.dumps(drifted))
    args = ["incremental", "carry", "--prev-data", str(prev), "--cur-data", str(cur),
            "--prev-seq", "001", "--out", str(out)]  # fmt: skip
    proc = okstra(tmp_path, *args)
    assert proc.returncode == 1 and proc.stderr.startswith("git okstra: carry refused: ")
    assert not out.exists()
    as_json = json.loads(okstra(tmp_path, *args, "--json").stdout)
    assert as_json["ok"] is False and as_json["error"].startswith("carry refused: schemaVersion")


def test_report_validate_requires_the_recorded_decision(planned: Path):
    data = planned / "d.json"
    data.write_text(json.dumps(planning_data("002", [item(3, 3)])))
    assert okstra(planned, "report", "validate", str(data)).returncode == 0  # nothing decided yet
    decision = decide(planned, [3]).decision.to_data()
    proc = okstra(planned, "report", "validate", str(data), "--json")
    assert proc.returncode == 1
    [problem] = json.loads(proc.stdout)["problems"]
    assert (problem["pointer"], problem["rule"]) == (
        "/implementationPlanning/incrementalDecision", "incremental",
    )  # fmt: skip
    data.write_text(json.dumps(planning_data("002", [item(3, 3)], decision)))
    assert okstra(planned, "report", "validate", str(data)).returncode == 0
    # Out of the task's repository the record cannot be read: only the rules apply.
    assert okstra(planned.parent, "report", "validate", str(data)).returncode == 0
