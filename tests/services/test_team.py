"""Several clones, one remote (docs/concurrency-and-sync.md): each bullet of issue 10's "what broke"
list that the team-code work owns, reproduced with real clones and real pushes, now giving the right
answer."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import pair
from plans import plan_text
from team_world import (
    BRANCHES,
    CLAIMS,
    FOUR_STAGES,
    KEY,
    TASK_REF,
    TWO_FREE,
    Team,
    approve_here,
    run_json,
    run_line,
    work_on,
)

from okstra_git.core.errors import Refused
from okstra_git.records.approval import APPROVALS_REF
from okstra_git.services import layout, plans, tasks
from okstra_git.services.claims import remote as remote_claims
from okstra_git.services.context import open_context
from okstra_git.services.sync import engine as sync


def test_two_clones_of_one_project_on_one_machine_never_share_a_worktree_folder(tmp_path: Path):
    # Same folder name, same project id: only the clone tells them apart.
    a, _ = pair(tmp_path, "one/calc")
    b, _ = pair(tmp_path, "two/calc")
    approve_here(a, TWO_FREE)
    assert okstra(a, "sync", "origin").returncode == 0
    assert okstra(b, "sync", "origin").returncode == 0
    roots = [layout.default_root(open_context(c)) for c in (a, b)]
    assert roots[0] != roots[1]
    for clone in (a, b):
        proc = okstra(clone, "stage", "claim", KEY, "--stage", "1")
        assert proc.returncode == 0, proc.stderr
    for clone, root in zip((a, b), roots, strict=True):
        stage = root / "p" / "g" / "i" / "stage-1"
        assert Path(git(stage, "rev-parse", "--git-common-dir")).resolve() == (clone / ".git")

    # A clone pointed at the other's root by hand is told whose folder it met, and never to
    # remove it.
    git(b, "config", "okstra.worktreeRoot", str(roots[0]))
    git(b, "worktree", "remove", "--force", str(roots[1] / "p" / "g" / "i" / "task"))
    proc = okstra(b, "stage", "claim", KEY, "--stage", "2")
    assert proc.returncode == 1
    assert f"is a worktree of another repository ({(a / '.git').resolve()})" in proc.stderr
    assert "okstra leaves it alone" in proc.stderr
    assert "git config okstra.worktreeRoot" in proc.stderr
    assert "remove" not in proc.stderr.replace("okstra leaves", "")
    assert (roots[0] / "p" / "g" / "i" / "task").is_dir()


# -- approvals travel with the first claim, credited to whoever approved ----------------------


def test_an_approval_travels_with_the_first_claim_and_credits_the_approver(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, FOUR_STAGES)  # method B, and nothing synced: only the claim publishes
    run_json(pat, "stage", "claim", KEY, "--remote", "origin", "--no-worktree")
    assert set(team.on_remote(APPROVALS_REF)) == {APPROVALS_REF}
    alice = team.clone("alice", "Alice")
    run_json(alice, "stage", "claim", KEY, "--remote", "origin")
    blob = git(pat, "hash-object", "plans/i.md")
    (line,) = git(team.remote, "notes", "--ref", "okstra/approvals", "show", blob).splitlines()
    assert json.loads(line)["approvedBy"].startswith("Pat <")
    assert "plan approve" not in git(team.remote, "log", "--format=%s", "-1", TASK_REF)


def hand_ticked(team: Team, ticker: str) -> Path:
    """Pat submits the plan unticked; ``ticker`` ticks it by hand and pushes main, then
    publishes the task. Nobody runs ``plan approve``: the first claim records it (method A)."""
    pat = team.clone("pat", "Pat")
    ctx = open_context(pat)
    task_key = ctx.key(KEY)
    tasks.new_task(ctx, task_key, "implementation-planning", "feature", None)
    plan = pat / "plans" / "i.md"
    plan.parent.mkdir()
    plan.write_text(FOUR_STAGES.replace("- [x] Approved", "- [ ] Approved"))
    plans.submit_plan(ctx, task_key, str(plan))
    plan.write_text(FOUR_STAGES)
    git(pat, "add", "plans")
    env = {"GIT_AUTHOR_NAME": ticker, "GIT_AUTHOR_EMAIL": f"{ticker.lower()}@example.invalid"}
    subprocess.run(
        ["git", "commit", "-q", "-m", "tick"], cwd=pat, check=True, env={**os.environ, **env}
    )
    git(pat, "push", "-q", "origin", "main")
    run_json(pat, "sync", "origin")
    return pat


def test_a_hand_approval_is_credited_to_who_ticked_not_to_the_claimer(tmp_path: Path):
    team = Team.make(tmp_path)
    hand_ticked(team, "Tina")
    alice = team.clone("alice", "Alice")
    run_json(alice, "stage", "claim", KEY, "--remote", "origin")
    blob = git(alice, "hash-object", "plans/i.md")
    (line,) = git(team.remote, "notes", "--ref", "okstra/approvals", "show", blob).splitlines()
    record = json.loads(line)
    assert record["method"] == "A" and record["approvedBy"] == "Tina <tina@example.invalid>"
    assert record["recordedBy"].startswith("Alice <")
    # The approval event and the claim's run start went out together, in that order.
    subjects = git(team.remote, "log", "--format=%s", "-2", TASK_REF).splitlines()
    assert subjects[0].startswith("run start implementation 001")
    assert "method A, ticked by Tina <tina@example.invalid>" in subjects[1]


def test_a_claim_that_fails_leaves_no_approval_event_for_sync_to_call_diverged(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = hand_ticked(team, "Tina")
    alice = team.clone("alice", "Alice")
    run_json(alice, "sync", "origin")
    before = git(alice, "for-each-ref", "refs/okstra/", "refs/notes/")
    # Stage 3 waits for stage 1: refused after the approval was judged recordable.
    proc = okstra(alice, "stage", "claim", KEY, "--stage", "3", "--remote", "origin")
    assert proc.returncode == 1 and "waiting for stage(s) 1" in proc.stderr
    assert git(alice, "for-each-ref", "refs/okstra/", "refs/notes/") == before
    run_json(pat, "stage", "claim", KEY, "--remote", "origin", "--no-worktree")  # moves the task
    out = run_json(alice, "sync", "origin")
    assert out["diverged"] == []


# -- code travels with claims ------------------------------------------------------------------


def test_a_missing_done_commit_is_named_at_once_and_sync_on_its_clone_publishes_it(
    tmp_path: Path,
):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, FOUR_STAGES)
    run_json(pat, "sync", "origin")
    bob = team.clone("bob", "Bob")
    run_json(bob, "sync", "origin")
    placed = run_json(bob, "stage", "claim", KEY, "--stage", "1")["placements"][0]
    head = work_on(Path(placed["worktreePath"]), 1, "Bob")
    run_json(bob, "stage", "done", KEY, "--stage", "1")  # claimed here: nothing published
    # Plain git publishes the records but not the code (an old client, a hand push).
    git(bob, "push", "-q", "origin", "refs/okstra/*:refs/okstra/*")
    alice = team.clone("alice", "Alice")
    proc = okstra(alice, "stage", "claim", KEY, "--stage", "3", "--remote", "origin")
    assert proc.returncode == 1, proc.stderr
    assert f"done commit {head} is neither in this clone nor on origin" in proc.stderr
    assert "(implementation-001, Bob <bob@example.invalid> on " in proc.stderr
    assert "publishes it with: git okstra sync origin" in proc.stderr
    assert "race" not in proc.stderr and "attempts" not in proc.stderr
    assert team.on_remote(CLAIMS) == {
        k: v for k, v in team.on_remote(CLAIMS).items() if k.endswith("stage-1")
    }
    # Bob's sync publishes the done stage's branch at its done commit.
    out = run_json(bob, "sync", "origin")
    assert {b["ref"]: b["state"] for b in out["branches"]}[f"{BRANCHES}stage-1"] == "ahead"
    assert team.on_remote(f"{BRANCHES}stage-1") == {f"{BRANCHES}stage-1": head}
    claimed = run_json(alice, "stage", "claim", KEY, "--stage", "3", "--remote", "origin")
    # Its base is the task branch with stage 1 integrated (a merge commit naming the stage),
    # published with the claim's own task event: Bob's next claim starts from it too.
    base = claimed["placements"][0]["baseCommit"]
    git(alice, "merge-base", "--is-ancestor", head, base)
    assert team.on_remote(f"{BRANCHES}task") == {f"{BRANCHES}task": base}


def test_a_clone_without_the_first_claimers_base_claims_what_follows_its_own_stage(
    tmp_path: Path,
):
    """The implementation base is the first claimer's task worktree HEAD: here Ann's main with
    her unpublished plan commit, which Bob's clone never gets while Ann's stage is open. Bob's
    claim of a stage after his own done stage asks whether the task branch holds that stage
    (a walk that hid the base Bob lacks: 'object not found', the two work loops' flake)."""
    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    bob = team.clone("bob", "Bob")
    approve_here(ann, FOUR_STAGES)  # commits the plan on Ann's main: never pushed
    run_json(ann, "sync", "origin")
    run_json(bob, "sync", "origin")
    first = run_json(ann, "stage", "claim", KEY, "--stage", "1", "--remote", "origin")
    base = first["implementationBaseCommit"]
    assert base == git(ann, "rev-parse", "main")
    placed = run_json(bob, "stage", "claim", KEY, "--stage", "2", "--remote", "origin")
    head = work_on(Path(placed["placements"][0]["worktreePath"]), 2, "Bob")
    run_json(bob, "stage", "done", KEY, "--stage", "2", "--remote", "origin")
    assert subprocess.run(["git", "cat-file", "-e", base], cwd=bob).returncode != 0
    claimed = run_json(bob, "stage", "claim", KEY, "--stage", "4", "--remote", "origin")
    git(bob, "merge-base", "--is-ancestor", head, claimed["placements"][0]["baseCommit"])
    assert run_json(bob, "task", "status", KEY)["stages"][3]["state"] == "started"


def test_a_local_claim_missing_a_commit_says_which_sync_fetches_it(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, FOUR_STAGES)
    placed = run_json(pat, "stage", "claim", KEY, "--stage", "1", "--remote", "origin")
    head = work_on(Path(placed["placements"][0]["worktreePath"]), 1, "Pat")
    run_json(pat, "stage", "done", KEY, "--stage", "1")
    alice = team.clone("alice", "Alice")
    # The records only, by plain git: the done commit is named but not here.
    git(alice, "fetch", "-q", "origin", "refs/okstra/tasks/*:refs/okstra/tasks/*",
        "refs/okstra/claims/*:refs/okstra/claims/*")  # fmt: skip
    proc = okstra(alice, "stage", "claim", KEY, "--stage", "3", "--json")
    assert proc.returncode == 1
    failure = json.loads(proc.stdout)
    assert f"commit {head[:12]} of stage 1 is missing here" in failure["error"]
    assert failure["hint"] == f"git -C {alice} okstra sync origin"
    assert run_line(failure["hint"]).returncode == 0
    run_json(alice, "stage", "claim", KEY, "--stage", "3")
    # A plain fetch after init --remote brings the code into the tracking namespace only.
    git(alice, "fetch", "-q", "origin")
    assert git(alice, "rev-parse", "refs/okstra-remotes/origin/branches/g/i/stage-1") == head
    assert git(alice, "for-each-ref", "refs/okstra/branches/") == ""


# -- honest messages ---------------------------------------------------------------------------


def test_a_stage_held_by_another_clone_names_it_and_is_never_offered_for_resume(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, plan_text([(1, [], ["a.py"])], steps=5))
    run_json(pat, "stage", "claim", KEY, "--remote", "origin", "--lease", "2h")
    alice = team.clone("alice", "Alice")
    proc = okstra(alice, "stage", "claim", KEY, "--remote", "origin")
    assert proc.returncode == 1
    assert "stage 1: held by run implementation-001 (Pat <pat@example.invalid> on " in proc.stderr
    assert ", lease until 20" in proc.stderr
    assert "--resume" not in proc.stderr
    proc = okstra(alice, "stage", "claim", KEY, "--resume", "implementation-001")
    assert proc.returncode == 1 and "is not this clone's" in proc.stderr
    assert not (team.root / "wt-alice" / "p").exists()
    # stage done of a stage the plan does not have says so.
    proc = okstra(alice, "stage", "done", KEY, "--stage", "9")
    assert proc.returncode == 2
    assert "the plan of p:g:i has no stage 9 (stages: 1)" in proc.stderr


def test_claims_follow_the_plan_stored_in_the_task_and_name_a_stale_checkout(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    old = plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])], steps=5)
    approve_here(pat, old)
    first = git(pat, "rev-parse", "HEAD")
    new = plan_text([(1, [], ["a.py"]), (2, [1], ["b.py"]), (3, [], ["c.py"])], steps=5)
    (pat / "plans" / "i.md").write_text(new)
    ctx = open_context(pat)
    plans.submit_plan(ctx, ctx.key(KEY), str(pat / "plans" / "i.md"))
    git(pat, "commit", "-q", "-am", "plan 2")
    git(pat, "checkout", "-q", first)  # the checkout goes back to plan-001
    proc = okstra(pat, "stage", "claim", KEY, "--stage", "3")
    assert proc.returncode == 1
    assert "plans/i.md in this checkout is plan-001 of p:g:i" in proc.stderr
    assert "superseded by plan-002" in proc.stderr
    git(pat, "checkout", "-q", "main")
    run_json(pat, "plan", "approve", KEY)
    git(pat, "checkout", "-q", first)
    out = run_json(pat, "stage", "claim", KEY, "--stage", "3", "--no-worktree")
    assert out["stages"] == [3] and "superseded by plan-002" in out["notices"][0]
    state = json.loads(git(pat, "show", f"{TASK_REF}:task.json"))
    assert state["latestPlan"]["seq"] == "002"


def test_a_done_after_another_clone_took_the_stage_over_is_undone_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, plan_text([(1, [], ["a.py"])], steps=5))
    claimed = run_json(pat, "stage", "claim", KEY, "--remote", "origin", "--lease", "1s")
    work_on(Path(claimed["placements"][0]["worktreePath"]), 1, "Pat")
    time.sleep(1.2)
    alice = team.clone("alice", "Alice")
    run_json(alice, "stage", "claim", KEY, "--remote", "origin", "--take-over-expired")
    on_remote = team.on_remote("refs/okstra/")
    mine = git(pat, "rev-parse", f"{CLAIMS}stage-1")
    # Pat's first fetch "misses" the take-over (it lands between Pat's fetch and push).
    real_pull, calls = sync.pull, []

    def pull(ctx, remote):
        calls.append(git(pat, "rev-parse", f"{CLAIMS}stage-1"))
        return sync.SyncReport(remote) if len(calls) == 1 else real_pull(ctx, remote)

    monkeypatch.setattr(remote_claims, "pull", pull)
    ctx = open_context(pat)
    with pytest.raises(Refused, match="held by run implementation-002 \\(Alice <alice@"):
        remote_claims.done_via_remote(ctx, None, ctx.key(KEY), 1)
    # The leased push landed nothing; the local done was put back before the fresh fetch.
    assert calls == [mine, mine]
    assert team.on_remote("refs/okstra/") == on_remote
    assert git(pat, "rev-parse", f"{CLAIMS}stage-1") == on_remote[f"{CLAIMS}stage-1"]
    # And through the CLI, a plain rerun says the same without touching anything.
    proc = okstra(pat, "stage", "done", KEY, "--stage", "1")
    assert proc.returncode == 1 and "not by this clone" in proc.stderr
    assert team.on_remote("refs/okstra/") == on_remote


def test_stage_done_remote_publishes_a_locally_taken_claim_with_its_code(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, plan_text([(1, [], ["a.py"])], steps=5))
    placed = run_json(pat, "stage", "claim", KEY)["placements"][0]  # nothing published
    head = work_on(Path(placed["worktreePath"]), 1, "Pat")
    assert team.on_remote("refs/okstra/") == {}
    # A report travels with the claim and is printed on other clones: no terminal escapes.
    (pat / "r.md").write_text("# Stage 1\n\x1b[2J cleared\n")
    proc = okstra(
        pat, "stage", "done", KEY, "--stage", "1", "--remote", "origin", "--report", "r.md"
    )
    assert proc.returncode == 2 and "--report r.md: holds a control character" in proc.stderr
    assert team.on_remote("refs/okstra/") == {}
    out = run_json(pat, "stage", "done", KEY, "--stage", "1", "--remote", "origin")
    assert out["publishedTo"] == "origin"
    # One push: the whole claim chain, the code at its done head and the task naming the run.
    assert set(team.on_remote("refs/okstra/")) == {
        f"{CLAIMS}stage-1",
        f"{BRANCHES}stage-1",
        TASK_REF,
    }
    assert team.on_remote(TASK_REF)[TASK_REF] == git(pat, "rev-parse", TASK_REF)
    assert team.on_remote(f"{BRANCHES}stage-1")[f"{BRANCHES}stage-1"] == head
    record = json.loads(git(team.remote, "show", f"{CLAIMS}stage-1:claim.json"))
    assert record["status"] == "done" and record["headCommit"] == head


def test_offline_a_claim_taken_through_the_remote_is_still_done_here_and_sync_publishes_it(
    tmp_path: Path,
):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, plan_text([(1, [], ["a.py"])], steps=5))
    placed = run_json(pat, "stage", "claim", KEY, "--remote", "origin")["placements"][0]
    head = work_on(Path(placed["worktreePath"]), 1, "Pat")
    away = team.remote.rename(tmp_path / "unplugged.git")
    before = git(pat, "for-each-ref", "refs/okstra/")
    asked = okstra(pat, "stage", "done", KEY, "--stage", "1", "--remote", "origin")
    assert asked.returncode == 1 and "git fetch origin failed" in asked.stderr
    assert git(pat, "for-each-ref", "refs/okstra/") == before  # asked to publish: nothing kept
    out = run_json(pat, "stage", "done", KEY, "--stage", "1")
    assert out["claim"]["status"] == "done" and out["publishedTo"] is None
    assert out["publishNote"].startswith("not published: git fetch origin failed")
    assert out["publishNote"].endswith("publish it with: git okstra sync origin")
    away.rename(team.remote)
    run_json(pat, "sync", "origin")
    assert team.on_remote(f"{BRANCHES}stage-1") == {f"{BRANCHES}stage-1": head}
    record = json.loads(git(team.remote, "show", f"{CLAIMS}stage-1:claim.json"))
    assert record["status"] == "done"
