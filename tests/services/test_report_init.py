"""`report init` as agents use it, end to end through the CLI: a stage report that fits an open
task, a verdict set everywhere the rules tie it, the starter's prompts and generatedAt held to
account, refusals where no valid starter exists, and the plan's open §5 rows carried."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import okstra
from task_world import Task, ok
from verify_world import KEY, make_plan

from okstra_git.core.shell import okstra as okstra_line
from okstra_git.logic.reports.rules import pointer


@pytest.fixture
def task(repo: Path) -> Task:
    return Task(repo)


def fill(data: dict[str, Any], prompts: list[str]) -> dict[str, Any]:
    """Write each prompt ``report init`` listed — and touch nothing else."""
    for where in prompts:
        parts = [int(p) if p.isdigit() else p for p in where.lstrip("/").split("/")]
        holder: Any = data
        for part in parts[:-1]:
            holder = holder[part]
        assert holder[parts[-1]].startswith("Replace:")
        holder[parts[-1]] = f"Written by the verifier for {where}."
    return data


def init(repo: Path, *args: str) -> dict[str, Any]:
    return ok(repo, "report", "init", KEY, *args)


def stage_report(task: Task, folder: Path) -> Any:
    def write(stage: int) -> Path:
        path = folder / f"stage-{stage}.data.json"
        made = init(task.repo, "--type", "implementation", "--stage", str(stage), "--out",
                    str(path))  # fmt: skip
        path.write_text(json.dumps(fill(made["data"], made["prompts"])))
        return path

    return write


def test_accepted_starter_filled_in_records_a_verdict_with_no_other_edit(
    task: Task, tmp_path: Path
):
    task.implement(1, stage_report(task, tmp_path))
    task.implement(2, stage_report(task, tmp_path))
    task.merge(1)
    head = task.merge(2)
    out = tmp_path / "new" / "folders" / "fv.data.json"  # --out makes missing folders
    made = init(task.repo, "--verdict", "accepted", "--out", str(out))
    assert made["taskType"] == "final-verification" and out.is_file()
    data = made["data"]
    step = "release-handoff — run it next for this task"
    command = okstra_line("run", "start", KEY, "--type", "release-handoff")
    assert (
        data["verdictCard"]
        == data["finalVerdict"]
        == {
            "verdictToken": "accepted",
            "direction": "approve",
            "nextStep": step,
        }
    )
    assert data["recommendedNextSteps"][0] == {"text": step, "command": command}
    assert data["readerSummary"]["recommendedCommand"] == command
    (row,) = [r for r in data["followUpTasks"] if r["origin"] == "phase-continuation"]
    assert row["suggestedTaskType"] == "release-handoff"
    assert made["prompts"] == [
        "/readerSummary/decision",
        "/readerSummary/humanAction",
        "/readerSummary/blockers",
        "/rationale",
    ]
    # Untouched, the starter is refused: by report validate and by verify record, naming
    # each prompt left.
    untouched = okstra(task.repo, "report", "validate", str(out))
    assert untouched.returncode == 1
    for where in made["prompts"]:
        assert f"{out}: {where}: " in untouched.stdout
    assert "[starter-prompt]" in untouched.stdout
    refused = okstra(task.repo, "verify", "record", KEY, "--verdict", "accepted",
                     "--report", str(out))  # fmt: skip
    assert refused.returncode == 2
    assert "  - /readerSummary/decision: " in refused.stderr
    # Only the prompts written: the verdict records as the report says.
    out.write_text(json.dumps(fill(data, made["prompts"]), indent=2))
    recorded = ok(task.repo, "verify", "record", KEY, "--verdict", "accepted", "--report",
                  str(out), "--expect-head", head)  # fmt: skip
    assert recorded["verdict"]["routing"] == "release-handoff"
    assert okstra(task.repo, "ci", "check", head).returncode == 0


def test_a_single_stage_verdict_starter_routes_as_the_record_will(task: Task, tmp_path: Path):
    task.implement(1)
    made = init(task.repo, "--verdict", "accepted", "--stage", "1")
    data = made["data"]
    # Stage 2 is still open: an accepted stage 1 goes back to implementation (which goes on:
    # since the trial's polish it no longer says to run it next).
    goes_on = "implementation — this task goes on: claim its next ready stage"
    assert data["finalVerdict"]["nextStep"] == goes_on
    path = Path(made["path"])
    path.write_text(json.dumps(fill(data, made["prompts"])))
    recorded = ok(task.repo, "verify", "record", KEY, "--stage", "1", "--report", str(path))
    assert (recorded["verdict"]["routing"], recorded["nextPhase"]) == ("done", "implementation")


def test_a_stage_report_fits_the_open_task(task: Task, tmp_path: Path):
    fv = "final-verification — run it next for this task"

    def first_stage(stage: int) -> Path:
        first = init(task.repo, "--type", "implementation", "--stage", "1", "--out",
                     str(tmp_path / "s1.json"))  # fmt: skip
        data = first["data"]
        assert (first["seq"], first["stage"], data["header"]["stage"]) == ("001", 1, 1)
        # Stage 2 is open: the report hands over to implementation, not final-verification —
        # going on with the stage still open (trial T12: it said to run implementation next).
        assert data["finalVerdict"]["nextStep"] == (
            "implementation — this task goes on (stage 2 still open): claim its next ready stage"
        )
        assert data["recommendedNextSteps"][0]["command"] == okstra_line("stage", "claim", KEY)
        assert [r["suggestedTaskType"] for r in data["followUpTasks"]] == ["implementation"]
        # Pointing it at final-verification while stage 2 is open is refused.
        wrong = fill(json.loads(json.dumps(data)), first["prompts"])
        for part in ("verdictCard", "finalVerdict"):
            wrong[part]["nextStep"] = fv
        wrong["recommendedNextSteps"][0]["text"] = fv
        wrong["followUpTasks"][0]["suggestedTaskType"] = "final-verification"
        (tmp_path / "wrong.json").write_text(json.dumps(wrong))
        proc = okstra(task.repo, "report", "validate", str(tmp_path / "wrong.json"))
        assert proc.returncode == 1
        assert (
            "/finalVerdict/nextStep: names final-verification, but stage(s) 2 of the task are "
            "not done" in proc.stdout
        )
        proc = okstra(task.repo, "stage", "done", KEY, "--stage", "1", "--report",
                      str(tmp_path / "wrong.json"))  # fmt: skip
        assert proc.returncode == 2 and "[open-stages]" in proc.stderr
        (tmp_path / "s1.json").write_text(json.dumps(fill(data, first["prompts"])))
        return tmp_path / "s1.json"

    task.implement(1, first_stage)

    def last_stage(stage: int) -> Path:
        # Stage 1 is done: stage 2's report is the last, so it hands over to final-verification.
        last = init(task.repo, "--type", "implementation", "--stage", "2", "--out",
                    str(tmp_path / "s2.json"))  # fmt: skip
        # ...after the integrate its command names (trial T12: the real next step).
        assert last["seq"] == "002"
        assert last["data"]["finalVerdict"]["nextStep"] == (
            "final-verification — this was the task's last open stage: integrate the done "
            "stages into the task branch, then run it for this task"
        )
        assert last["data"]["readerSummary"]["recommendedCommand"] == (
            okstra_line("integrate", KEY)
        )
        (tmp_path / "s2.json").write_text(json.dumps(fill(last["data"], last["prompts"])))
        return tmp_path / "s2.json"

    task.implement(2, last_stage)


def test_generated_at_in_the_future_or_before_the_run_is_refused(task: Task, tmp_path: Path):
    task.implement(1)
    task.implement(2)
    task.merge(1)
    task.merge(2)
    made = init(task.repo, "--verdict", "blocked")
    path = Path(made["path"])
    data = fill(made["data"], made["prompts"])
    generated = datetime.fromisoformat(data["header"]["generatedAt"])
    assert abs(generated - datetime.now(UTC)) < timedelta(minutes=1)

    def check(when: datetime, *extra: str) -> Any:
        data["header"]["generatedAt"] = when.replace(microsecond=0).isoformat()
        path.write_text(json.dumps(data))
        return okstra(task.repo, "report", "validate", str(path), *extra)

    now = datetime.now(UTC)
    assert check(now + timedelta(minutes=2)).returncode == 0  # clock skew is allowed
    for extra in ((), ("--no-task",)):
        future = check(now + timedelta(minutes=30), *extra)
        assert future.returncode == 1
        assert f"{path}: /header/generatedAt: " in future.stdout
        assert "is in the future (the clock here says " in future.stdout
        assert "at most 5 minutes of clock skew are allowed" in future.stdout
    refused = okstra(task.repo, "verify", "record", KEY, "--report", str(path))
    assert refused.returncode == 2 and "is in the future" in refused.stderr
    # Before the run (the final verification's run, started with `run start`) started.
    ok(task.repo, "run", "start", KEY, "--type", "final-verification")
    early = check(now - timedelta(hours=1))
    assert early.returncode == 1
    assert "/header/generatedAt: " in early.stdout and "is before the run started (" in early.stdout


def test_report_init_refuses_where_no_valid_starter_exists(task: Task, tmp_path: Path):
    out = tmp_path / "fv.json"
    proc = okstra(task.repo, "report", "init", KEY, "--type", "final-verification",
                  "--out", str(out))  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        f"git okstra: no stage of {KEY} is done, so there is nothing for a final-verification "
        "to verify and no valid report of one to start"
    )
    assert not out.exists()
    verdict = okstra(task.repo, "report", "init", KEY, "--type", "implementation",
                     "--verdict", "accepted")  # fmt: skip
    assert verdict.returncode == 2 and "--verdict is for final-verification reports" in (
        verdict.stderr
    )
    task.implement(1)
    whole = okstra(task.repo, "report", "init", KEY, "--type", "final-verification")
    assert whole.returncode == 1 and "stage(s) 2 (unclaimed) are not done" in whole.stderr
    hint = okstra_line("report", "init", KEY, "--type", "final-verification", "--stage", "1")
    assert f"hint: {hint.replace('git okstra', f'git -C {task.repo} okstra', 1)}" in whole.stderr
    assert okstra(task.repo, "report", "init", KEY, "--type", "final-verification",
                  "--stage", "1").returncode == 0  # fmt: skip


OPEN_ITEMS = """## 5. Clarification Items

| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |
|---|---|---|---|---|---|---|---|
| C-001 | T-1 | decision | Which cache size to ship | a number | next-phase | open |  |
| C-002 | T-1 | data-point | The production log volume | a figure | none | answered | 2 GB/day |
| C-003 | T-1 | material | The old config | a file | none | resolved | attached |
"""


def test_an_implementation_report_carries_the_plans_open_clarification_items(
    repo: Path, tmp_path: Path
):
    plan = make_plan(2).replace("## 5. Clarification Items\n\n- No clarification items.\n",
                                OPEN_ITEMS)  # fmt: skip
    task = Task(repo, plan)
    path = tmp_path / "s1.data.json"

    def carried_report(stage: int) -> Path:
        made = init(repo, "--type", "implementation", "--stage", "1")
        carried = [r for r in made["data"]["followUpTasks"] if r["origin"] == "open-question"]
        assert [r["newTaskId"] for r in carried] == ["feat-c-001", "feat-c-002"]
        assert carried[0]["scope"] == (
            "C-001 (still open in the approved plan's §5): Which cache size to ship"
        )
        filled = fill(made["data"], made["prompts"])
        dropped = json.loads(json.dumps(filled))
        dropped["followUpTasks"] = [
            r for r in dropped["followUpTasks"] if "C-002" not in r["scope"]
        ]
        path.write_text(json.dumps(dropped))
        proc = okstra(repo, "stage", "done", KEY, "--stage", "1", "--report", str(path))
        assert proc.returncode == 2
        assert (
            f"  - {pointer('followUpTasks')}: C-002 is still answered in the approved plan's §5 "
            "and no follow-up row of origin open-question names it" in proc.stderr
        )
        path.write_text(json.dumps(filled))
        return path

    task.implement(1, carried_report)


def test_the_mcp_tools_start_and_check_reports_as_the_cli_does(task: Task, tmp_path: Path):
    from okstra_git.cli.mcp import call_tool

    where = {"repository": str(task.repo), "key": KEY}
    none_done = call_tool("report_init", {**where, "task_type": "final-verification"})
    assert none_done.is_error and none_done.data["exitCode"] == 1
    assert "no stage of proj:grp:feat is done" in none_done.data["error"]
    task.implement(1)
    task.implement(2)
    task.merge(1)
    head = task.merge(2)
    made = call_tool("report_init", {**where, "verdict": "accepted", "out": "a/b/fv.data.json"})
    assert not made.is_error, made.text
    path = task.repo / "a" / "b" / "fv.data.json"
    assert made.data["path"] == str(path) and path.is_file()
    assert made.data["data"]["finalVerdict"]["verdictToken"] == "accepted"
    untouched = call_tool("report_validate", {"repository": str(task.repo), "data": str(path)})
    assert untouched.is_error and not untouched.data["valid"]
    assert [p["pointer"] for p in untouched.data["problems"]] == made.data["prompts"]
    assert {p["rule"] for p in untouched.data["problems"]} == {"starter-prompt"}
    path.write_text(json.dumps(fill(made.data["data"], made.data["prompts"])))
    checked = call_tool("report_validate", {"repository": str(task.repo), "data": str(path)})
    assert not checked.is_error and checked.data["valid"], checked.text
    recorded = call_tool("verify_record", {**where, "report": str(path), "expect_head": head})
    assert not recorded.is_error, recorded.text
    assert recorded.data["verdict"]["routing"] == "release-handoff"


def test_a_verdict_other_than_accepted_starts_with_a_blocker_to_write(task: Task, tmp_path: Path):
    task.implement(1)
    task.implement(2)
    task.merge(1)
    head = task.merge(2)
    made = init(task.repo, "--verdict", "blocked")
    (blocker,) = made["data"]["finalVerification"]["acceptanceBlockers"]
    assert blocker["id"] == "AB-001" and blocker["followUpPhase"] == "implementation"
    assert "/finalVerification/acceptanceBlockers/0/statement" in made["prompts"]
    path = Path(made["path"])
    path.write_text(json.dumps(fill(made["data"], made["prompts"])))
    recorded = ok(task.repo, "verify", "record", KEY, "--report", str(path), "--expect-head",
                  head)  # fmt: skip
    verdict = recorded["verdict"]
    assert (verdict["verdict"], verdict["blockerCount"], verdict["routing"]) == (
        "blocked",
        1,
        "implementation",
    )


def test_a_shared_clones_starter_recommends_commands_through_its_remote(tmp_path: Path):
    """In a clone that shares through a remote (init --remote origin) the report's recommended
    command goes through it, as every printed step there does: a claim or run start taken in
    one clone alone would conflict with the others'. A planning report recommends the claim the
    engine names after it (it said run start --type implementation). A verdict decided later
    (the critic's routing) keeps that remote."""
    from team_world import KEY as TEAM_KEY
    from team_world import Team, run_json

    from okstra_git.logic.reports.starter import decide, starter

    pat = Team.make(tmp_path).clone("pat", "Pat")
    assert okstra(pat, "task", "new", TEAM_KEY, "--type", "error-analysis").returncode == 0
    assert okstra(pat, "sync", "origin").returncode == 0
    data = run_json(pat, "report", "init", TEAM_KEY)["data"]
    command = okstra_line(
        "run", "start", TEAM_KEY, "--type", "implementation-planning", "--remote", "origin"
    )
    assert data["readerSummary"]["recommendedCommand"] == command
    assert data["recommendedNextSteps"][0]["command"] == command

    # A plan's report goes on as the next step after it does: a claim starts implementation.
    planned = starter(TEAM_KEY, "implementation-planning", "001", remote="origin")
    assert planned["readerSummary"]["recommendedCommand"] == okstra_line(
        "stage", "claim", TEAM_KEY, "--remote", "origin"
    )
    verified = starter(TEAM_KEY, "final-verification", "001", remote="origin")
    decide(verified, "rejected")
    assert verified["readerSummary"]["recommendedCommand"] == okstra_line(
        "run", "start", TEAM_KEY, "--type", "implementation", "--remote", "origin"
    )
