"""What ``plan status`` prints for a plan marked approved by hand (method A) before its approval
is recorded: the one reason no refusal prints (the first claim records it), worded by
views/plan.py. A real repository and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, okstra
from sync_world import KEY, wide_plan

PLAN = "docs/plan.md"


def test_a_plan_ticked_by_hand_says_the_first_claim_records_it(repo: Path) -> None:
    assert okstra(repo, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    (repo / "docs").mkdir()
    (repo / PLAN).write_text(wide_plan(2), "utf-8")  # its marker is ticked: [x] Approved
    assert okstra(repo, "plan", "submit", KEY, PLAN).returncode == 0
    said = (
        f"plan {PLAN} is marked approved by hand but no approval is recorded for {KEY} yet; "
        f"the first `git okstra stage claim` records it, or run: git okstra plan approve {KEY}"
    )
    proc = okstra(repo, "plan", "status", KEY, "--json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert (data["reasons"], data["messages"]) == (["not-recorded"], [said])
    assert data["blob"] == git(repo, "hash-object", PLAN)
    text = okstra(repo, "plan", "status", KEY)
    assert text.returncode == 1
    assert text.stdout == f"{KEY}: not approved (not-recorded)\n{said}\n"
