"""`task status` (docs/concurrency-and-sync.md): one overview and the exact next command — followed
verbatim here from plan to release-handoff — and phase routing: `run start --type release-handoff`
needs an accepted whole-task verdict on the task's HEAD, `--type final-verification` runs the
gate."""

from __future__ import annotations

import json
import shlex
import socket
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import pair
from sync_world import sync_json
from task_world import Task, ok, report
from team_world import run_step
from verify_world import KEY

from okstra_git.logic import nextstep


def status(repo: Path) -> dict:
    return ok(repo, "task", "status", KEY)


def run_next(repo: Path) -> dict:
    """Run the command `task status` gives as next, its argv in its cwd; the new status."""
    step = status(repo)["next"]
    proc = run_step(step)
    assert proc.returncode == 0, (step, proc.stderr)
    return status(repo)


@pytest.fixture
def task(repo: Path) -> Task:
    return Task(repo)


def test_following_next_takes_a_task_from_its_plan_to_release_handoff(task: Task, tmp_path: Path):
    clone = str(task.repo.resolve())
    first = status(task.repo)
    assert first["plan"]["approved"] is True and first["plan"]["method"] == "B"
    assert [(s["stage"], s["state"]) for s in first["stages"]] == [(1, "ready"), (2, "ready")]
    assert first["next"]["kind"] == "run" and first["next"]["cwd"] == clone
    assert first["next"]["argv"] == ["git", "okstra", "stage", "claim", KEY]
    assert first["next"]["command"] == f"git -C {clone} okstra stage claim {KEY}"
    assert first["verdict"] is None and first["remoteLag"] == []

    claimed = run_next(task.repo)
    (one, two) = claimed["stages"]
    assert one["state"] == "started" and two["state"] == "started"  # one batch of two
    holder = one["holder"]
    assert holder.pop("clone") == git(task.repo, "config", "okstra.cloneId")
    assert holder == {
        "host": socket.gethostname(),
        "user": "Test User <test@example.invalid>",
        "runId": "implementation-001",
        "mine": True,
    }
    step = claimed["next"]
    report_of = {1: step["report"]}
    assert (step["kind"], step["stages"], step["commit"]) == ("work", [1], True)
    assert step["worktree"] == one["worktree"] and Path(step["report"]).is_absolute()
    assert step["argv"] == ["git", "okstra", "stage", "done", KEY, "--stage", "1", "--report",
                            step["report"]]  # fmt: skip
    (also,) = step["also"]
    assert shlex.split(also)[:7] == ["git", "-C", clone, "okstra", "stage", "done", KEY]
    for n in (1, 2):
        step = status(task.repo)["next"]
        assert step["kind"] == "work" and step["stages"] == [n]
        report_of[n] = step["report"]
        wt = Path(step["worktree"])
        (wt / "src").mkdir(exist_ok=True)
        (wt / "src" / f"stage{n}.py").write_text(f"VALUE = {n}\n")
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", f"stage {n}")
        Path(step["report"]).parent.mkdir(parents=True, exist_ok=True)
        Path(step["report"]).write_text(f"stage {n} report\n")
        assert run_step(step).returncode == 0
    assert report_of[1] != report_of[2]

    done = status(task.repo)
    task_wt = Path(done["taskWorktree"]["path"])
    assert [(s["state"], s["merged"]) for s in done["stages"]] == [("done", False)] * 2
    assert done["stages"][0]["doneCommit"] == git(task.repo, "rev-parse", "okstra/grp/feat/stage-1")
    assert done["next"]["kind"] == "run" and done["next"]["who"] == "agent"
    assert done["next"]["argv"] == ["git", "okstra", "integrate", KEY]
    merged = run_next(task.repo)
    assert [s["merged"] for s in merged["stages"]] == [True, True]
    subjects = git(task_wt, "log", "--format=%s", "--merges").splitlines()
    assert [s.split(" (")[0] for s in subjects] == ["integrate stage 2", "integrate stage 1"]
    assert "integrate stage(s) 1, 2 into okstra/grp/feat/task" in git(
        task.repo, "log", "-1", "--format=%s", "refs/okstra/tasks/grp/feat"
    )
    assert merged["next"]["argv"][2:] == ["run", "start", KEY, "--type", "final-verification"]

    verifying = run_next(task.repo)
    assert verifying["phase"]["latestRun"]["taskType"] == "final-verification"
    step = verifying["next"]
    assert (step["kind"], step["commit"], step["worktree"]) == ("work", False, str(task_wt))
    assert step["argv"][2:] == ["verify", "record", KEY, "--report", step["report"]]
    head = git(task_wt, "rev-parse", "HEAD")
    report(task.repo, Path(step["report"]))
    assert run_step(step).returncode == 0

    recorded = status(task.repo)
    assert recorded["verdict"]["verdict"] == "accepted" and recorded["verdict"]["opensGate"]
    assert recorded["verdict"]["recordedOn"] == head
    finish = ["run", "finish", KEY, "--type", "final-verification", "--seq", "001", "--status"]
    assert recorded["next"]["argv"][2:10] == finish
    verified = run_next(task.repo)
    assert verified["next"]["argv"][2:] == ["run", "start", KEY, "--type", "release-handoff"]
    handing = run_next(task.repo)
    assert handing["phase"]["latestRun"]["taskType"] == "release-handoff"
    step = handing["next"]
    assert step["kind"] == "work" and step["argv"][2:6] == ["run", "finish", KEY, "--type"]
    Path(step["report"]).write_text("the release handoff report\n")
    text = okstra(task.repo, "task", "status", KEY).stdout
    assert f"task {KEY} — active" in text
    assert "verdict: accepted (whole-task)" in text and "opens the gate" in text
    assert "  1 done" in text and "integrated" in text
    assert f"next (work, agent): git -C {clone} okstra run finish" in text
    finished = run_next(task.repo)
    assert finished["next"]["kind"] == "done" and finished["next"]["argv"] is None


def test_release_handoff_needs_an_accepted_whole_task_verdict_on_the_tasks_head(
    task: Task, tmp_path: Path
):
    handoff = ("run", "start", KEY, "--type", "release-handoff")
    proc = okstra(task.repo, *handoff, "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert "has no task branch" in out["error"]
    # Runs from any folder (it said `git okstra run start …`, which ran only in the clone).
    clone = shlex.quote(str(task.repo.resolve()))
    assert f"git -C {clone} okstra run start {KEY} --type final-verification" in out["error"]
    assert out["hint"] == out["next"]["command"]  # the task's next step: its stages first
    task.implement(1)
    task.implement(2)
    task.merge(1)
    head = task.merge(2)
    proc = okstra(task.repo, *handoff)
    assert proc.returncode == 1
    assert f"accepted whole-task verdict on the task's HEAD {head[:12]}" in proc.stderr
    assert "found: no verdict" in proc.stderr

    blocked = report(task.repo, tmp_path / "blocked.json", token="blocked")
    ok(task.repo, "verify", "record", KEY, "--verdict", "blocked", "--report", blocked)
    proc = okstra(task.repo, *handoff)
    assert proc.returncode == 1 and "found: blocked whole-task verdict" in proc.stderr
    single = report(task.repo, tmp_path / "one.json", stage=1)
    ok(task.repo, "verify", "record", KEY, "--stage", "1", "--verdict", "accepted", "--report",
       single)  # fmt: skip
    assert okstra(task.repo, *handoff).returncode == 1  # single-stage never opens it

    accepted = report(task.repo, tmp_path / "data.json")
    ok(task.repo, "verify", "record", KEY, "--verdict", "accepted", "--report", accepted)
    assert task.task_wt is not None
    (task.task_wt / "late.txt").write_text("after the verdict\n")
    git(task.task_wt, "add", "late.txt")
    git(task.task_wt, "commit", "-q", "-m", "a change after the verdict")
    proc = okstra(task.repo, *handoff)
    assert proc.returncode == 1 and "found: no verdict" in proc.stderr  # HEAD moved on
    git(task.task_wt, "reset", "-q", "--hard", head)
    assert okstra(task.repo, *handoff).returncode == 0


def test_final_verification_runs_the_gate_and_refuses_with_its_texts(task: Task):
    fv = ("run", "start", KEY, "--type", "final-verification")
    _, head1 = task.implement(1)
    task.merge(1)
    proc = okstra(task.repo, *fv)
    assert proc.returncode == 1
    step = json.loads(okstra(task.repo, "task", "status", KEY, "--json").stdout)["next"]
    assert proc.stderr.splitlines() == [
        "final-verification(whole-task): stage 2 not done — run implementation --stage 2 first",
        f"hint: {step['command']}",  # the task's next step: claim stage 2
    ]
    assert step["argv"][2:4] == ["stage", "claim"]
    assert okstra(task.repo, *fv, "--stage", "1").returncode == 0  # single-stage: its gate
    task.implement(2)
    proc = okstra(task.repo, *fv, "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["refusals"][0].startswith(
        "final-verification(whole-task): stage 2 done commit"
    )
    assert okstra(task.repo, "run", "start", KEY, "--type", "error-analysis", "--stage", "1")\
        .returncode == 2  # fmt: skip
    task.merge(2)
    assert okstra(task.repo, *fv).returncode == 0
    assert head1


def test_next_is_sync_when_a_fetch_brought_newer_records(tmp_path: Path):
    a, _remote = pair(tmp_path, "a")
    assert okstra(a, "task", "new", KEY, "--type", "error-analysis").returncode == 0
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    assert okstra(b, "init", "--remote", "origin").returncode == 0
    git(b, "fetch", "-q")
    proc = okstra(b, "task", "status", KEY, "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["hint"] == f"git -C {b.resolve()} okstra sync origin"
    sync_json(b)
    # The task is shared through origin: the run starts there, so no other clone starts it too.
    assert status(b)["next"]["argv"][2:] == [
        "run", "start", KEY, "--type", "error-analysis", "--remote", "origin"
    ]  # fmt: skip
    assert okstra(a, "run", "start", KEY, "--type", "error-analysis").returncode == 0
    sync_json(a)
    git(b, "fetch", "-q")
    behind = status(b)
    assert behind["next"]["argv"] == ["git", "okstra", "sync", "origin"]
    assert behind["remoteLag"][0]["state"] == "behind"


def _impl(**fields: object) -> nextstep.Situation:
    """An implementation task with an approved plan, in the clone at /c."""
    return nextstep.Situation(
        "p:g:i", "active", "implementation", plan_submitted=True, clone_dir="/c", **fields
    )


B = "implementation-001 by B on h (clone 00000000000000bb)"
HELD = {"who": "B on h (clone 00000000000000bb)", "run_id": "implementation-001"}
"""A stage view held by B's claim: its holder is B."""


@pytest.mark.parametrize(
    ("situation", "kind", "line", "who"),
    [
        (nextstep.Situation("p:g:i", "done", "done"), "done", None, "none"),
        (
            nextstep.Situation("p:g:i", "active", "implementation", clone_dir="/c"),
            "human",
            None,
            "human",
        ),
        (
            nextstep.Situation(
                "p:g:i", "active", "implementation", latest_report="/c/r.md", clone_dir="/c"
            ),
            "run",
            "git -C /c okstra plan submit p:g:i /c/r.md",
            "agent",
        ),
        (
            _impl(plan_path="/c/docs/p.md", approval_reasons=("marker-missing",)),
            "human",
            "git -C /c okstra plan approve p:g:i",
            "human",
        ),
        (
            _impl(plan_path="/c/docs/p.md", approval_reasons=("blockers-open",)),
            "human",
            "git -C /c okstra clarify status /c/docs/p.md",
            "human",
        ),
        (
            _impl(remote="origin", stages=(nextstep.StageView(1, "expired", **HELD),)),
            "run",
            "git -C /c okstra stage claim p:g:i --take-over-expired --remote origin",
            "agent",
        ),
        (
            _impl(remote="origin", stages=(nextstep.StageView(1, "ready"),)),
            "run",
            "git -C /c okstra stage claim p:g:i --remote origin",
            "agent",
        ),
        (
            _impl(remote="origin", stages=(nextstep.StageView(1, "started", **HELD),)),
            "wait",
            "git -C /c okstra sync origin",
            B,
        ),
        (
            # A done stage the published task branch lacks (its commit not even here yet):
            # integrate fetches it and merges it.
            _impl(
                remote="origin",
                stages=(
                    nextstep.StageView(1, "done", merged=None, integrated=False),
                    nextstep.StageView(2, "started", **HELD),
                ),
            ),
            "run",
            "git -C /c okstra integrate p:g:i --remote origin",
            "agent",
        ),
        (
            _impl(
                remote="origin",
                task_worktree="/w/task",
                task_branch="behind",
                stages=(nextstep.StageView(1, "done", merged=False, integrated=True),),
            ),
            "run",
            "git -C /c okstra integrate p:g:i --remote origin",
            "agent",
        ),
        (
            _impl(
                remote="origin",
                task_worktree="/w/task",
                task_branch="same",
                stages=(nextstep.StageView(1, "done", merged=True, integrated=True),),
            ),
            "run",
            "git -C /c okstra run start p:g:i --type final-verification --remote origin",
            "agent",
        ),
        (
            _impl(
                task_worktree="/w/task", merging=("a.py",), stages=(nextstep.StageView(1, "done"),)
            ),
            "human",
            "git -C /w/task commit --no-edit",
            "human",
        ),
        (
            _impl(
                stages=(
                    nextstep.StageView(
                        1, "started", mine=True, worktree="/w/s1", report="/c/.okstra/s1.md"
                    ),
                )
            ),
            "work",
            "git -C /c okstra stage done p:g:i --stage 1 --report /c/.okstra/s1.md",
            "agent",
        ),
        (
            _impl(
                stages=(
                    nextstep.StageView(
                        1,
                        "started",
                        mine=True,
                        worktree="/w/s1",
                        worktree_here=False,
                        run_id="implementation-001",
                    ),
                )
            ),
            "run",
            "git -C /c okstra stage claim p:g:i --resume implementation-001",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "error-analysis",
                running=("error-analysis", "002"),
                run_report="/c/.okstra/r it's.md",
                clone_dir="/c",
            ),
            "work",
            "git -C /c okstra run finish p:g:i --type error-analysis --seq 002 --status "
            "completed --report '/c/.okstra/r it'\"'\"'s.md'",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "final-verification",
                running=("final-verification", "001"),
                running_by="B <b@x>",
                running_clone="00000000000000bb",
                remote="origin",
                clone_dir="/c",
            ),
            "wait",
            "git -C /c okstra sync origin",
            "B <b@x> (clone 00000000000000bb)",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "release-handoff",
                remote="origin",
                task_branch="same",
                task_worktree="/c/wt",
                verdict_opens=True,
                verdict_unpublished=True,
                clone_dir="/c",
            ),
            "run",
            "git -C /c okstra sync origin",
            "agent",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "release-handoff",
                remote="origin",
                task_branch="same",
                task_worktree="/c/wt",
                verdict_opens=True,
                main_push=("git", "push", "origin", "abc:refs/heads/main"),
                clone_dir="/c",
            ),
            "human",
            "git -C /c push origin abc:refs/heads/main",
            "human",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "release-handoff",
                remote="origin",
                task_branch="same",
                task_worktree="/c/wt",
                verdict_opens=True,
                main_moved="refs/remotes/origin/main",
                clone_dir="/c",
            ),
            "human",
            "git -C /c/wt merge --no-edit origin/main",
            "human",
        ),
        (
            nextstep.Situation(
                "p:g:i",
                "active",
                "release-handoff",
                remote="origin",
                task_branch="ahead",
                task_worktree="/c/wt",
                verdict_opens=True,
                clone_dir="/c",
            ),
            "run",
            "git -C /c okstra integrate p:g:i --remote origin",
            "agent",
        ),
    ],
)
def test_next_step_rules(situation: nextstep.Situation, kind: str, line: str | None, who: str):
    step = nextstep.next_step(situation)
    assert (step.kind, step.command, step.who) == (kind, line, who)
    assert step.kind in nextstep.KINDS and step.cwd.startswith("/")
    if step.argv is not None:
        assert shlex.split(step.command or "")[3:] == list(step.argv[1:])


def test_open_or_answered_clarification_items_make_the_turn_around_the_first_next_step(
    repo: Path,
):
    """Seed 002: while the latest report's §5 has rows open or answered, the first next step
    is the clarification turn-around, whatever phase would come next; resolved or obsolete
    rows leave the phase's own next step."""
    assert okstra(repo, "task", "new", KEY, "--type", "error-analysis").returncode == 0
    started = ok(repo, "run", "start", KEY, "--type", "error-analysis")
    path = repo / started["run"]["paths"]["report"]
    rows = (
        "| C-001 | T-1 | decision | Which cache? | a/b | next-phase | {0} | |\n"
        "| C-002 | T-1 | material | The worker log | a file | none | resolved | x.log |\n"
    )
    header = (
        "# Error analysis\n\n## 5. Clarification Items\n\n"
        "| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    path.write_text(header + rows.format("answered"), "utf-8")
    finish = ["run", "finish", KEY, "--type", "error-analysis", "--seq", "001"]
    ok(repo, *finish, "--status", "completed", "--report", str(path))
    step = status(repo)["next"]
    assert step["argv"] == ["git", "okstra", "clarify", "resume", KEY] and step["who"] == "human"
    assert "1 clarification item(s) open or answered" in step["why"]
    assert step["also"] == [f"git -C {repo.resolve()} okstra run start {KEY} --type error-analysis"]
    # The turn-around the step names works here, and its rerun is the command it prints.
    resumed = ok(repo, "clarify", "resume", KEY, "--no-edit")
    assert resumed["command"] == f"git okstra run start {KEY} --type error-analysis"
    # Once the rows are settled the phase's own next step comes back.
    path.write_text(header + rows.format("obsolete"), "utf-8")
    step = status(repo)["next"]
    assert step["argv"][:4] == ["git", "okstra", "run", "start"], step
    assert "--type" in step["argv"] and "clarify" not in step["argv"]


def test_the_turn_around_rule_comes_after_a_running_run():
    running = nextstep.Situation(
        "p:g:i",
        "active",
        "error-analysis",
        running=("error-analysis", "002"),
        run_report="/c/r.md",
        clarify_open=2,
        clarify_phase="error-analysis",
        clone_dir="/c",
    )
    assert nextstep.next_step(running).kind == "work"
    waiting = running.replace(running=None)
    step = nextstep.next_step(waiting)
    assert (step.kind, step.command) == ("human", "git -C /c okstra clarify resume p:g:i")
