"""Commands run exactly as okstra printed them, where a user met a printed step that failed
without saying what to do (the trial of 2026-12-02, /work/coord/trial.md)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import git, okstra
from plans import LINEAR_PLAN, plan_text
from reports_data import fill_prompts
from task_world import Task
from team_world import KEY, TWO_FREE, Team, approve_here, run_line, run_step, work_on
from verify_world import KEY as VKEY


def test_run_finish_of_a_report_nobody_wrote_says_how_to_write_it(repo: Path):
    """run start names a report .md and the run finish for it; run as printed before the
    report exists, the refusal's hint starts the report data, then (data beside the .md) renders
    it, and the same printed finish then records the run."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "error-analysis").returncode == 0
    start = okstra(repo, "run", "start", "p:g:i", "--type", "error-analysis", "--json")
    assert start.returncode == 0, start.stderr
    finish = json.loads(start.stdout)["next"]
    report = Path(finish["report"])
    assert not report.exists()

    refused = run_step(finish)
    assert refused.returncode == 2, refused.stderr
    assert f"report {report}: no such file; start the run's report data with: " in refused.stderr
    # Each command it names runs from any folder (it said `git okstra report init …`, which
    # ran only inside the clone): deliberately changed to `git -C CLONE okstra …`, the data
    # named absolute, beside the report.
    data = report.with_name(report.name.removesuffix(".md") + ".data.json")
    hint = refused.stderr.split("hint: ", 1)[1].strip()
    where = str(repo.resolve())
    assert shlex.split(hint) == [
        "git", "-C", where, "okstra", "report", "init", "p:g:i", "--type", "error-analysis",
        "--out", str(data),
    ], hint  # fmt: skip
    check = shlex.join(["git", "-C", where, "okstra", "report", "validate", str(data)])
    assert f"check it with: {check}, then finish with --report {data}" in refused.stderr
    started = run_line(hint)
    assert started.returncode == 0, started.stderr
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))
    assert run_line(check).returncode == 0

    refused = run_step(finish)
    assert refused.returncode == 2, refused.stderr
    assert "its report data is beside it" in refused.stderr
    hint = refused.stderr.split("hint: ", 1)[1].strip()
    assert shlex.split(hint) == ["git", "-C", where, "okstra", "report", "render", str(data)]
    rendered = run_line(hint)
    assert rendered.returncode == 0, rendered.stderr
    assert report.is_file()

    done = run_step(finish)
    assert done.returncode == 0, done.stderr
    run = json.loads(git(repo, "show", "refs/okstra/tasks/g/i:runs/error-analysis/001.json"))
    assert run["status"] == "completed"


def test_init_then_task_new_each_print_the_step_after_them(tmp_path: Path):
    """A clone just set up is told how to get the tasks its remote shares; a task just made
    is told its first run — each run as printed does it."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    made = okstra(pat, "task", "new", KEY, "--type", "error-analysis")
    assert made.returncode == 0, made.stderr
    printed = made.stdout.splitlines()[-1]
    assert printed.startswith("next (run, agent): "), made.stdout
    # A clone that shares through origin publishes the new task first (485cccf), then runs it.
    published = run_line(printed.removeprefix("next (run, agent): "))
    assert published.returncode == 0 and "1 pushed" in published.stdout, published.stderr
    step = json.loads(okstra(pat, "task", "status", KEY, "--json").stdout)["next"]
    started = run_line(step["command"])
    assert started.returncode == 0, started.stderr
    assert "started error-analysis run 001 of p:g:i" in started.stdout
    assert okstra(pat, "sync", "origin").returncode == 0

    where = tmp_path / "newcomer"
    git(tmp_path, "clone", "-q", "--no-local", str(team.remote), str(where))
    text = okstra(where, "init", "--remote", "origin").stdout
    setup = okstra(where, "init", "--remote", "origin", "--json")  # run again: nothing to change
    assert setup.returncode == 0, setup.stderr
    then = json.loads(setup.stdout)["then"]
    # Each runs from anywhere (the trial's polish: they ran only in the clone).
    assert then[:2] == [f"git -C {where} okstra sync origin", f"git -C {where} okstra task list"]
    assert f"next: bring the tasks origin shares: {then[0]}, then {then[1]}" in text
    assert "one of requirements-discovery, error-analysis, " in text  # TYPE's values
    for line in then[:2]:
        ran = run_line(line)
        assert ran.returncode == 0, ran.stderr
    assert KEY in ran.stdout  # task list shows the shared task


def test_plan_approve_prints_the_next_step_and_it_runs_as_printed(repo: Path):
    """plan approve used to end the planner's turn with nothing to run; its next step (here the
    claim of the first stage) runs as printed."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    plan = repo / "plans" / "i.md"
    plan.parent.mkdir()
    plan.write_text(LINEAR_PLAN)
    submitted = okstra(repo, "plan", "submit", "p:g:i", str(plan))
    assert submitted.returncode == 0, submitted.stderr
    # plan submit's step is the engine's: the approval, with -C, run as printed from anywhere.
    printed = submitted.stdout.splitlines()[-1]
    assert printed == f"next (human, human): git -C {repo} okstra plan approve p:g:i", printed
    approved = run_line(printed.removeprefix("next (human, human): "))
    assert approved.returncode == 0, approved.stderr
    printed = approved.stdout.splitlines()[-1]
    assert printed.startswith("next (run, agent): "), approved.stdout
    claimed = run_line(printed.removeprefix("next (run, agent): "))
    assert claimed.returncode == 0, claimed.stderr
    assert "Stage for this implementation run:** `1`" in claimed.stdout


def test_a_plan_approved_after_its_shared_planning_run_reaches_the_other_clones(tmp_path: Path):
    """Plan submitted, planning run finished through origin, then the printed approval: it
    stayed in the planner's clone (plan approve had no --remote), and an agent's clone, synced,
    was told a person should approve the plan. The approval step names --remote origin and,
    run as printed, publishes; the agent's clone then claims."""
    team = Team.make(tmp_path)
    planner, agent = team.clone("planner", "Pam"), team.clone("agent", "Abe")
    assert okstra(planner, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    assert okstra(planner, "sync", "origin").returncode == 0
    start = ("run", "start", KEY, "--type", "implementation-planning", "--remote", "origin")
    assert okstra(planner, *start).returncode == 0
    plan = planner / "plans" / "i.md"
    plan.parent.mkdir()
    plan.write_text(TWO_FREE.replace("- [x] Approved", "- [ ] Approved"))
    git(planner, "add", "plans")
    git(planner, "commit", "-q", "-m", "plan")
    git(planner, "push", "-q", "origin", "HEAD")
    assert okstra(planner, "plan", "submit", KEY, str(plan)).returncode == 0
    report = planner / "planning.md"
    report.write_text("# Planning\n\nA plan of two stages.\n")
    finish = ("run", "finish", KEY, "--type", "implementation-planning", "--seq", "001")
    finished = okstra(planner, *finish, "--status", "completed", "--remote", "origin",
                      "--report", str(report))  # fmt: skip
    assert finished.returncode == 0, finished.stderr
    printed = finished.stdout.splitlines()[-1]
    assert printed == (
        f"next (human, human): git -C {planner} okstra plan approve {KEY} --remote origin"
    ), finished.stdout
    approved = run_line(printed.removeprefix("next (human, human): "))
    assert approved.returncode == 0, approved.stderr
    assert "; published to origin" in approved.stdout, approved.stdout
    assert "refs/notes/okstra/approvals" in team.on_remote("refs/notes/")
    git(agent, "pull", "-q", "origin", "HEAD")
    assert okstra(agent, "sync", "origin").returncode == 0
    step = json.loads(okstra(agent, "task", "status", KEY, "--json").stdout)["next"]
    assert step["argv"][2:4] == ["stage", "claim"], step
    claimed = run_step(step)
    assert claimed.returncode == 0, claimed.stderr


def test_a_planning_run_finished_after_its_plan_was_approved_leaves_the_task_ready(repo: Path):
    """plan approve during the planning run, then the run's finish: the task is ready for
    implementation (it said awaiting-approval beside 'plan: … approved'); with the plan still
    unapproved it waits, as before."""
    data = {}
    for key in ("p:g:i", "p:g:j"):
        assert okstra(repo, "task", "new", key, "--type", "implementation-planning").returncode == 0
        start = okstra(repo, "run", "start", key, "--type", "implementation-planning", "--json")
        assert start.returncode == 0, start.stderr
        plan = repo / "plans" / f"{key[-1]}.md"
        plan.parent.mkdir(exist_ok=True)
        plan.write_text(LINEAR_PLAN)
        assert okstra(repo, "plan", "submit", key, str(plan)).returncode == 0
        init = okstra(repo, "report", "init", key, "--json")
        assert init.returncode == 0, init.stderr
        data[key] = json.loads(init.stdout)["path"]
        Path(data[key]).write_text(
            json.dumps(fill_prompts(json.loads(Path(data[key]).read_text())))
        )
    assert okstra(repo, "plan", "approve", "p:g:i").returncode == 0
    for key, waits in (("p:g:i", False), ("p:g:j", True)):
        finish = okstra(
            repo, "run", "finish", key, "--type", "implementation-planning", "--seq", "001",
            "--status", "completed", "--report", data[key],
        )  # fmt: skip
        assert finish.returncode == 0, finish.stderr
        assert ("(awaiting-approval)" in finish.stdout) is waits, finish.stdout
        phase = json.loads(okstra(repo, "task", "status", key, "--json").stdout)["phase"]
        assert phase["status"] == ("awaiting-approval" if waits else "active"), phase
        assert phase["routing"] == ("awaiting-approval" if waits else "ready"), phase


def test_work_ends_with_the_next_step_and_it_runs_as_printed(tmp_path: Path):
    """A work loop that did every stage used to end at 'every stage of KEY is done'; its last
    line is now the task's next step — the final verification's run start — which runs as
    printed."""
    team = Team.make(tmp_path)
    clone = team.clone("ann", "Ann")
    approve_here(clone, plan_text([(1, [], ["src/one.py"])]))
    agent = tmp_path / "agent.sh"
    agent.write_text(
        "#!/bin/sh\nset -e\nmkdir -p src\necho 'ONE = 1' > src/one.py\n"
        "git add -A\ngit commit -q -m one\n"
    )
    agent.chmod(0o755)
    worked = okstra(clone, "work", KEY, "--remote", "origin", "--", str(agent))
    assert worked.returncode == 0, worked.stderr
    lines = worked.stdout.splitlines()
    assert lines[-2] == f"every stage of {KEY} is done", worked.stdout
    assert lines[-1].startswith("next (run, agent): "), worked.stdout
    started = run_line(lines[-1].removeprefix("next (run, agent): "))
    assert started.returncode == 0, started.stderr
    assert f"started final-verification run 001 of {KEY}" in started.stdout


def _named(why: str, after: str, before: str) -> str:
    """The command a next step's why names between ``after`` and ``before``."""
    assert after in why, why
    return why.split(after, 1)[1].split(before, 1)[0]


def test_a_planning_runs_next_step_names_the_plan_and_report_commands_that_run(repo: Path):
    """The planning run's next step said only 'do its work, write its report'; it names plan
    init and report init, each runs as printed, and once the plan is approved only the report
    is left to name."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    start = okstra(repo, "run", "start", "p:g:i", "--type", "implementation-planning", "--json")
    why = json.loads(start.stdout)["next"]["why"]
    init = run_line(_named(why, "write the plan (", " starts it"))
    assert init.returncode == 0, init.stderr
    plan = repo / "plans" / "i.md"
    assert "<fill in" in plan.read_text()
    plan.write_text(LINEAR_PLAN)
    assert okstra(repo, "plan", "submit", "p:g:i", str(plan)).returncode == 0
    why = json.loads(okstra(repo, "task", "status", "p:g:i", "--json").stdout)["next"]["why"]
    assert (
        _named(why, "have the plan approved (", ")") == f"git -C {repo} okstra plan approve p:g:i"
    )
    assert okstra(repo, "plan", "approve", "p:g:i").returncode == 0
    why = json.loads(okstra(repo, "task", "status", "p:g:i", "--json").stdout)["next"]["why"]
    assert why.split(" is running: ", 1)[1].startswith("write its report at "), why
    started = run_line(_named(why, "(start its data with ", ", fill its prompts"))
    assert started.returncode == 0, started.stderr
    assert "final-report-implementation-planning-001.data.json" in started.stdout


def test_the_final_verifications_next_step_starts_the_report_with_a_verdict(repo: Path):
    """It named `report init KEY --type final-verification`, whose starter is blocked; the
    report init it names takes the verdict, and with VERDICT written as 'accepted' it starts an
    accepted report."""
    task = Task(repo)
    task.implement(1)
    task.implement(2)
    assert okstra(repo, "integrate", VKEY).returncode == 0
    step = json.loads(okstra(repo, "task", "status", VKEY, "--json").stdout)["next"]
    assert run_step(step).returncode == 0  # run start --type final-verification
    step = json.loads(okstra(repo, "task", "status", VKEY, "--json").stdout)["next"]
    init = _named(step["why"], "accepted, conditional-accept or blocked — by ", "), then record")
    assert shlex.split(init)[-2:] == ["--verdict", "VERDICT"], init
    started = run_line(init.replace("VERDICT", "accepted"))
    assert started.returncode == 0, started.stderr
    data = json.loads(Path(step["report"]).read_text())
    assert data["finalVerdict"]["verdictToken"] == "accepted"


def test_plain_init_where_the_remote_already_shares_tasks_leads_with_joining(tmp_path: Path):
    """A clone of a remote other clones already share tasks through: plain init's first next
    step is init --remote (starting a task alone comes second) — in text and in --json's then;
    run as printed, the clone sees the team's task."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    assert okstra(pat, "task", "new", KEY, "--type", "error-analysis").returncode == 0
    assert okstra(pat, "sync", "origin").returncode == 0
    for name in ("sam", "kim"):
        git(tmp_path, "clone", "-q", str(team.remote), str(tmp_path / name))
    share = f"git -C {tmp_path / 'sam'} okstra init --remote origin"
    made = okstra(tmp_path / "sam", "init")
    assert made.returncode == 0, made.stderr
    first = [line for line in made.stdout.splitlines() if line.startswith("next: ")]
    assert first == [f"next: origin already shares okstra tasks; join them: {share}"], made.stdout
    assert "or start a task in this clone alone: " in made.stdout.splitlines()[-1]
    then = json.loads(okstra(tmp_path / "kim", "init", "--json").stdout)["then"]
    assert then[0] == f"git -C {tmp_path / 'kim'} okstra init --remote origin", then
    joined = run_line(share)
    assert joined.returncode == 0, joined.stderr
    sync = joined.stdout.split("next: bring the tasks origin shares: ")[1].split(", then ")[0]
    assert run_line(sync).returncode == 0
    assert KEY in okstra(tmp_path / "sam", "task", "list").stdout


def test_plain_init_in_a_clone_offers_to_share_through_its_remote(tmp_path: Path):
    """A team clone that ran plain init used to hear only 'start a task': it then claimed alone,
    unseen by the other clones. It is offered init --remote, which runs as printed."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    where = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(where))
    made = okstra(where, "init")
    assert made.returncode == 0, made.stderr
    share = f"git -C {where} okstra init --remote origin"
    assert (
        made.stdout.splitlines()[-1] == f"  or share tasks with the clones of origin first: {share}"
    )
    ran = run_line(share)
    assert ran.returncode == 0, ran.stderr
    assert "+refs/okstra/*:refs/okstra-remotes/origin/*" in git(
        where, "config", "--get-all", "remote.origin.fetch"
    )
    git(where, "config", "--unset-all", "okstra.cloneId")  # init has something to say again
    assert "init --remote" not in okstra(where, "init").stdout  # origin already shares

    alone = tmp_path / "alone"
    git(tmp_path, "init", "-q", str(alone))
    assert "init --remote" not in okstra(alone, "init").stdout


def test_a_claim_without_a_worktree_says_where_its_work_is_committed(repo: Path):
    """A stage claimed with --no-worktree: task status said 'commit it in its stage worktree'
    and 'work in: ' (nothing), and its step, stage done without --head, was refused ('give its
    head commit with --head'); the claim's brief said the same. They name this clone's
    checkout, whose HEAD the printed stage done records, and run as printed it does."""
    approve_here(repo, TWO_FREE)
    claimed = okstra(repo, "stage", "claim", KEY, "--stage", "1", "--no-worktree")
    assert claimed.returncode == 0, claimed.stderr
    assert "commit in its worktree" not in claimed.stdout
    assert f"commit in this clone's checkout, `{repo}`" in claimed.stdout, claimed.stdout
    text = okstra(repo, "task", "status", KEY).stdout
    assert "stage worktree" not in text, text
    assert f"  work in: {repo}\n" in text, text
    step = json.loads(okstra(repo, "task", "status", KEY, "--json").stdout)["next"]
    assert sorted(step) == sorted(
        ["kind", "argv", "cwd", "who", "why", "command", "also", "worktree", "stages", "commit",
         "report"]
    )  # fmt: skip
    assert (step["kind"], step["worktree"], step["commit"]) == ("work", str(repo), True), step
    assert f"do its work and commit it in this clone's checkout, {repo} " in step["why"], step
    brief = claimed.stdout.split("- stage 1: `", 1)[1].split("`", 1)[0]
    assert brief == step["command"], (brief, step["command"])
    (repo / "s1.py").write_text("STAGE = 1\n")
    git(repo, "add", "s1.py")
    git(repo, "commit", "-q", "-m", "stage 1")
    Path(step["report"]).write_text("# Stage 1\n\ndone\n")
    done = run_step(step)
    assert done.returncode == 0, done.stderr
    stages = json.loads(okstra(repo, "task", "status", KEY, "--json").stdout)["stages"]
    assert stages[0]["state"] == "done", stages
    assert git(repo, "rev-parse", "HEAD") in done.stdout


def _error_analysis_with_data(repo: Path) -> tuple[dict, Path]:
    """p:g:i's error-analysis run started and its report data started (prompts filled), at
    the data's default place; the run's finish step and the data."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "error-analysis").returncode == 0
    start = okstra(repo, "run", "start", "p:g:i", "--type", "error-analysis", "--json")
    assert start.returncode == 0, start.stderr
    finish = json.loads(start.stdout)["next"]
    assert okstra(repo, "report", "init", "p:g:i").returncode == 0
    report = Path(finish["report"])
    data = report.with_name(report.name.removesuffix(".md") + ".data.json")
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))
    return finish, data


def test_run_finish_of_a_relative_report_names_its_data_absolute(repo: Path):
    """run finish --report R.md (relative: git -C DIR runs it in DIR) with the data beside it
    said `git okstra report render R.data.json`, relative to DIR, not to where the user is:
    the data is named absolute, and the render run as printed from another folder writes R.md."""
    finish, data = _error_analysis_with_data(repo)
    relative = str(Path(finish["report"]).relative_to(repo))
    argv = [*finish["argv"][2:]]
    argv[argv.index("--report") + 1] = relative
    refused = okstra(repo, *argv)
    assert refused.returncode == 2, refused.stderr
    hint = refused.stderr.split("hint: ", 1)[1].strip()
    assert hint == f"git -C {repo.resolve()} okstra report render {data}", hint
    assert f"(or finish with --report {data} itself)" in refused.stderr
    rendered = run_line(hint)
    assert rendered.returncode == 0, rendered.stderr
    assert Path(finish["report"]).is_file()


def test_clarify_resume_of_report_data_names_it_absolute_and_takes_it_once_rendered(repo: Path):
    """A run recorded with its report data: clarify resume, run in a subfolder, said `git okstra
    report render .okstra/….data.json --md ….md` (the work tree's paths, from the subfolder:
    no such file), and once that was rendered refused the same again. The render is named
    absolute, runs as printed from another folder, and clarify resume then stages the
    Markdown."""
    finish, data = _error_analysis_with_data(repo)
    argv = [*finish["argv"][2:]]
    argv[argv.index("--report") + 1] = str(data)
    assert okstra(repo, *argv).returncode == 0
    (repo / "docs").mkdir()
    refused = okstra(repo / "docs", "clarify", "resume", "p:g:i", "--no-edit")
    assert refused.returncode == 1, refused.stderr
    markdown = Path(finish["report"])
    render = f"git okstra report render {data} --md {markdown}"
    assert f"first: {render}\n" in refused.stderr, refused.stderr
    rendered = okstra(Path("/"), *shlex.split(render)[2:])
    assert rendered.returncode == 0, rendered.stderr
    resumed = okstra(repo / "docs", "clarify", "resume", "p:g:i", "--no-edit", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["report"] == str(markdown.relative_to(repo))


def test_plan_approve_of_a_plan_failing_its_checks_names_it_absolute(repo: Path):
    """plan approve, run in a subfolder, of a plan edited since its submit to fail its Stage
    Map checks said `fix them (git okstra plan validate plans/i.md)`: the work tree's path,
    no such file from the subfolder. It names the plan absolute."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    plan = repo / "plans" / "i.md"
    plan.parent.mkdir()
    plan.write_text(LINEAR_PLAN)
    assert okstra(repo, "plan", "submit", "p:g:i", str(plan)).returncode == 0
    plan.write_text(LINEAR_PLAN.replace("### Stage 2 ", "### Stage 9 ", 1))
    (repo / "docs").mkdir()
    refused = okstra(repo / "docs", "plan", "approve", "p:g:i")
    assert refused.returncode == 1, refused.stderr
    # For the task, in the clone (deliberately changed: it named no -C and no --task), so a
    # plan fixed since ends with the task's next step.
    check = shlex.join(
        ["git", "-C", str(repo.resolve()), "okstra", "plan", "validate", str(plan.resolve()),
         "--task", "p:g:i"]
    )  # fmt: skip
    assert f"fix them ({check}):" in refused.stderr, refused.stderr
    validated = run_line(check)
    assert validated.returncode == 1 and "S2" in validated.stdout + validated.stderr, validated


def _next_line(out: str) -> str:
    """The command of the ``next (kind, who): …`` line a command's text ends with."""
    last = out.splitlines()[-1]
    assert last.startswith("next ("), out
    return last.split("): ", 1)[1]


def test_plan_validate_of_a_tasks_plan_ends_with_the_tasks_next_step(repo: Path):
    """plan validate ended with 'valid — N stage(s)' and nothing to run next. With --task (as
    plan init prints it) a valid plan ends with the task's next step, the one task status
    gives, which runs as printed; without --task, or on a failing plan, it says what it did."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    then = json.loads(okstra(repo, "plan", "init", "p:g:i", "--json").stdout)["then"]
    plan = repo / "plans" / "i.md"
    assert shlex.split(then[0]) == [
        "git", "-C", str(repo.resolve()), "okstra", "plan", "validate", str(plan.resolve()),
        "--task", "p:g:i",
    ], then  # fmt: skip
    refused = run_line(then[0])  # placeholders left: refused, no next step
    assert refused.returncode == 1 and "next (" not in refused.stdout, refused.stdout
    plan.write_text(LINEAR_PLAN)
    status = json.loads(okstra(repo, "task", "status", "p:g:i", "--json").stdout)["next"]
    valid = run_line(then[0])
    assert valid.returncode == 0, valid.stderr
    assert valid.stdout.splitlines()[0] == f"{plan.resolve()}: valid — 3 stage(s)", valid.stdout
    assert _next_line(valid.stdout) == status["command"]
    out = json.loads(run_line(f"{then[0]} --json").stdout)
    assert out["valid"] and out["next"] == status, out
    started = run_step(out["next"])  # run start --type implementation-planning
    assert started.returncode == 0, started.stderr
    alone = okstra(repo, "plan", "validate", str(plan), "--json")  # the file alone: as before
    assert alone.returncode == 0 and "next" not in json.loads(alone.stdout), alone.stdout


def test_plan_validate_in_a_planning_run_names_the_submit_first(repo: Path):
    """While the planning run runs, the task's next step is the run's finish: after a valid
    plan that the task does not follow yet, plan validate --task named that finish, and the
    plan just written stayed unsubmitted. It names the submit, which runs as printed; once
    the task follows the plan, the task's next step again."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    assert (
        okstra(repo, "run", "start", "p:g:i", "--type", "implementation-planning").returncode == 0
    )
    then = json.loads(okstra(repo, "plan", "init", "p:g:i", "--json").stdout)["then"]
    plan = repo / "plans" / "i.md"
    plan.write_text(LINEAR_PLAN)
    valid = run_line(then[0])
    assert valid.returncode == 0, valid.stderr
    assert _next_line(valid.stdout) == then[1], valid.stdout  # plan init's submit line
    submitted = run_line(_next_line(valid.stdout))
    assert submitted.returncode == 0, submitted.stderr
    assert "submitted plans/i.md as plans/plan-001.md" in submitted.stdout, submitted.stdout
    status = json.loads(okstra(repo, "task", "status", "p:g:i", "--json").stdout)["next"]
    assert status["argv"][2:4] == ["run", "finish"], status
    again = json.loads(run_line(f"{then[0]} --json").stdout)
    assert again["next"] == status, again
    plan.write_text(LINEAR_PLAN.replace("# ", "# Revised: ", 1))  # changed again: submit it
    assert shlex.split(_next_line(run_line(then[0]).stdout))[4:6] == ["plan", "submit"]


def test_integrate_ends_with_the_tasks_next_step(tmp_path: Path):
    """integrate printed what it merged and published, and no step after it. It ends with
    the task's next step (here: claim the stage left), in text and --json; run as printed,
    it claims."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    claim = json.loads(
        okstra(pat, "stage", "claim", KEY, "--stage", "1", "--remote", "origin", "--json").stdout
    )
    work_on(Path(claim["placements"][0]["worktreePath"]), 1, "Pat")
    assert okstra(pat, "stage", "done", KEY, "--stage", "1").returncode == 0
    done = okstra(pat, "integrate", KEY, "--remote", "origin")
    assert done.returncode == 0, done.stderr
    assert "  merged stage 1 (" in done.stdout, done.stdout
    printed = _next_line(done.stdout)
    status = json.loads(okstra(pat, "task", "status", KEY, "--json").stdout)["next"]
    assert printed == status["command"], (printed, status)
    again = json.loads(okstra(pat, "integrate", KEY, "--remote", "origin", "--json").stdout)
    assert again["merged"] == [] and again["next"] == status, again
    assert status["argv"][2:5] == ["stage", "claim", KEY], status
    claimed = run_line(printed)
    assert claimed.returncode == 0, claimed.stderr
    assert "Stage for this implementation run:** `2`" in claimed.stdout, claimed.stdout
