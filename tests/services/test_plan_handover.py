"""The plan reaches the worker (issue 21): on a clone that never saw the plan file — a clone of a
bare remote, synced, whose checkout has no ``plans/`` — ``plan show`` prints the approved
snapshot and each stage's steps and Stage Exit Contract, read from the task ref."""

from __future__ import annotations

from pathlib import Path

from conftest import okstra
from plans import LINEAR_PLAN
from team_world import KEY, Team, approve_here, run_json


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
