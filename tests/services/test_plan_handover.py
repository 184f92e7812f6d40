"""The plan reaches the worker (issue 21): on a clone that never saw the plan file — a clone of a
bare remote, synced, whose checkout has no ``plans/`` — ``plan show`` prints the approved
snapshot and each stage's steps and Stage Exit Contract, read from the task ref."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from conftest import okstra
from plans import LINEAR_PLAN, plan_text
from team_world import KEY, Team, approve_here, run_json, run_line, stage_report, work_on

from okstra_git.logic.batch import RUN_STEP_BUDGET
from okstra_git.logic.planskeleton import PLACEHOLDER
from okstra_git.logic.stagemap import CHECKS, STAGE_STEP_CAP


def planned_and_fresh(tmp_path: Path) -> tuple[Team, Path, Path]:
    """Pat approves LINEAR_PLAN and syncs (the plan file committed only in Pat's clone, never
    pushed); Wes is a fresh clone of the remote, synced."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, LINEAR_PLAN)
    run_json(pat, "sync", "origin")
    wes = team.clone("wes", "Wes")
    run_json(wes, "sync", "origin")
    assert not (wes / "plans").exists()  # the checkout never had the plan file
    return team, pat, wes


def test_plan_show_on_a_clone_without_the_plan_file(tmp_path: Path):
    _, pat, wes = planned_and_fresh(tmp_path)
    shown = run_json(wes, "plan", "show", KEY)
    assert shown["approved"] is True and shown["approve"] is None
    assert shown["path"] == "plans/i.md" and shown["source"].endswith(":plans/plan-002.md")
    approved_text = (pat / "plans" / "i.md").read_text()
    assert shown["markdown"] == approved_text  # the approved content, ticked marker and all
    assert "- [x] Approved" in shown["markdown"]
    assert [s["stage"] for s in shown["stages"]] == [1, 2, 3]

    proc = okstra(wes, "plan", "show", KEY, "--stage", "2")
    assert proc.returncode == 0, proc.stderr
    header, _, body = proc.stdout.partition("\n\n")
    assert "stage 2 of plan-002 of p:g:i" in header and "approved by Pat" in header
    assert "git show refs/okstra/tasks/g/i:plans/plan-002.md" in header
    assert body.startswith("### Stage 2 — Cache layer\n1. Create `src/cache.py`")
    assert "4. Test hit, miss and eviction in `tests/test_cache.py`." in body
    assert "#### Stage Exit Contract\n- Added/changed files (predicted): `src/cache.py`" in body
    assert "Stage 3" not in body and "Stage 1" not in body

    one = run_json(wes, "plan", "show", KEY, "--stage", "2")
    (stage,) = one["stages"]
    assert stage["steps"][1] == "Write entries atomically (temp file + `os.replace`)."
    assert len(stage["steps"]) == stage["effectiveSteps"] == 4
    assert stage["dependsOn"] == [1]
    assert stage["predictedFiles"] == ["src/cache.py", "tests/test_cache.py"]
    assert stage["exitContract"].startswith("#### Stage Exit Contract\n")
    assert stage["exitContract"].endswith("`python -m pytest tests/test_cache.py -q` passes.")
    assert one["markdown"] == stage["section"]


def test_plan_show_says_when_the_snapshot_is_not_approved_and_refuses_unknown_stages(
    tmp_path: Path,
):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    run_json(pat, "task", "new", KEY, "--type", "implementation-planning")
    (pat / "plans").mkdir()
    (pat / "plans" / "i.md").write_text(LINEAR_PLAN)
    run_json(pat, "plan", "submit", KEY, "plans/i.md")
    shown = run_json(pat, "plan", "show", KEY)
    assert shown["approved"] is False and shown["approve"] == "git okstra plan status p:g:i"
    proc = okstra(pat, "plan", "show", KEY)
    assert "NOT approved" in proc.stdout.splitlines()[0]
    proc = okstra(pat, "plan", "show", KEY, "--stage", "9", "--json")
    assert proc.returncode == 2 and "no stage 9 (stages: 1, 2, 3)" in proc.stdout
    proc = okstra(pat, "plan", "show", "p:g:none")
    assert proc.returncode != 0 and "p:g:none" in proc.stderr


# 1 and 2 are free, 3 needs 1; five steps each, so every batch is one stage.
HANDOVER_PLAN = plan_text(
    [(1, [], ["src/one.py"]), (2, [], ["src/two.py"]), (3, [1], ["src/three.py"])], steps=5
)


def test_the_directive_on_a_fresh_clone_carries_the_plan_the_hand_over_and_other_runs_stages(
    tmp_path: Path,
):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, HANDOVER_PLAN)
    run_json(pat, "sync", "origin")
    ann = team.clone("ann", "Ann")
    run_json(ann, "sync", "origin")
    first = run_json(ann, "stage", "claim", KEY, "--remote", "origin")
    assert first["stages"] == [1]
    work_on(Path(first["placements"][0]["worktreePath"]), 1, "Ann")
    report = stage_report(ann, 1, "Ann")
    carry = ann / "carry-1.json"
    carry.write_text(json.dumps({"summary": "load_config() is in src/one.py", "next": ["cache"]}))
    run_json(ann, "stage", "done", KEY, "--stage", "1", "--report", report, "--carry", str(carry))
    held = run_json(ann, "stage", "claim", KEY, "--remote", "origin")
    assert held["stages"] == [2]

    wes = team.clone("wes", "Wes")  # never saw the plan file nor Ann's report file
    run_json(wes, "sync", "origin")
    assert not (wes / "plans").exists() and not (wes / ".okstra").exists()
    claimed = run_json(wes, "stage", "claim", KEY, "--remote", "origin")
    assert claimed["stages"] == [3]
    (place,) = claimed["placements"]
    assert place["plan"]["steps"] == [f"Do part {i} of stage 3." for i in range(1, 6)]
    assert place["plan"]["exitContract"] == (
        "#### Stage Exit Contract\n- Added/changed files (predicted): `src/three.py`"
    )
    (dep,) = place["dependencies"]
    assert dep["stage"] == 1 and dep["status"] == "done" and dep["runId"] == first["runId"]
    listed = run_json(wes, "stage", "list", KEY)["stages"]
    assert dep["doneCommit"] == listed[0]["claim"]["headCommit"]
    assert dep["carry"] == {"summary": "load_config() is in src/one.py", "next": ["cache"]}
    assert dep["reportFile"] == "report.md"
    assert dep["report"] == "# Stage 1\n\nStage 1 report by Ann.\n"
    (other,) = claimed["concurrentStages"]
    assert other["stage"] == 2 and other["runId"] == held["runId"] and "Ann" in other["who"]
    assert other["predictedFiles"] == ["src/two.py"] and other["state"] == "started"

    text = claimed["directive"]
    # The text form (here: the directive given again by --resume) is the same document.
    again = okstra(wes, "stage", "claim", KEY, "--resume", claimed["runId"])
    assert again.returncode == 0 and again.stdout == text, again.stderr
    lines = text.splitlines()
    assert "- **Stage for this implementation run:** `3`." in text
    assert any(
        ln.startswith("- **Concurrent run stages:** `2` — held by other runs now") for ln in lines
    )
    assert any(ln.startswith("  - stage 2 — Part 2: run `implementation-00") for ln in lines)
    assert "predicted files `src/two.py`" in text
    # The stage's own section, steps and contract, readable as Markdown.
    at = lines.index("### Stage 3 — Part 3", lines.index("### Stage 3 — Part 3") + 1)
    assert lines[at - 1] == "```markdown"
    assert "5. Do part 5 of stage 3." in lines
    assert "- Added/changed files (predicted): `src/three.py`" in lines
    assert "`git okstra plan show p:g:i --stage 3`" in text
    assert "read it from the task on any clone: `git okstra plan show p:g:i`" in text
    # The hand-over: done commit, the carry as JSON lines, the report as written — no literal \n.
    assert "#### Hand-over from stage 1 — Part 1 (a dependency, done)" in lines
    assert f"- Done commit: `{dep['doneCommit']}`" in text
    assert '  "summary": "load_config() is in src/one.py"' in lines
    assert "Stage 1 report by Ann." in lines
    assert "\\n" not in text


def test_stage_ready_says_why_a_ready_stage_is_not_in_the_batch(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])], steps=5))
    ready = run_json(pat, "stage", "ready", KEY)
    assert ready["ready"] == [1, 2] and ready["batch"] == [1] and ready["budget"] == 8
    why = "ready, left for the next run: its 5 step(s) on top of the batch's 5 would pass the "
    assert ready["leftOut"] == {"2": why + "run budget of 8 steps"}
    proc = okstra(pat, "stage", "ready", KEY)
    assert proc.stdout.splitlines() == [
        "ready: 1, 2",
        "batch: 1 (5 of 8 steps)",
        "ready, not in the batch:",
        f"  stage 2: {why}run budget of 8 steps",
    ]


def fill_in(text: str) -> str:
    """Every ``<fill in: …>`` replaced by text of its own, as a planner fills the skeleton."""
    counter = itertools.count(1)
    return PLACEHOLDER.sub(lambda _: f"filled-{next(counter)}", text)


def test_a_plan_from_plan_init_validates_once_filled_then_submits_and_approves(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    run_json(pat, "task", "new", KEY, "--type", "implementation-planning")
    made = run_json(pat, "plan", "init", KEY)
    assert made["path"] == "plans/i.md" and made["placeholders"] > 0
    path = pat / "plans" / "i.md"
    skeleton = path.read_text()
    # Untouched, it is not a plan: validate names each placeholder, submit refuses it.
    proc = okstra(pat, "plan", "validate", "plans/i.md", "--json")
    assert proc.returncode == 1
    found = json.loads(proc.stdout)["findings"]
    assert {f["check"] for f in found} == {"unfilled"} and len(found) == made["placeholders"]
    assert okstra(pat, "plan", "submit", KEY, "plans/i.md").returncode == 1
    # The commands it printed are the ones that follow, each run from anywhere (the trial's
    # polish: they were relative to the folder plan init ran in); the validate names the task,
    # so a valid plan ends with the task's next step.
    assert made["then"] == [
        f"git -C {pat} okstra plan validate {path} --task p:g:i",
        f"git -C {pat} okstra plan submit p:g:i {path}",
        f"git -C {pat} okstra plan approve p:g:i",
    ]
    path.write_text(fill_in(skeleton))
    for printed in made["then"]:
        proc = run_line(printed)
        assert proc.returncode == 0, (printed, proc.stdout, proc.stderr)
    shown = run_json(pat, "plan", "show", KEY, "--stage", "2")
    assert shown["approved"] and shown["stages"][0]["dependsOn"] == [1]
    assert len(shown["stages"][0]["steps"]) == 2
    assert "- [x] Approved" in path.read_text()
    # plan init never writes over a file, and makes the folders it needs.
    approved = path.read_text()
    again = okstra(pat, "plan", "init", KEY)
    assert again.returncode == 1 and "exists" in again.stderr
    assert path.read_text() == approved
    deep = run_json(pat, "plan", "init", KEY, "docs/plans/deep/other.md")
    assert (pat / "docs/plans/deep/other.md").read_text() == skeleton
    assert deep["path"] == "docs/plans/deep/other.md"


def test_the_plan_format_doc_is_linked_from_help_and_man_page_and_its_example_validates(
    tmp_path: Path,
):
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "plan-format.md").read_text("utf-8")
    for where in (("--help",), ("plan", "-h"), ("plan", "init", "-h")):
        proc = okstra(tmp_path, *where)
        assert "git okstra docs plan-format" in " ".join(proc.stdout.split()), where
    assert "git okstra docs plan\\-format" in (root / "man" / "git-okstra.1").read_text("utf-8")
    # The doc the help names prints where only the package is installed (the wheel ships docs/).
    shown = okstra(tmp_path, "docs", "plan-format")
    assert shown.returncode == 0 and shown.stdout == doc
    listed = json.loads(okstra(tmp_path, "docs", "--json").stdout)["documents"]
    assert {"name": "plan-format", "title": "The plan format"}.items() <= listed[
        [d["name"] for d in listed].index("plan-format")
    ].items()
    assert okstra(tmp_path, "docs", "no-such-doc").returncode == 2
    # Every check plan validate reports is in the doc's table, with the caps the code uses.
    for check in (*CHECKS, "§5", "unfilled"):
        assert f"\n| {check} |" in doc, check
    assert f"1 to {STAGE_STEP_CAP} effective steps" in doc
    assert f"at\nmost **{RUN_STEP_BUDGET}** (the run budget)" in doc
    # The complete example is a valid plan.
    example = doc.split("```markdown\n", 1)[1].split("\n```\n", 1)[0]
    (tmp_path / "plan.md").write_text(example + "\n")
    proc = okstra(tmp_path, "plan", "validate", "plan.md", "--json")
    assert proc.returncode == 0, proc.stdout
    assert [s["effectiveSteps"] for s in json.loads(proc.stdout)["stageMap"]] == [2, 3]
