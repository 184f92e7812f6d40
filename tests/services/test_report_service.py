"""Reports against a real task: the one validator in `verify record` and `stage done`, data
consistent with the claims, starter data for the task's phase, and `clarify resume`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import git
from reports_data import fill_prompts, full_report, verdict_report
from verify_world import World, make_world, merged_world

from okstra_git.core.errors import BadInput, Refused
from okstra_git.core.shell import okstra
from okstra_git.logic.clarify import parse_clarification_items
from okstra_git.logic.reports.render import render_markdown
from okstra_git.logic.reports.rules import validate
from okstra_git.logic.reports.starter import starter
from okstra_git.records.claim import load_claim
from okstra_git.records.verdict import VERDICTS_REF
from okstra_git.services import claims, reports, runs, tasks, verify
from okstra_git.services.context import open_context


@pytest.fixture
def merged(repo: Path) -> World:
    return merged_world(repo)


def test_verify_record_refuses_the_report_it_once_recorded(merged: World, tmp_path: Path) -> None:
    # Issue 11: `sourceItems: ["bogus"]`, no follow-up row and a next step that differs from the
    # card were recorded, because only two rules were checked.
    path = verdict_report(merged.ctx, merged.key, tmp_path / "data.json")
    data = json.loads(path.read_text())
    data["consensus"] = [
        {"id": "CS-1", "sourceItems": ["bogus"], "statement": "s", "evidence": "e"}
    ]
    data["followUpTasks"] = []
    data["recommendedNextSteps"][0]["text"] = "ship it"
    path.write_text(json.dumps(data))
    with pytest.raises(BadInput) as raised:
        verify.record_verdict(merged.ctx, merged.key, "accepted", str(path), None)
    lines = str(raised.value).splitlines()
    assert lines[0] == f"report {path} does not support --verdict accepted:"
    assert [line.split(":", 1)[0] for line in lines[1:]] == [
        "  - /consensus/0/sourceItems/0",
        "  - /recommendedNextSteps/0/text",
        "  - /followUpTasks",
    ]
    assert merged.ctx.repo.read_ref(VERDICTS_REF) is None


def test_final_verification_data_must_match_the_claims(repo: Path, tmp_path: Path) -> None:
    world = make_world(repo, stages=3)
    world.do_stage(1)
    world.do_stage(2)
    world.start_stage(3)
    # No valid whole-task starter exists while stage 3 is open: report init says so.
    with pytest.raises(Refused) as refused:
        reports.starter_for_task(world.ctx, world.key, "final-verification")
    assert str(refused.value) == (
        "a whole-task final-verification of proj:grp:feat covers every stage, and stage(s) 3 "
        "(started) are not done; finish them, or verify one done stage with --stage N"
    )
    assert refused.value.hint == okstra(
        "report", "init", world.key, "--type", "final-verification", "--stage", "1"
    )
    data = fill_prompts(
        starter(
            str(world.key),
            "final-verification",
            "001",
            stages=[1, 2, 3],
            source_reports=[
                {"stage": 1, "path": ".okstra/reports/stage-1.md"},
                {"stage": 2, "path": ".okstra/reports/stage-2.md"},
            ],
        )
    )
    data["finalVerification"]["stages"] = [2, 3, 7]
    data["finalVerification"]["sourceImplementationReports"][1]["path"] = "other.md"
    found = [(p.pointer, p.message) for p in reports.check_report(world.ctx, world.key, data)]
    assert found == [
        # the rules: stage 1's report is listed for an unverified stage
        (
            "/finalVerification/sourceImplementationReports/0/stage",
            "stage 1 is not among the verified stages 2, 3, 7",
        ),
        # the task's records
        (
            "/finalVerification/stages",
            "misses stage(s) 1 of the task's Stage Map (1, 2, 3); a whole-task verification "
            "covers every stage",
        ),
        (
            "/finalVerification/stages/1",
            "stage 3 is started in the task's claims; only done stages are verified",
        ),
        ("/finalVerification/stages/2", "stage 7 is not in the task's Stage Map (1, 2, 3)"),
        (
            "/finalVerification/sourceImplementationReports/1/path",
            "'other.md' is not the report stage 2's claim records ('.okstra/reports/stage-2.md')",
        ),
    ]


def test_starters_for_each_phase_pass_the_task_checks(repo: Path) -> None:
    world = make_world(repo, stages=2)
    world.do_stage(1)
    for task_type in (
        "requirements-discovery",
        "error-analysis",
        "implementation",
        "release-handoff",
    ):
        data = reports.starter_for_task(world.ctx, world.key, task_type, language="ko")
        left = reports.check_report(world.ctx, world.key, data)
        assert {p.rule for p in left} == {"starter-prompt"}, task_type  # only its prompts
        assert reports.check_report(world.ctx, world.key, fill_prompts(data)) == [], task_type
        assert data["header"]["seq"] == "001"
    plan = reports.starter_for_task(world.ctx, world.key, "implementation-planning")
    stage_map = plan["implementationPlanning"]["stageMap"]
    assert [(s["stage"], s["predictedFiles"], len(s["steps"])) for s in stage_map] == [
        (1, ["src/stage1.py"], 1),
        (2, ["src/stage2.py"], 1),
    ]
    assert reports.check_report(world.ctx, world.key, fill_prompts(plan)) == []
    single = reports.starter_for_task(world.ctx, world.key, "final-verification", stage=1)
    assert single["finalVerification"]["verificationScope"] == "single-stage"
    assert reports.check_report(world.ctx, world.key, fill_prompts(single)) == []
    with pytest.raises(BadInput, match="--stage 9: the Stage Map of proj:grp:feat has stages 1, 2"):
        reports.starter_for_task(world.ctx, world.key, "final-verification", stage=9)
    with pytest.raises(BadInput, match=r"--stage is for implementation .* not error-analysis"):
        reports.starter_for_task(world.ctx, world.key, "error-analysis", stage=1)
    _state, run = runs.start_run(world.ctx, world.key, "error-analysis")
    again = reports.starter_for_task(world.ctx, world.key)  # the running run's phase and seq
    assert (again["header"]["taskType"], again["header"]["seq"]) == ("error-analysis", run.seq)


def test_stage_done_checks_its_report(repo: Path, tmp_path: Path) -> None:
    world = make_world(repo, stages=2)
    world.start_stage(1)
    world.commit_in_stage(1)
    broken = tmp_path / "stage-1.md"
    broken.write_text(
        "# Stage 1\n\n## 5. Clarification Items\n\n"
        "| ID | Ticket ID | Kind | Statement | Expected form | Blocks | State | User input |\n"
        "|---|---|---|---|---|---|---|---|\n| C-001 | T | decision | a | b | none | open | |\n"
    )
    with pytest.raises(BadInput, match=r"§5 has 1 line\(s\) okstra cannot read:\n  - line 5: "):
        claims.done(world.ctx, world.key, 1, str(broken))
    data = fill_prompts(reports.starter_for_task(world.ctx, world.key, "error-analysis"))
    data["summary"] = [{"id": "S-1", "source": "x", "text": ""}]
    wrong = tmp_path / "stage-1.data.json"
    wrong.write_text(json.dumps(data))
    with pytest.raises(BadInput) as raised:
        claims.done(world.ctx, world.key, 1, str(wrong))
    assert str(raised.value).splitlines()[1:] == [
        '  - /summary/0/text: "" must be non-blank text [schema]',
        "  - /header/taskType: 'error-analysis': this is recorded as the report of a "
        "implementation run [report-file]",
    ]
    assert load_claim(world.ctx.repo, world.key, 1).claim.status == "started"  # nothing stored
    good = tmp_path / "good.data.json"
    starter_data = reports.starter_for_task(world.ctx, world.key, "implementation")
    good.write_text(json.dumps(fill_prompts(starter_data)))
    assert claims.done(world.ctx, world.key, 1, str(good)).claim.status == "done"
    fine = tmp_path / "stage-2.md"
    fine.write_text("# Stage 2\n\nNo §5 here: a plain implementation report.\n")
    world.start_stage(2)
    world.commit_in_stage(2)
    assert claims.done(world.ctx, world.key, 2, str(fine)).claim.status == "done"


# ---------------------------------------------------------------------------------------------
# clarify resume

# The user's editor, as a script: it answers C-002 (with a pipe, which must stay in its cell).
EDITOR = """\
import pathlib, sys
path = pathlib.Path(sys.argv[1])
text = path.read_text("utf-8")
row = next(line for line in text.splitlines() if line.startswith("| `C-002` |"))
assert row.endswith("| `open` |  |"), row
answered = row[: -len("| `open` |  |")] + "| `answered` | 100 \\\\| or fewer |"
path.write_text(text.replace(row, answered), "utf-8")
"""


def finished_run(repo: Path) -> tuple[object, object, Path]:
    """A task whose error-analysis run finished with a rendered report, as a run leaves it."""
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.invalid")
    ctx = open_context(repo)
    key = ctx.key("demo:DEV-9184:cache-cli")
    tasks.new_task(ctx, key, "error-analysis", "feature", None)
    _state, run = runs.start_run(ctx, key, "error-analysis")
    data = full_report("error-analysis", seq=run.seq)
    assert validate(data) == []
    report = repo / run.paths["report"]
    report.write_text(render_markdown(data), "utf-8")
    runs.finish_run(ctx, key, "error-analysis", run.seq, "completed", str(report))
    return ctx, key, report


def test_clarify_resume_edits_stages_with_sidecars_and_prints_the_rerun(
    repo: Path, tmp_path: Path
) -> None:
    ctx, key, report = finished_run(repo)
    sidecars = report.parent.parent / "user-responses"
    sidecars.mkdir()
    (sidecars / "user-response-error-analysis-001.md").write_text("# exported answers\n")
    (sidecars / "user-response-error-analysis-000.md").write_text("# older answers\n")
    (sidecars / "notes.md").write_text("not a sidecar\n")
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    done = reports.resume_clarification(ctx, key, f"{sys.executable} {script}")
    assert done.report == report.relative_to(repo).as_posix()
    assert (
        done.staged == ".okstra/tasks/dev-9184/cache-cli/instruction-set/clarification-response.md"
    )
    assert done.sidecars == [
        ".okstra/tasks/dev-9184/cache-cli/runs/error-analysis/user-responses/"
        f"user-response-error-analysis-{n}.md"
        for n in ("000", "001")
    ]
    assert done.command == okstra("run", "start", str(key), "--type", "error-analysis")
    staged = (repo / done.staged).read_text("utf-8")
    assert staged.startswith(report.read_text("utf-8"))
    assert staged.index("# older answers") < staged.index("# exported answers")
    assert "not a sidecar" not in staged
    item = next(i for i in parse_clarification_items(staged).items if i.id == "C-002")
    assert (item.status, item.user_input) == ("answered", "100 | or fewer")
    assert done.open_items == 2


def test_clarify_resume_stages_nothing_when_the_editor_fails_or_breaks_section_5(
    repo: Path, tmp_path: Path
) -> None:
    ctx, key, _report = finished_run(repo)
    staged = repo / ".okstra/tasks/dev-9184/cache-cli/instruction-set/clarification-response.md"
    with pytest.raises(Refused, match="the editor exited with status 3; nothing was staged"):
        reports.resume_clarification(ctx, key, f"{sys.executable} -c 'raise SystemExit(3)'")
    breaker = tmp_path / "breaker.py"
    breaker.write_text(
        "import pathlib, sys\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('| Status |', '| State |'))\n"
    )
    with pytest.raises(Refused, match="expected column `Status`"):
        reports.resume_clarification(ctx, key, f"{sys.executable} {breaker}")
    assert not staged.exists()
    with pytest.raises(BadInput, match="cannot be started"):
        reports.resume_clarification(ctx, key, "/nonexistent/editor")


def test_clarify_resume_needs_a_finished_report(repo: Path) -> None:
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.invalid")
    ctx = open_context(repo)
    key = ctx.key("p:g:i")
    tasks.new_task(ctx, key, "error-analysis", "feature", None)
    with pytest.raises(Refused, match="has no finished run with a report yet"):
        reports.resume_clarification(ctx, key, None)


LEGACY_REPORT = """\
# Error analysis (an older okstra's layout)

### 4.5.9 Open Questions

| ID | Ticket ID | 질문 | Blocking (예/아니오) | 기대 답 형태 | Status |
|----|-----------|------|----------------------|--------------|--------|
| OQ-001 | `DEV-1` | 캐시를 디스크에 둘까요? | 예 | 예/아니오 | open |

## 5. Clarification Requests for the Next Run

### 5.1 추가 자료 요청 (Additional Materials Requested)

| 자료 ID | Ticket ID | 무엇을 / 왜 | 어디에서 | 어디에 두면 | Status | 사용자가 첨부한 위치 |
|---|---|---|---|---|---|---|
| A1 | `DEV-1` | 오류 전후 worker 로그 | Datadog | `logs/` 아래 | answered | logs/w.log |

### 5.2 사용자 확인 질문 (Questions for the User)

| 질문 ID | Ticket ID | 이유 | 질문 본문 | 기대하는 답 | Blocking | Status | 사용자 답변 |
|---|---|---|---|---|---|---|---|
| Q1 | `DEV-1` | task-type 이 갈립니다 | 재발했나요? | (a) 아니오 (b) 예 | 예 | resolved | (a) |
"""


def test_clarify_resume_maps_a_legacy_reports_rows_to_section_5_rows(repo: Path) -> None:
    """Seed 002's legacy carry-in: a report in the old 4.5.9 / 5.1 / 5.2 layout is staged with
    its OQ-/A-/Q- rows as one §5 table — A → material, Q and OQ → decision, the legacy id kept
    in the statement, Blocks=approval only for a blocking open question."""
    ctx, key, report = finished_run(repo)
    report.write_text(LEGACY_REPORT, "utf-8")
    done = reports.resume_clarification(ctx, key, None)
    staged = (repo / done.staged).read_text("utf-8")
    assert staged.startswith(LEGACY_REPORT)
    parsed = parse_clarification_items(staged)
    assert parsed.malformed == ()
    rows = [(i.id, i.kind, i.blocks, i.status, i.ticket_id, i.user_input) for i in parsed.items]
    assert rows == [
        ("C-001", "decision", "approval", "open", "DEV-1", ""),
        ("C-002", "material", "next-phase", "answered", "DEV-1", "logs/w.log"),
        ("C-003", "decision", "next-phase", "resolved", "DEV-1", "(a)"),
    ]
    statements = [i.statement for i in parsed.items]
    assert statements[0] == "[legacy OQ-001] 캐시를 디스크에 둘까요?"
    assert statements[1].startswith("[legacy A1] 오류 전후 worker 로그")
    assert statements[2] == "[legacy Q1] task-type 이 갈립니다 — 재발했나요?"
    assert parsed.items[0].expected_form == "예/아니오"
    assert done.open_items == 2
