"""`git okstra report validate|init|render` and `clarify resume` as a user runs them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from conftest import okstra
from reports_data import fill_prompts, full_report
from verify_world import KEY, make_world

from okstra_git.core.shell import okstra as okstra_line
from okstra_git.logic.clarify import parse_clarification_items


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data), "utf-8")
    return str(path)


def test_validate_reports_every_problem_with_its_pointer(tmp_path: Path) -> None:
    good = write(tmp_path / "good.json", full_report("error-analysis"))
    proc = okstra(tmp_path, "report", "validate", good)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"{good}: valid — error-analysis 002 of demo:DEV-9184:cache-cli; task records not "
        "checked: not in a git repository\n"
    )
    data = full_report("error-analysis")
    data["consensus"][0]["sourceItems"] = ["bogus"]
    data["followUpTasks"] = []
    bad = write(tmp_path / "bad.json", data)
    proc = okstra(tmp_path, "report", "validate", bad)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[:2] == [
        f'{bad}: /consensus/0/sourceItems/0: "bogus" must be a worker:item pair such as '
        "claude:F-001, codex:1.1 or lead:mcp-1 [schema]",
        f"{bad}: /followUpTasks: a error-analysis report hands over with a follow-up row of "
        "origin phase-continuation: suggestedTaskType the phase finalVerdict.nextStep names "
        "(e.g. implementation-planning), newTaskId 'cache-cli', autoSpawn no, priority P0 "
        "[phase-continuation]",
    ]
    as_json = json.loads(okstra(tmp_path, "report", "validate", bad, "--json").stdout)
    assert (as_json["ok"], as_json["valid"], as_json["exitCode"]) == (False, False, 1)
    assert [p["pointer"] for p in as_json["problems"]] == [
        "/consensus/0/sourceItems/0",
        "/followUpTasks",
    ]
    (tmp_path / "broken.json").write_text("{nope")
    proc = okstra(tmp_path, "report", "validate", str(tmp_path / "broken.json"))
    assert proc.returncode == 2 and "not UTF-8 JSON" in proc.stderr
    assert okstra(tmp_path, "report", "validate", str(tmp_path / "none.json")).returncode == 2


def test_init_validate_render_a_final_verification_of_a_real_task(repo: Path) -> None:
    world = make_world(repo, stages=2)
    world.do_stage(1)
    world.do_stage(2)
    made = json.loads(okstra(repo, "report", "init", KEY, "--type", "final-verification",
                             "--json").stdout)  # fmt: skip
    path = Path(made["path"])
    assert path.name == "final-report-final-verification-001.data.json"
    assert made["data"]["finalVerification"]["stages"] == [1, 2]
    untouched = okstra(repo, "report", "validate", str(path))
    assert untouched.returncode == 1
    assert [line.split(": ")[1] for line in untouched.stdout.splitlines()[:-1]] == made["prompts"]
    path.write_text(json.dumps(fill_prompts(made["data"])))
    proc = okstra(repo, "report", "validate", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # ...then the task's next step (trial T19: it ended at the check); here the stages are not
    # integrated yet, so the integrate comes before any verification is recorded.
    checked, after = proc.stdout.splitlines()[-2:]
    assert checked.endswith(f"checked against the records of {KEY}"), proc.stdout
    assert after == f"next (run, agent): git -C {repo} okstra integrate {KEY}", proc.stdout
    again = okstra(repo, "report", "init", KEY, "--type", "final-verification")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert f"hint: git -C {repo} okstra report validate {path}" in again.stderr
    # The claims moved on: stage 2 is not in the report any more.
    data = json.loads(path.read_text())
    data["finalVerification"]["stages"] = [1]
    del data["finalVerification"]["sourceImplementationReports"][1]
    path.write_text(json.dumps(data))
    proc = okstra(repo, "report", "validate", str(path))
    assert proc.returncode == 1 and "misses stage(s) 2 of the task's Stage Map" in proc.stdout
    assert okstra(repo, "report", "validate", str(path), "--no-task").returncode == 0
    single = okstra(repo, "report", "init", KEY, "--type", "final-verification", "--stage",
                    "2", "--out", str(repo / "s2.json"), "--force")  # fmt: skip
    assert single.returncode == 0, single.stderr
    s2 = json.loads((repo / "s2.json").read_text())
    assert s2["finalVerification"]["stages"] == [2]
    (repo / "s2.json").write_text(json.dumps(fill_prompts(s2)))
    rendered = okstra(repo, "report", "render", str(repo / "s2.json"), "--json")
    out = json.loads(rendered.stdout)
    assert out["markdown"] == str(repo / "s2.md") and out["html"] == str(repo / "s2.html")
    assert "### 2.1 Verification Scope" in (repo / "s2.md").read_text()


def test_render_refuses_invalid_data_and_writes_only_what_is_asked(tmp_path: Path) -> None:
    data = full_report("implementation-planning", "ko")
    data["clarificationItems"][1]["statement"] = "<script>alert(1)</script> | `x`\nline"
    source = write(tmp_path / "final-report-implementation-planning-002.data.json", data)
    proc = okstra(tmp_path, "report", "render", source, "--md", str(tmp_path / "only.md"))
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "final-report-implementation-planning-002.html").exists()
    markdown = (tmp_path / "only.md").read_text()
    assert "<script>" not in markdown
    (item,) = [i for i in parse_clarification_items(markdown).items if i.id == "C-002"]
    assert item.statement == "<script>alert(1)</script> | `x`\nline"
    assert okstra(tmp_path, "report", "render", source, "--lang", "en").returncode == 0
    html = (tmp_path / "final-report-implementation-planning-002.html").read_text()
    assert 'lang="en"' in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    data["verdictCard"]["direction"] = "hold"
    bad = write(tmp_path / "bad.json", data)
    proc = okstra(tmp_path, "report", "render", bad)
    assert proc.returncode == 2
    assert "breaks 1 rule(s), so nothing was rendered" in proc.stderr
    assert okstra_line("report", "validate", bad) in proc.stderr
    assert not (tmp_path / "bad.md").exists()


def test_clarify_resume_from_the_command_line(repo: Path, tmp_path: Path) -> None:
    assert okstra(repo, "task", "new", "demo:DEV-9184:cache-cli", "--type",
                  "error-analysis").returncode == 0  # fmt: skip
    run = json.loads(okstra(repo, "run", "start", "demo:DEV-9184:cache-cli", "--type",
                            "error-analysis", "--json").stdout)["run"]  # fmt: skip
    report = repo / run["paths"]["report"]
    data = write(
        report.with_name(report.stem + ".data.json"), full_report("error-analysis", seq=run["seq"])
    )
    assert okstra(repo, "report", "render", data).returncode == 0
    assert okstra(repo, "run", "finish", "demo:DEV-9184:cache-cli", "--type", "error-analysis",
                  "--seq", run["seq"], "--status", "completed", "--report",
                  str(report)).returncode == 0  # fmt: skip
    editor = tmp_path / "answer.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('| `open` |  |\\n', '| `answered` | 64 |\\n', 1))\n"
    )
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}"}
    proc = okstra(repo, "clarify", "resume", "demo:DEV-9184:cache-cli", env=env)
    assert proc.returncode == 0, proc.stderr
    rerun = okstra_line("run", "start", "demo:DEV-9184:cache-cli", "--type", "error-analysis")
    assert proc.stdout.splitlines()[-1] == f"rerun the phase: {rerun}"
    staged = repo / ".okstra/tasks/dev-9184/cache-cli/instruction-set/clarification-response.md"
    (item,) = [i for i in parse_clarification_items(staged.read_text()).items if i.id == "C-002"]
    assert (item.status, item.user_input) == ("answered", "64")
    no_editor = {k: v for k, v in os.environ.items() if k != "EDITOR"}
    proc = okstra(repo, "clarify", "resume", "demo:DEV-9184:cache-cli", "--json", env=no_editor)
    assert proc.returncode == 2 and "$EDITOR is not set" in json.loads(proc.stdout)["error"]
    proc = okstra(repo, "clarify", "resume", "demo:DEV-9184:cache-cli", "--no-edit", "--json")
    assert json.loads(proc.stdout)["command"] == rerun
