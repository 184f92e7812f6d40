"""Stage reports end to end: `stage done --report` stores Markdown as report.md and report
data as report.json, and every view shows them readable — never one line of literal \\n."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, okstra
from task_world import Task, ok
from verify_world import KEY


@pytest.fixture
def task(repo: Path) -> Task:
    return Task(repo)


def stage_data(repo: Path, folder: Path) -> Callable[[int], Path]:
    """Writes a stage report as an agent does: `report init --type implementation --stage N`,
    its prompts filled, saved as one line of JSON."""

    def write(stage: int) -> Path:
        path = folder / f"stage-{stage}.data.json"
        made = ok(repo, "report", "init", KEY, "--type", "implementation", "--stage", str(stage),
                  "--out", str(path))  # fmt: skip
        data = made["data"]
        data["readerSummary"].update(
            decision=f"Stage {stage} adds src/stage{stage}.py.",
            humanAction="Nothing is needed.",
            blockers="Nothing blocks.",
        )
        data["rationale"] = f"Stage {stage} is done.\nThe tests pass."
        data["summary"] = [{"id": "S-1", "source": "worker", "text": f"VALUE = {stage} lands."}]
        path.write_text(json.dumps(data), "utf-8")  # one line, as agents write it
        return path

    return write


def claim_files(repo: Path, stage: int) -> list[str]:
    ref = f"refs/okstra/claims/grp/feat/stage-{stage}"
    return git(repo, "ls-tree", "--name-only", ref).split()


def test_json_report_is_stored_as_report_json_and_shown_rendered(task: Task, tmp_path: Path):
    task.implement(1, stage_data(task.repo, tmp_path))
    task.implement(2)
    assert claim_files(task.repo, 1) == ["claim.json", "report.json"]
    assert task.last_done["reportFile"] == "report.md"  # stage 2's
    assert claim_files(task.repo, 2) == ["claim.json", "report.md"]
    task.merge(1)
    task.merge(2)

    shown = okstra(task.repo, "verify", "target", KEY)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "\\n" not in text
    heading = "### Stage 1 report (`report.json` stored with its done claim; report data, rendered)"
    assert heading in text
    # Rendered: the report's own Markdown, many lines, inside one fenced block.
    start = text.index("### Stage 1 report")
    block = text[start : text.index("### Stage 2 report")]
    assert "````markdown\n" in block or "```markdown\n" in block
    assert "Stage 1 adds src/stage1.py." in block
    assert "Stage 1 is done." in block and "The tests pass." in block
    assert block.count("\n") > 20
    assert "### Stage 2 report (`report.md` stored with its done claim; Markdown)" in text
    assert "stage 2 report\n" in text[text.index("### Stage 2 report") :]

    stages = ok(task.repo, "verify", "target", KEY)["target"]["stages"]
    assert stages[0]["reportFile"] == "report.json"
    assert stages[0]["reportData"]["readerSummary"]["decision"] == "Stage 1 adds src/stage1.py."
    assert "Stage 1 adds src/stage1.py." in stages[0]["report"]
    assert (stages[1]["reportFile"], stages[1]["reportData"]) == ("report.md", None)
    assert stages[1]["report"] == "stage 2 report\n"


def test_a_markdown_report_keeps_its_lines_and_cannot_break_out(task: Task, tmp_path: Path):
    notes = tmp_path / "notes.md"
    notes.write_text("# Stage 1\n\n- did it\n```\n## VERIFICATION_TARGET\n```\n")
    task.implement(1, notes)
    task.implement(2)
    task.merge(1)
    task.merge(2)
    text = okstra(task.repo, "verify", "target", KEY).stdout
    section = text[text.index("### Stage 1 report") : text.index("### Stage 2 report")]
    assert "# Stage 1\n\n- did it\n" in section
    # The report's own fence is shorter than the block's, so its heading stays inside.
    assert "\n````markdown\n" in section and section.rstrip().endswith("````")
    assert text.count("## VERIFICATION_TARGET") == 2
    assert text.startswith("## VERIFICATION_TARGET")


def test_task_show_and_the_board_show_each_stored_report_readable(task: Task, tmp_path: Path):
    from okstra_git.services.board import build_board
    from okstra_git.services.context import open_context
    from okstra_git.views.board import data as board_data
    from okstra_git.views.board import render

    task.implement(1, stage_data(task.repo, tmp_path))
    notes = tmp_path / "notes.md"
    notes.write_text("# Stage 2\n\n- <b>kept as text</b>\n- second line\n")
    task.implement(2, notes)

    shown = okstra(task.repo, "task", "show", KEY)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "\\n" not in text
    heading = "## Stage 1 report (`report.json` stored with its done claim; report data, rendered)"
    assert heading in text
    section = text[text.index(heading) : text.index("## Stage 2 report")]
    assert "- **Decision:** Stage 1 adds src/stage1.py." in section  # rendered, line by line
    assert "# Stage 2\n\n- <b>kept as text</b>\n- second line\n" in text
    as_json = ok(task.repo, "task", "show", KEY)["stageReports"]
    assert [(s["stage"], s["reportFile"]) for s in as_json] == [
        (1, "report.json"),
        (2, "report.md"),
    ]
    assert as_json[0]["reportData"]["header"]["stage"] == 1

    board = board_data(build_board(open_context(task.repo)))
    stages = {s["stage"]: s for s in board["tasks"][0]["stages"]}
    assert stages[1]["reportFile"] == "report.json"
    assert "Stage 1 adds src/stage1.py." in stages[1]["report"]
    assert stages[2]["report"] == "# Stage 2\n\n- <b>kept as text</b>\n- second line\n"
    page = render(board)
    assert '<details class="report" data-stage="2">' in page
    # Its lines kept (a <pre>), its markup inert.
    assert "<pre># Stage 2\n\n- &lt;b&gt;kept as text&lt;/b&gt;\n- second line\n</pre>" in page
    assert "report data, rendered" in page


def test_report_data_an_older_okstra_stored_as_report_md_still_reads_rendered():
    from okstra_git.logic.reports.starter import starter
    from okstra_git.logic.reports.stored import readable_report, report_data

    data = starter(KEY, "implementation", "001")
    del data["header"]["generatedAt"]  # before generatedAt was required
    text = json.dumps(data)  # one line, as it was stored
    assert report_data("report.md", text) == data
    shown = readable_report("report.md", text)
    assert shown.startswith("# Final report — implementation\n") and "\\n" not in shown
    assert readable_report("report.md", "# notes\n{not json}\n") == "# notes\n{not json}\n"
    broken = readable_report("report.json", json.dumps({"header": "x\ny"}))
    assert broken.startswith("```json\n{\n") and broken.endswith("\n```\n")


def test_the_directive_says_how_to_start_the_stage_report(task: Task):
    from okstra_git.core.shell import command

    claimed = okstra(task.repo, "stage", "claim", KEY, "--stage", "1")
    assert claimed.returncode == 0, claimed.stderr
    # The claimed stage's own (since the trial's polish: it said --stage N), from any folder.
    start = command("git", "-C", task.repo, "okstra", "report", "init", KEY, "--type",
                    "implementation", "--stage", "1")  # fmt: skip
    assert f"report data started from the task's records with `{start}`" in claimed.stdout
