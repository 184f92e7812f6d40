"""The small defects a user trial left after issues 20–22 (each tried as an agent would: in a
clone of a local bare remote, following only what the tool prints)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import git, okstra
from plans import plan_text
from reports_data import fill_prompts
from team_world import KEY, TWO_FREE, Team, approve_here, run_json, run_line, run_step

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
        "unclaimed": okstra(bob, "stage", "done", KEY, "--stage", "2"),
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


FREE = plan_text([(1, [], ["src/s1.py"]), (2, [], ["src/s2.py"])], steps=5)


def commit_stage(worktree: Path, stage: int) -> None:
    (worktree / "src").mkdir(exist_ok=True)
    (worktree / "src" / f"s{stage}.py").write_text(f"STAGE = {stage}\n")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", f"stage {stage}")


def _follow_until(clone: Path, stop: str) -> None:
    """``clone`` does what its ``next`` says (the work too: a verification's accepted report,
    a stage's commit and report) until it says to run ``stop``."""
    for _ in range(30):
        step = run_json(clone, "task", "status", KEY)["next"]
        if " ".join(step["argv"] or []).startswith(stop):
            return
        if step["kind"] == "work":
            report = Path(step["report"])
            report.parent.mkdir(parents=True, exist_ok=True)
            if step["argv"][2:4] == ["verify", "record"]:
                started = run_json(clone, "report", "init", KEY, "--verdict", "accepted")
                report.write_text(
                    json.dumps(fill_prompts(json.loads(Path(started["path"]).read_text())))
                )
            else:
                report.write_text("# report\n\ndone\n")
        proc = run_step(step)
        assert proc.returncode == 0, (step, proc.stderr)
    raise AssertionError(f"next never said {stop!r}")


def _accepted_while_a_clone_lags(tmp_path: Path) -> tuple[Team, Path, Path]:
    """Ann does stage 1 and integrates it; Ben does stage 2 (his task branch at the published
    head of then); Ann integrates stage 2, verifies the task and publishes the accepted verdict.
    Ben's task branch is then behind the published one."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, FREE)
    run_json(pat, "sync", "origin")
    ann, ben = team.clone("ann", "Ann"), team.clone("ben", "Ben")
    run_json(ann, "sync", "origin")
    one = run_json(ann, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")
    commit_stage(Path(one["placements"][0]["worktreePath"]), 1)
    run_json(ann, "stage", "done", KEY, "--stage", "1", "--remote", "origin")
    run_json(ann, "integrate", KEY, "--remote", "origin")
    run_json(ben, "sync", "origin")
    two = run_json(ben, "stage", "claim", KEY, "--remote", "origin", "--stage", "2")
    commit_stage(Path(two["placements"][0]["worktreePath"]), 2)
    run_json(ben, "stage", "done", KEY, "--stage", "2", "--remote", "origin")
    _follow_until(ann, f"git okstra run start {KEY} --type release-handoff")
    return team, ann, ben


def test_a_clone_whose_task_branch_is_behind_shows_the_published_verdict(tmp_path: Path):
    """Trial T14: Ben's task branch is behind the published one, which carries the accepted
    verdict; task status and the board said 'verdict: none'. They show it, on origin's task
    branch, and Ben's next step brings that branch here, where it then opens the gate."""
    *_, ben = _accepted_while_a_clone_lags(tmp_path)
    assert okstra(ben, "sync", "origin").returncode == 0
    shown = run_json(ben, "task", "status", KEY)
    assert shown["published"]["taskBranch"]["state"] == "behind"
    assert shown["verdict"] is None  # the task's HEAD here has none: the gate judges that one
    published = shown["publishedVerdict"]
    assert published["verdict"] == "accepted" and published["opensGate"], published
    assert published["head"] == shown["published"]["taskBranch"]["published"]
    text = okstra(ben, "task", "status", KEY).stdout
    assert "verdict: none on this clone's task branch; accepted (whole-task) recorded on " in text
    assert "on origin's task branch" in text and "opens the gate there" in text
    page = tmp_path / "board.html"
    assert okstra(ben, "board", "--out", str(page)).returncode == 0
    html = page.read_text()
    assert "none on this clone&#39;s task branch" in html or "none on this clone's task" in html
    assert "on origin&#39;s task branch" in html or "on origin's task branch" in html
    assert run_line(shown["next"]["command"]).returncode == 0  # integrate: brings it here
    after = run_json(ben, "task", "status", KEY)
    assert after["verdict"]["opensGate"] and after["publishedVerdict"] is None
    assert after["next"]["argv"][:2] == ["git", "push"]  # landing it, as on Ann's clone


def test_the_directive_names_each_stages_done_with_its_report_and_it_runs_as_printed(
    tmp_path: Path,
):
    """The claim directive said `stage done KEY --stage N --report PATH`: it names each
    claimed stage's own line — the engine's, with the report file task status names — and
    that line, after the work, marks the stage done from any folder."""
    import re

    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    run_json(pat, "sync", "origin")
    ann = team.clone("ann", "Ann")
    run_json(ann, "sync", "origin")
    claimed = run_json(ann, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")
    directive = claimed["directive"]
    assert "--stage N" not in directive and "PATH" not in directive, directive
    step = run_json(ann, "task", "status", KEY)["next"]
    assert f"- stage 1: `{step['command']}`" in directive, directive
    spans = re.findall(r"`([^`]*okstra report init[^`]*)`", directive)
    assert spans and shlex.split(spans[0])[-2:] == ["--stage", "1"], spans
    commit_stage(Path(claimed["placements"][0]["worktreePath"]), 1)
    Path(step["report"]).write_text("# Stage 1\n\ndone\n")
    done = run_line(step["command"])
    assert done.returncode == 0, done.stderr
    assert run_json(ann, "task", "status", KEY)["stages"][0]["state"] == "done"


def _empty_clone(team: Team, name: str) -> Path:
    """A clone made with `git init` and the remote added: okstra's records synced, no commit."""
    where = team.root / name
    git(team.root, "init", "-q", "-b", "main", str(where))
    git(where, "remote", "add", "origin", str(team.remote))
    root = team.root / f"wt-{name}"
    assert okstra(where, "init", "--remote", "origin", "--worktree-root", str(root)).returncode == 0
    assert okstra(where, "sync", "origin").returncode == 0
    return where


def test_a_clone_with_no_commit_is_told_how_to_get_the_commit_its_stages_start_from(
    tmp_path: Path,
):
    """`git init` + `init --remote` + sync has the records but no commit: claim said 'commit
    something first'. It names the fetch that brings the task's implementation base (or, for
    the first claim, the pull of the remote's branch), which run as printed let the claim go
    through."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    run_json(pat, "sync", "origin")
    first = _empty_clone(team, "first")
    # The engine says so first: task status's next step is that pull, not the claim.
    step = run_json(first, "task", "status", KEY)["next"]
    assert (step["argv"], step["cwd"]) == (["git", "pull", "origin", "main"], str(first)), step
    message, hint = _refusal(okstra(first, "stage", "claim", KEY, "--remote", "origin"))
    assert "has no commit yet" in message and "first claim" in message, message
    assert shlex.split(hint) == ["git", "-C", str(first), "pull", "origin", "main"], hint
    assert run_line(hint).returncode == 0
    run_json(first, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")

    later = _empty_clone(team, "later")
    assert run_json(later, "task", "status", KEY)["next"]["argv"] == ["git", "fetch", "origin"]
    proc = okstra(later, "stage", "claim", KEY, "--remote", "origin", "--stage", "2")
    assert proc.returncode == 1, proc.stderr
    message, hint = _refusal(proc)
    assert "implementation base" in message and "is not in this clone" in message, message
    assert shlex.split(hint) == ["git", "-C", str(later), "fetch", "origin"], hint
    assert run_line(hint).returncode == 0
    step = run_json(later, "task", "status", KEY)["next"]
    assert step["argv"][2:4] == ["stage", "claim"], step  # the commit is here now
    claimed = run_json(later, "stage", "claim", KEY, "--remote", "origin", "--stage", "2")
    assert Path(claimed["placements"][0]["worktreePath"]).is_dir()


def test_a_clone_of_a_remote_whose_head_names_no_branch_is_told_the_branch_it_has(
    tmp_path: Path,
):
    """A bare remote whose HEAD names a branch nobody pushed (made with another default branch)
    gives clones an unborn branch of that name: the step said `git pull origin trunk`, which git
    refuses. It names the remote's one branch, and runs as printed."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    run_json(pat, "sync", "origin")
    git(team.remote, "symbolic-ref", "HEAD", "refs/heads/trunk")
    where = tmp_path / "newcomer"
    git(tmp_path, "clone", "-q", "--no-local", str(team.remote), str(where))
    assert git(where, "symbolic-ref", "HEAD") == "refs/heads/trunk"
    root = tmp_path / "wt-newcomer"
    assert okstra(where, "init", "--remote", "origin", "--worktree-root", str(root)).returncode == 0
    run_json(where, "sync", "origin")
    step = run_json(where, "task", "status", KEY)["next"]
    assert step["argv"] == ["git", "pull", "origin", "main"], step
    assert run_step(step).returncode == 0
    assert run_json(where, "task", "status", KEY)["next"]["argv"][2:4] == ["stage", "claim"]


def test_verify_target_names_no_report_path_only_another_clone_has(tmp_path: Path):
    """Trial T13: Ann and Ben each did a stage with a report; in Ben's clone verify target's
    stage table named Ann's report by the path she wrote it at, which Ben's clone has not. The
    table says where each report reads in this clone: stored with its done claim (printed
    below it), or a file here (--json reportHere)."""
    import re

    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, FREE)
    run_json(pat, "sync", "origin")
    ann, ben = team.clone("ann", "Ann"), team.clone("ben", "Ben")
    for who, n in ((ann, 1), (ben, 2)):
        run_json(who, "sync", "origin")
        claimed = run_json(who, "stage", "claim", KEY, "--remote", "origin", "--stage", str(n))
        commit_stage(Path(claimed["placements"][0]["worktreePath"]), n)
        step = run_json(who, "task", "status", KEY)["next"]
        Path(step["report"]).parent.mkdir(parents=True, exist_ok=True)
        Path(step["report"]).write_text(f"# Stage {n}\n\nby {who.name}\n")
        assert run_line(step["command"]).returncode == 0
    run_json(ben, "sync", "origin")
    run_json(ben, "integrate", KEY, "--remote", "origin")
    text = okstra(ben, "verify", "target", KEY).stdout
    table = text.split("### Stages", 1)[1].split("\n\n###", 1)[0]
    for path in re.findall(r"`([^`]*/[^`]*)`", table):
        assert Path(path).is_absolute() and Path(path).is_file(), (path, table)
    assert "stored with its done claim (stage 1 report, below)" in table, table
    assert "by ann" in text  # the report itself, as stored with the claim
    stages = run_json(ben, "verify", "target", KEY)["target"]["stages"]
    assert stages[0]["reportHere"] is None and Path(stages[1]["reportHere"]).is_file()


def ann_holds_stage_one(tmp_path: Path) -> tuple[Path, Path]:
    """Pat's approved two-stage plan on the remote, and Ann's clone holding stage 1's claim:
    her clone and the stage's worktree."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    run_json(pat, "sync", "origin")
    ann = team.clone("ann", "Ann")
    run_json(ann, "sync", "origin")
    claimed = run_json(ann, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")
    worktree = Path(claimed["placements"][0]["worktreePath"])
    return ann, worktree


def test_report_init_and_validate_name_the_step_that_records_the_report(tmp_path: Path):
    """Trial T19: report init and report validate ended with the check, naming nothing after
    it. They name the task's next step that records this report — the engine's, with the
    data as its --report — which run as printed from any folder records it."""
    ann, worktree = ann_holds_stage_one(tmp_path)
    started = okstra(worktree, "report", "init", KEY, "--type", "implementation", "--stage", "1")
    assert started.returncode == 0, started.stderr
    data = Path(run_json(ann, "task", "status", KEY)["next"]["report"].removesuffix(".md"))
    data = data.with_name(data.name + ".data.json")  # beside the report task status names
    then = f"then record it: git -C {ann} okstra stage done {KEY} --stage 1 --report {data}"
    assert started.stdout.splitlines()[-1] == then, started.stdout
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))
    checked = run_line(started.stdout.splitlines()[-2].removeprefix("then check it: "))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == then, checked.stdout
    commit_stage(worktree, 1)
    done = run_line(then.removeprefix("then record it: "))
    assert done.returncode == 0, done.stderr
    assert run_json(ann, "task", "status", KEY)["stages"][0]["state"] == "done"


def test_report_init_out_in_a_subfolder_names_that_file_in_the_steps_it_prints(tmp_path: Path):
    """report init --out FILE run in a subfolder printed `git -C CLONE okstra report validate
    FILE` (FILE relative to the subfolder, run from the clone: another file) and no line to
    record it (the step's --report is the report beside the default data, not FILE). Both name
    FILE absolute, and each, run as printed, takes that file to the stage's done."""
    ann, worktree = ann_holds_stage_one(tmp_path)
    folder = worktree / "notes"
    folder.mkdir()
    started = okstra(folder, "report", "init", KEY, "--type", "implementation", "--stage", "1",
                     "--out", "r.data.json")  # fmt: skip
    assert started.returncode == 0, started.stderr
    data = folder / "r.data.json"
    lines = started.stdout.splitlines()
    assert lines[0].startswith(f"wrote {data} "), started.stdout
    assert lines[-2] == f"then check it: git -C {ann} okstra report validate {data}", lines
    then = f"then record it: git -C {ann} okstra stage done {KEY} --stage 1 --report {data}"
    assert lines[-1] == then, started.stdout
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))
    checked = run_line(lines[-2].removeprefix("then check it: "))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == then, checked.stdout
    # report validate in the subfolder, the file named as there: the same line records it.
    here = okstra(folder, "report", "validate", "r.data.json")
    assert here.returncode == 0 and here.stdout.splitlines()[-1] == then, here.stdout
    commit_stage(worktree, 1)
    done = run_line(then.removeprefix("then record it: "))
    assert done.returncode == 0, done.stderr
    assert run_json(ann, "task", "status", KEY)["stages"][0]["state"] == "done"


def test_a_run_a_claim_starts_gets_its_manifest_and_state_file_as_run_start_does(tmp_path: Path):
    """Issue 21's run files: run start writes the run's manifest and state file; a claim,
    which starts the implementation run, made its folders only. It writes both, and the state
    file follows the run to its finish."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    run_json(pat, "sync", "origin")
    ann = team.clone("ann", "Ann")
    run_json(ann, "sync", "origin")
    claimed = run_json(ann, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")
    runs = ann / ".okstra/tasks/g/i/runs/implementation"
    manifest = json.loads((runs / "manifests/run-manifest-implementation-001.json").read_text())
    assert (manifest["taskKey"], manifest["taskType"], manifest["seq"]) == (
        KEY, "implementation", "001"
    )  # fmt: skip
    assert manifest["taskCommit"] == git(ann, "rev-parse", "refs/okstra/tasks/g/i")
    assert manifest["clone"] == git(ann, "config", "okstra.cloneId")
    assert (
        manifest["files"]["state"]
        == ".okstra/tasks/g/i/runs/implementation/state/team-state-implementation-001.json"
    )
    state = runs / "state/team-state-implementation-001.json"
    assert json.loads(state.read_text())["status"] == "running"
    commit_stage(Path(claimed["placements"][0]["worktreePath"]), 1)
    step = run_json(ann, "task", "status", KEY)["next"]
    Path(step["report"]).write_text("# Stage 1\n\ndone\n")
    assert run_line(step["command"]).returncode == 0
    assert json.loads(state.read_text())["status"] == "completed"
