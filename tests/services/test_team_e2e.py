"""Three clones finish one 4-stage task through one remote (docs/concurrency-and-sync.md, issue 10).

A planner approves; two agent clones — one on the bare remote's path, one through a real
`git daemon` on 127.0.0.1 — claim concurrently, commit and mark their stages done, twice; the
planner follows `next`: integrate, verify, record, publish, push main through the pre-push
gate; `ci check --fetch` in a fresh clone exits 0. After the planner's first commands,
every command a step runs is one the tool printed.

The steps share one world (module scope) and run in file order, each checking its part.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, isolate_git, okstra, race_in
from hooks_world import git_daemon
from reports_data import fill_prompts
from team_world import (
    BRANCHES,
    CLAIMS,
    FOUR_STAGES,
    KEY,
    TASK_REF,
    Team,
    run_json,
    run_step,
    stage_report,
    work_on,
)

from okstra_git.records.approval import APPROVALS_REF

# On one worker of a parallel run, in file order: the tests are the rounds of one team behind one
# git daemon (module-scoped).
pytestmark = pytest.mark.xdist_group("test_team_e2e")


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    root = tmp_path_factory.mktemp("team")
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(tmp_path_factory.mktemp("home"), mp)
        world = Team.make(root)
        with git_daemon(root) as url:
            world.daemon_url = url
            yield world


def test_the_planner_approves_and_publishes(team: Team):
    planner = team.clone("planner", "Pat", False, "--hooks")
    assert okstra(planner, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    (planner / "plans").mkdir()
    (planner / "plans" / "i.md").write_text(FOUR_STAGES)
    for step in (("plan", "submit", KEY, "plans/i.md"), ("plan", "approve", KEY)):
        proc = okstra(planner, *step)
        assert proc.returncode == 0, proc.stderr
    # The plan file is never committed on main: main takes only verified commits (the hook is
    # installed), and the agents follow the plan stored in the task.
    out = run_json(planner, "sync", "origin")
    assert set(out["pushed"]) == {TASK_REF, APPROVALS_REF}
    team.facts["planner"] = planner


def test_two_agents_claim_at_once_through_the_remote_and_never_share_a_stage(team: Team):
    alice = team.clone("alice", "Alice")
    bob = team.clone("bob", "Bob", True)  # over git://
    team.facts.update(alice=alice, bob=bob)
    results = race_in([alice, bob], "stage", "claim", KEY, "--remote", "origin", "--json")
    claimed = {}
    for name, proc in zip(("Alice", "Bob"), results, strict=True):
        assert proc.returncode == 0, proc.stderr
        assert "lost the race" not in proc.stderr and "--resume" not in proc.stderr
        data = json.loads(proc.stdout)
        (place,) = data["placements"]
        claimed[place["stage"]] = (name, Path(place["worktreePath"]))
    assert sorted(claimed) == [1, 2]
    team.facts["round1"] = claimed
    for stage, (name, _) in claimed.items():
        record = json.loads(git(team.remote, "show", f"{CLAIMS}stage-{stage}:claim.json"))
        assert record["user"].startswith(name) and record["status"] == "started"
    # The approval travelled with the task: neither agent recorded one of its own.
    blob = git(team.facts["planner"], "hash-object", "plans/i.md")
    (line,) = git(team.remote, "notes", "--ref", "okstra/approvals", "show", blob).splitlines()
    approval = json.loads(line)
    assert approval["approvedBy"].startswith("Pat <") and approval["method"] == "B"
    assert "recordedBy" not in approval


def finish(team: Team, stage: int, name: str, worktree: Path) -> str:
    """The agent's work on ``stage``: commit, report, ``stage done`` as the directive says."""
    clone = team.facts[name.lower()]
    assert isinstance(clone, Path)
    head = work_on(worktree, stage, name)
    report = stage_report(clone, stage, name)
    out = run_json(clone, "stage", "done", KEY, "--stage", str(stage), "--report", report)
    # Taken with --remote, so published with it: the claim and the code, in one push.
    assert out["publishedTo"] == "origin" and out["claim"]["headCommit"] == head
    assert out["runFinished"] and out["publishNote"] is None
    assert team.on_remote(f"{BRANCHES}stage-{stage}") == {f"{BRANCHES}stage-{stage}": head}
    stored = git(team.remote, "show", f"{CLAIMS}stage-{stage}:report.md")
    assert f"Stage {stage} report by {name}." in stored
    return head


def test_each_agent_finishes_its_stage_and_publishes_the_code(team: Team):
    round1 = team.facts["round1"]
    assert isinstance(round1, dict)
    team.facts["heads"] = {n: finish(team, n, who, wt) for n, (who, wt) in round1.items()}


def test_the_next_round_starts_from_the_one_task_branch_with_its_dependencies(team: Team):
    alice, bob = team.facts["alice"], team.facts["bob"]
    heads = team.facts["heads"]
    assert isinstance(heads, dict)
    results = race_in([alice, bob], "stage", "claim", KEY, "--remote", "origin", "--json")
    claimed = {}
    for name, proc in zip(("Alice", "Bob"), results, strict=True):
        assert proc.returncode == 0, proc.stderr
        (place,) = json.loads(proc.stdout)["placements"]
        # Stage 3 needs 1, stage 4 needs 2: each claim integrated its dependency into the one
        # published task branch first, and starts from it (never from one dependency's head).
        dep = place["stage"] - 2
        assert place["stackedOn"] is None
        git(team.remote, "merge-base", "--is-ancestor", heads[dep], place["baseCommit"])
        claimed[place["stage"]] = (name, Path(place["worktreePath"]))
    assert sorted(claimed) == [3, 4]
    (task_branch,) = team.on_remote(f"{BRANCHES}task").values()
    for n in (1, 2):
        git(team.remote, "merge-base", "--is-ancestor", heads[n], task_branch)
    for stage, (name, worktree) in claimed.items():
        git(worktree, "merge-base", "--is-ancestor", heads[stage - 2], "HEAD")
        heads[stage] = finish(team, stage, name, worktree)


def test_the_planner_follows_next_to_main(team: Team):
    planner = team.facts["planner"]
    heads = team.facts["heads"]
    assert isinstance(planner, Path) and isinstance(heads, dict)
    run_json(planner, "sync", "origin")

    def step() -> dict:
        return run_json(planner, "task", "status", KEY)["next"]

    def take(kind: str, *argv: str) -> dict:
        now = step()
        assert now["kind"] == kind and now["argv"][: len(argv)] == list(argv), now
        proc = run_step(now)
        assert proc.returncode == 0, (now, proc.stderr)
        return now

    # This clone never claimed: integrate makes its task worktree at the published branch and
    # merges the stages it lacks.
    take("run", "git", "okstra", "integrate", KEY, "--remote", "origin")
    take("run", "git", "okstra", "run", "start", KEY, "--type", "final-verification")
    verifying = step()
    assert verifying["kind"] == "work" and not verifying["commit"]
    target = run_json(planner, "verify", "target", KEY)["target"]
    reports = {s["stage"]: s["report"] for s in target["stages"]}
    for stage, (name, _) in {**team.facts["round1"]}.items():  # type: ignore[dict-item]
        assert f"Stage {stage} report by {name}." in reports[stage]
    assert all(reports.values())
    task_wt = Path(target["worktree"])
    assert verifying["worktree"] == str(task_wt)
    # The verifying run's report data, started from the task's records with its verdict,
    # then its prompts filled in.
    data = Path(run_json(task_wt, "report", "init", KEY, "--verdict", "accepted")["path"])
    Path(verifying["report"]).write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))
    take("work", "git", "okstra", "verify", "record", KEY)
    # The finish goes out with the verdict it routed on (for CI, the server gate and the other
    # clones), in one push: no sync step is left between it and the landing.
    take("run", "git", "okstra", "run", "finish", KEY, "--type", "final-verification")
    pushed = take("human", "git", "push", "origin")  # through the pre-push gate of init --hooks
    assert pushed["argv"][3] == f"{target['head']}:refs/heads/main"
    assert git(team.remote, "rev-parse", "main") == target["head"]
    for head in heads.values():
        git(team.remote, "merge-base", "--is-ancestor", head, "main")
    assert step()["argv"][2:] == ["run", "start", KEY, "--type", "release-handoff", "--remote",
                                  "origin"]  # fmt: skip


def test_ci_check_in_a_fresh_clone_passes(team: Team):
    fresh = team.root / "ci"
    git(team.root, "clone", "-q", f"{team.daemon_url}/remote.git", str(fresh))
    proc = okstra(fresh, "ci", "check", "--fetch", "origin")
    assert proc.returncode == 0, proc.stderr + proc.stdout
