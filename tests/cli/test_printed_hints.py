"""Refusals' and next steps' commands run exactly as printed, by a shell, from a folder outside
any repository (an agent often runs there): each names its repository (``git -C DIR``) and
every value okstra knows, no placeholder, and does what the text says it does."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import okstra
from plans import LINEAR_PLAN
from reports_data import fill_prompts
from task_world import Task, ok, report
from team_world import KEY, Team, run_step
from verify_world import KEY as VKEY

from okstra_git.core.resources import installed_executable

CHECKOUT = Path(__file__).resolve().parents[2]


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of no repository to run printed lines from, with ``git okstra`` on PATH being
    this checkout's code (``git -C DIR okstra`` starts it in DIR, as for the agent)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = installed_executable()
    if exe is not None:
        (bin_dir / "git-okstra").symlink_to(exe)
    else:  # not installed: this interpreter runs the package
        script = bin_dir / "git-okstra"
        script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m okstra_git "$@"\n')
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    # The script imports okstra_git from this checkout, whichever the installation points at.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(CHECKOUT), *_pythonpath()]))
    where = tmp_path / "elsewhere"
    where.mkdir()
    return where


def _pythonpath() -> list[str]:
    found = os.environ.get("PYTHONPATH", "")
    return [p for p in found.split(os.pathsep) if p]


def as_printed(printed: str, where: Path) -> subprocess.CompletedProcess[str]:
    """``printed`` split as a shell splits it and run in ``where`` (one line, no shell)."""
    assert "\n" not in printed, printed
    argv = shlex.split(printed)
    return subprocess.run(
        argv, cwd=where, text=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=120
    )


def said(text: str, after: str, before: str = "\n") -> str:
    """The command ``text`` names between ``after`` and ``before``."""
    assert after in text, text
    return text.split(after, 1)[1].split(before, 1)[0]


def hint_of(stderr: str) -> str:
    hints = [ln.removeprefix("hint: ") for ln in stderr.splitlines() if ln.startswith("hint: ")]
    assert len(hints) == 1, stderr
    return hints[0]


def test_release_handoffs_refusal_starts_the_verification_and_the_finish_records_the_verdict(
    repo: Path, outside: Path
):
    """run start --type release-handoff without an accepted verdict named `git okstra run start
    KEY --type final-verification`, which ran only inside the clone; then run finish of that run
    before its verdict named `verify record KEY --verdict V --report DATA.json`, no real file.
    Each runs as printed from outside: the verification starts, the verdict of the run's own
    report data is recorded, and the finish then goes through to release-handoff."""
    task = Task(repo)
    task.implement(1)
    task.implement(2)
    task.merge(1)
    task.merge(2)
    clone = repo.resolve()
    handoff = ("run", "start", VKEY, "--type", "release-handoff")
    refused = okstra(repo, *handoff)
    assert refused.returncode == 1 and "found: no verdict" in refused.stderr, refused.stderr
    verify = said(refused.stderr, "Verify that HEAD first: ")
    assert shlex.split(verify) == [
        "git", "-C", str(clone), "okstra", "run", "start", VKEY, "--type", "final-verification",
    ]  # fmt: skip
    assert hint_of(refused.stderr) == verify
    started = as_printed(verify, outside)
    assert started.returncode == 0, started.stderr
    assert f"started final-verification run 001 of {VKEY}" in started.stdout

    runs = clone / ".okstra/tasks/grp/feat/runs/final-verification/reports"
    data = runs / "final-report-final-verification-001.data.json"
    report(repo, data)
    assert okstra(repo, "report", "render", str(data)).returncode == 0
    markdown = data.with_name("final-report-final-verification-001.md")
    assert markdown.is_file()
    finish = ("run", "finish", VKEY, "--type", "final-verification", "--seq", "001",
              "--status", "completed", "--report", str(markdown))  # fmt: skip
    early = okstra(repo, *finish)
    assert early.returncode == 1 and "has no verdict yet" in early.stderr, early.stderr
    record = said(early.stderr, "record it first (", "), which also decides")
    assert shlex.split(record) == [
        "git", "-C", str(clone), "okstra", "verify", "record", VKEY, "--report", str(data),
    ]  # fmt: skip
    assert hint_of(early.stderr) == record  # the task's next step: the same record
    assert "finalVerdict.verdictToken (accepted, conditional-accept, blocked)" in early.stderr
    recorded = as_printed(record, outside)
    assert recorded.returncode == 0, recorded.stderr
    flow = ok(repo, *finish)["workflow"]
    assert flow["nextRecommendedPhase"] == "release-handoff", flow
    assert okstra(repo, *handoff).returncode == 0


def test_a_single_stage_verifications_commands_are_of_its_stage(repo: Path, outside: Path):
    """A single-stage final verification's step named `verify target KEY`, `report init KEY
    --verdict VERDICT` and `verify record KEY --report …`, each the whole task's (stage 2 is
    not done: refused); its finish before the verdict named `verify record KEY --verdict V
    --report DATA.json`. Each names --stage; run as printed from outside, the target is the
    stage's, the data is the stage's, and the verdict recorded is single-stage, after which
    the finish goes through."""
    task = Task(repo)
    task.implement(1)
    ok(repo, "run", "start", VKEY, "--type", "final-verification", "--stage", "1")
    step = ok(repo, "task", "status", VKEY)["next"]
    data = step["report"]
    assert step["argv"][2:] == ["verify", "record", VKEY, "--stage", "1", "--report", data]
    target = as_printed(said(step["why"], "verify stage 1's HEAD (", " shows the target"), outside)
    assert target.returncode == 0 and "single-stage" in target.stdout, target
    init = said(step["why"], "accepted, conditional-accept or blocked — by ", "), then record")
    made = as_printed(init.replace("VERDICT", "accepted"), outside)
    assert made.returncode == 0, made.stderr
    started = json.loads(Path(data).read_text())
    assert started["finalVerification"]["verificationScope"] == "single-stage", started
    Path(data).write_text(json.dumps(fill_prompts(started)))

    early = okstra(repo, "run", "finish", VKEY, "--type", "final-verification", "--seq", "001",
                   "--status", "completed", "--report", data)  # fmt: skip
    assert early.returncode == 1 and "has no verdict yet" in early.stderr, early.stderr
    record = said(early.stderr, "record it first (", "), which also decides")
    assert shlex.split(record) == [
        "git", "-C", str(repo.resolve()), "okstra", "verify", "record", VKEY, "--stage", "1",
        "--report", data,
    ], record  # fmt: skip
    assert hint_of(early.stderr) == record == step["command"]  # the task's next step
    recorded = as_printed(record, outside)
    assert recorded.returncode == 0, recorded.stderr
    assert "single-stage" in recorded.stdout, recorded.stdout
    finished = ok(repo, "run", "finish", VKEY, "--type", "final-verification", "--seq", "001",
                  "--status", "completed", "--report", data)  # fmt: skip
    assert finished["run"]["status"] == "completed", finished


def _shared(tmp_path: Path) -> tuple[Path, Path]:
    """Pat's task p:g:i, shared through origin with Sam's clone."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    assert okstra(pat, "task", "new", KEY, "--type", "error-analysis").returncode == 0
    assert okstra(pat, "sync", "origin").returncode == 0
    sam = team.clone("sam", "Sam")
    assert okstra(sam, "sync", "origin").returncode == 0
    return pat, sam


def test_a_run_another_clone_started_names_its_task_status(tmp_path: Path, outside: Path):
    """run start --remote of a run another clone started said `see git okstra task status KEY`,
    which ran only inside the clone; as printed from outside, it shows the other clone's run."""
    pat, sam = _shared(tmp_path)
    start = ("run", "start", KEY, "--type", "error-analysis", "--remote", "origin")
    assert okstra(pat, *start).returncode == 0
    late = okstra(sam, *start)
    assert late.returncode == 0 and "nothing started: " in late.stdout, late.stderr
    status = said(late.stdout, "its work is that clone's; see ")
    assert shlex.split(status) == ["git", "-C", str(sam), "okstra", "task", "status", KEY]
    shown = as_printed(status, outside)
    assert shown.returncode == 0, shown.stderr
    assert f"task {KEY}" in shown.stdout and "error-analysis run 001" in shown.stdout, shown.stdout


def test_a_publish_blocked_by_a_conflict_names_the_sync_that_shows_it(
    tmp_path: Path, outside: Path
):
    """run start --remote whose task ref is in conflict with the remote's said `see why and
    settle it: git okstra sync origin`, which ran only inside the clone; as printed from
    outside, sync names the conflict to settle."""
    pat, sam = _shared(tmp_path)
    # Both start the same run, Pat publishes his: Sam's task ref is in conflict with origin's.
    assert okstra(pat, "run", "start", KEY, "--type", "requirements-discovery").returncode == 0
    assert okstra(pat, "sync", "origin").returncode == 0
    assert okstra(sam, "run", "start", KEY, "--type", "requirements-discovery").returncode == 0
    blocked = okstra(sam, "run", "start", KEY, "--type", "implementation-planning",
                     "--remote", "origin")  # fmt: skip
    assert blocked.returncode == 1 and "could not be brought in step" in blocked.stderr, blocked
    sync = said(blocked.stderr, "see why and settle it: ")
    assert shlex.split(sync) == ["git", "-C", str(sam), "okstra", "sync", "origin"]
    settle = as_printed(sync, outside)
    assert settle.returncode == 1, settle
    assert "run requirements-discovery-001 was started on both sides" in settle.stderr, settle


def test_a_plan_failing_its_checks_names_a_validate_that_runs_from_anywhere(
    repo: Path, outside: Path
):
    """plan submit of a failing plan, given relative to a subfolder, said `fix them (git okstra
    plan validate i.md)`: no such file anywhere else. It names the plan absolute, for the
    task, in the clone: run as printed it lists the failures, and once the plan is fixed it
    ends with the next step — during the planning run, the submit — which runs as printed."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    planning = ("run", "start", "p:g:i", "--type", "implementation-planning")
    assert okstra(repo, *planning).returncode == 0
    plan = repo / "plans" / "i.md"
    plan.parent.mkdir()
    plan.write_text(LINEAR_PLAN.replace("### Stage 2 ", "### Stage 9 ", 1))
    refused = okstra(repo / "plans", "plan", "submit", "p:g:i", "i.md")
    assert refused.returncode == 1, refused.stderr
    check = said(refused.stderr, "fix them (", "):")
    assert shlex.split(check) == [
        "git", "-C", str(repo.resolve()), "okstra", "plan", "validate", str(plan.resolve()),
        "--task", "p:g:i",
    ]  # fmt: skip
    assert hint_of(refused.stderr) == check
    failing = as_printed(check, outside)
    assert failing.returncode == 1 and "S2" in failing.stdout + failing.stderr, failing
    plan.write_text(LINEAR_PLAN)
    valid = as_printed(check, outside)
    assert valid.returncode == 0, valid.stderr
    submit = valid.stdout.splitlines()[-1].split("): ", 1)[1]
    submitted = as_printed(submit, outside)
    assert submitted.returncode == 0, submitted.stderr
    assert "submitted plans/i.md as plans/plan-001.md" in submitted.stdout, submitted.stdout


def test_a_running_runs_step_names_the_render_of_its_report_data(repo: Path, outside: Path):
    """The running run's step said `then git okstra report render DATA writes it`: DATA is a
    placeholder, and the line ran only inside the clone. It names the run's report data, in
    the clone: after the report init it names, run as printed, it writes the report the
    finish takes."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "error-analysis").returncode == 0
    started = okstra(repo, "run", "start", "p:g:i", "--type", "error-analysis", "--json")
    step = json.loads(started.stdout)["next"]
    why = step["why"]
    init = said(why, "(start its data with ", ", fill its prompts")
    render = said(why, ", fill its prompts, then ", " writes it)")
    report_md = Path(step["report"])
    data = report_md.with_name(report_md.name.removesuffix(".md") + ".data.json")
    assert shlex.split(render) == [
        "git", "-C", str(repo.resolve()), "okstra", "report", "render", str(data),
    ], why  # fmt: skip
    made = as_printed(init, outside)
    assert made.returncode == 0, made.stderr
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))
    assert not report_md.exists()
    rendered = as_printed(render, outside)
    assert rendered.returncode == 0, rendered.stderr
    assert report_md.is_file()
    finished = run_step(step)
    assert finished.returncode == 0, finished.stderr


def test_a_planning_runs_step_names_no_placeholder_and_its_plan_init_the_rest(
    repo: Path, outside: Path
):
    """The planning run's step said `then plan validate FILE, plan submit KEY FILE, plan approve
    KEY`: placeholders, none of them a command. It names the plan init, which prints those
    three with the plan's path, each runnable as printed."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    started = okstra(repo, "run", "start", "p:g:i", "--type", "implementation-planning", "--json")
    why = json.loads(started.stdout)["next"]["why"]
    assert not {"FILE", "KEY", "DATA"} & set(why.replace(",", " ").replace(")", " ").split()), why
    init = said(why, "write the plan (", " starts it and prints the commands")
    made = as_printed(init, outside)
    assert made.returncode == 0, made.stderr
    plan = repo.resolve() / "plans" / "i.md"
    clone = shlex.quote(str(repo.resolve()))
    for printed in (
        f"git -C {clone} okstra plan validate {plan} --task p:g:i",
        f"git -C {clone} okstra plan submit p:g:i {plan}",
        f"git -C {clone} okstra plan approve p:g:i",
    ):
        assert printed in made.stdout, made.stdout
    plan.write_text(LINEAR_PLAN)
    for printed in made.stdout.splitlines():
        if printed.strip().startswith("git -C "):
            ran = as_printed(printed.strip(), outside)
            assert ran.returncode == 0, (printed, ran.stderr)
