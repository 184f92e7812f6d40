"""What a user trial with a bare remote, a planner and two agents found (each clone doing only
what the tool prints)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import okstra
from hooks_world import pair
from sync_world import KEY, new_task, sync_json
from team_world import run_line


def test_a_plain_clone_of_a_remote_that_has_the_task_is_not_told_to_create_it(tmp_path: Path):
    """A `git clone` nobody ran `git okstra init --remote` in does not fetch okstra's refs, so
    `task status KEY` of a task the planner published said `no task …; create it with task new`
    — a second task of that key, conflicting with origin's at the next sync. It names the set-up
    that brings origin's records instead, and following the hints reaches the task."""
    a, _remote = pair(tmp_path, "a")
    new_task(a)
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    proc = okstra(b, "task", "status", KEY, "--json")
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hint"] == f"git -C {b.resolve()} okstra init --remote origin", out
    assert "does not fetch okstra's records from origin" in out["error"], out["error"]
    assert run_line(out["hint"]).returncode == 0
    again = json.loads(okstra(b, "task", "status", KEY, "--json").stdout)
    assert again["hint"] == f"git -C {b.resolve()} okstra sync origin", again
    assert run_line(again["hint"]).returncode == 0
    assert okstra(b, "task", "status", KEY).returncode == 0
    assert "git okstra" not in out["error"], out["error"]  # the one command is the hint
