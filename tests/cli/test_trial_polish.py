"""The small defects a user trial left after issues 20–22 (each tried as an agent would: in a
clone of a local bare remote, following only what the tool prints)."""

from __future__ import annotations

import shlex
from pathlib import Path

from conftest import okstra
from team_world import KEY, TWO_FREE, Team, approve_here, run_json, run_line

from okstra_git.logic.planskeleton import PLACEHOLDER


def _refusal(proc) -> tuple[str, str]:
    """A refusal's message and its hint line."""
    assert proc.returncode != 0, proc.stdout
    message, _, hint = proc.stderr.partition("\nhint: ")
    return message.removeprefix("git okstra: "), hint.strip()


def test_a_refusal_names_one_next_step_the_engines_and_it_runs_from_anywhere(tmp_path: Path):
    """A refusal of a command about where a task stands says what and why; the one command to
    run next is its hint — the engine's, or the refusal's own fix, absolute either way — never
    a second command of its own in the message ('see: git okstra stage list')."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    run_json(pat, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")
    bob = team.clone("bob", "Bob")
    assert okstra(bob, "sync", "origin").returncode == 0
    refusals = {
        "done": okstra(bob, "stage", "done", KEY, "--stage", "1"),
        "renew": okstra(bob, "stage", "renew", KEY),
        "renew one": okstra(bob, "stage", "renew", KEY, "--stage", "1"),
        "resume": okstra(bob, "stage", "claim", KEY, "--resume", "implementation-009"),
        "task new": okstra(bob, "task", "new", KEY, "--type", "implementation"),
    }
    for what, proc in refusals.items():
        message, hint = _refusal(proc)
        assert "git okstra" not in message and "see:" not in message, (what, message)
        argv = shlex.split(hint)
        assert argv[:3] == ["git", "-C", str(bob)] and argv[3] == "okstra", (what, hint)


def test_plan_init_in_a_subfolder_prints_steps_that_run_from_anywhere(tmp_path: Path):
    """plan init printed `git okstra plan validate plans/i.md`, which runs only in the clone's
    top folder; from a subfolder, its lines run as printed from any folder."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    run_json(pat, "task", "new", KEY, "--type", "implementation-planning")
    (pat / "docs").mkdir()
    made = okstra(pat / "docs", "plan", "init", KEY)
    assert made.returncode == 0, made.stderr
    printed = [ln.strip() for ln in made.stdout.splitlines()[1:]]
    assert len(printed) == 3, made.stdout
    plan = pat / "plans" / "i.md"
    plan.write_text(PLACEHOLDER.sub("filled", plan.read_text()))
    for line in printed:
        ran = run_line(line)
        assert ran.returncode == 0, (line, ran.stdout, ran.stderr)
    assert "- [x] Approved" in plan.read_text()


def test_no_task_names_the_types_a_task_can_start_with(repo: Path):
    """`no task …; create it with: git okstra task new KEY --type TYPE` left the agent to guess
    TYPE: the refusal lists them, and the hint made with one of them creates the task."""
    from okstra_git.core.keys import TASK_TYPES

    message, hint = _refusal(okstra(repo, "task", "status", "p:g:new"))
    assert f"one of: {', '.join(TASK_TYPES)}" in message, message
    argv = shlex.split(hint)
    assert argv[-2:] == ["--type", "TYPE"], hint
    made = run_line(shlex.join([*argv[:-1], TASK_TYPES[0]]))
    assert made.returncode == 0, made.stderr
