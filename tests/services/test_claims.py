"""Stage claims (docs/workflow.md) against real repositories, real worktrees and the real CLI.

Helpers here (``approved_task``, ``claim_refs``) are shared by the other ``test_claims*`` and
``test_worktrees*`` modules.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from claims_world import (
    CLAIMS,
    KEY,
    TASK_REF,
    approved_task,
    claim_refs,
    commit_in,
    show_claim,
    stored,
)
from conftest import git, okstra
from plans import LINEAR_PLAN
from team_world import run_line

from okstra_git.core.errors import BadInput, Refused
from okstra_git.services import claims
from okstra_git.services.context import open_context


def claim_json(repo: Path, *args: str) -> dict:
    proc = okstra(repo, "stage", "claim", KEY, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_claim_needs_an_approved_plan(repo: Path) -> None:
    assert okstra(repo, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    (repo / "plan.md").write_text(LINEAR_PLAN)
    assert okstra(repo, "plan", "submit", KEY, "plan.md").returncode == 0
    before = stored(repo)
    proc = okstra(repo, "stage", "claim", KEY)
    assert proc.returncode == 1
    assert "approved plan has no recognised user-approval marker" in proc.stderr
    assert stored(repo) == before and not (repo.parent / "wt").exists()
    assert git(repo, "worktree", "list").count("\n") == 0


def test_stage_ready_writes_nothing_even_for_a_plan_ticked_by_hand(repo: Path) -> None:
    assert okstra(repo, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    (repo / "plan.md").write_text(LINEAR_PLAN)
    assert okstra(repo, "plan", "submit", KEY, "plan.md").returncode == 0
    (repo / "plan.md").write_text(LINEAR_PLAN.replace("- [ ] Approved", "- [x] Approved", 1))
    before = stored(repo)
    ready = okstra(repo, "stage", "ready", KEY, "--json")
    assert ready.returncode == 0, ready.stderr
    assert json.loads(ready.stdout)["batch"] == [1]
    assert stored(repo) == before
    notes = git(repo, "rev-parse", "--verify", "-q", "refs/notes/okstra/approvals", check=False)
    assert notes == ""
    assert okstra(repo, "stage", "claim", KEY, "--no-worktree").returncode == 0
    approvals = git(repo, "notes", "--ref", "okstra/approvals", "list").splitlines()
    assert len(approvals) == 1  # method A recorded by the claim, not by the look


def test_first_claim_takes_the_batch_and_makes_worktrees(repo: Path) -> None:
    folder = approved_task(repo)
    main_head = git(repo, "rev-parse", "HEAD")
    ready = okstra(repo, "stage", "ready", KEY, "--json")
    assert ready.returncode == 0, ready.stderr
    assert json.loads(ready.stdout)["batch"] == [1] and not claim_refs(repo)

    proc = okstra(repo, "stage", "claim", KEY)
    assert proc.returncode == 0, proc.stderr
    assert (
        "- **Stage for this implementation run:** `1`. Execute exactly this Stage Map stage — "
        "this is the authoritative scope." in proc.stdout
    )
    assert f"Worktree: `{folder / 'stage-1'}`" in proc.stdout
    assert "Branch: `okstra/g/i/stage-1`" in proc.stdout and f"Base: `{main_head}`" in proc.stdout

    data = show_claim(repo, 1)  # plain git reads the record
    assert data["runId"] == "implementation-001" and data["status"] == "started"
    assert data["batch"] == [1] and data["baseCommit"] == main_head
    assert data["worktreePath"] == str(folder / "stage-1")
    assert data["branch"] == "okstra/g/i/stage-1"
    assert data["taskKey"] == KEY and data["user"] == "Test User <test@example.invalid>"
    # The run and the implementation base landed with the claim, in one task event.
    manifest = json.loads(git(repo, "show", f"{TASK_REF}:task.json"))
    assert manifest["implementationBaseCommit"] == main_head
    assert manifest["latestRun"] == {
        "taskType": "implementation",
        "seq": "001",
        "status": "running",
    }
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/001.json"))
    assert run["status"] == "running"
    assert git(repo, "log", "-1", "--format=%s", TASK_REF) == (
        "run start implementation 001: claim stage(s) 1"
    )
    # Both worktrees are real git worktrees on their branches.
    listed = git(repo, "worktree", "list", "--porcelain")
    assert f"worktree {folder / 'task'}" in listed and f"worktree {folder / 'stage-1'}" in listed
    assert git(folder / "stage-1", "rev-parse", "--abbrev-ref", "HEAD") == "okstra/g/i/stage-1"
    assert git(folder / "task", "rev-parse", "--abbrev-ref", "HEAD") == "okstra/g/i/task"

    again = okstra(repo, "stage", "claim", KEY)
    assert again.returncode == 1
    assert "stage 1: held by run implementation-001" in again.stderr
    assert "stage 4: waiting for stage(s) 2, 3 (not done)" in again.stderr


def test_json_output_has_the_directive_fields(repo: Path) -> None:
    folder = approved_task(repo)
    data = claim_json(repo, "--lease", "2h")
    assert data["runId"] == "implementation-001" and data["stages"] == [1]
    (place,) = data["placements"]
    assert place["worktreePath"] == str(folder / "stage-1")
    assert place["branch"] == "okstra/g/i/stage-1"
    assert place["baseCommit"] == git(repo, "rev-parse", "HEAD")
    assert place["leaseExpiresAt"] and place["title"] == "설정 스키마 정의"
    assert data["taskWorktree"] == str(folder / "task") and data["taskBranch"] == "okstra/g/i/task"
    assert "Execute exactly this Stage Map stage" in data["directive"]
    assert place["leftUncommitted"] == [] and "Uncommitted" not in data["directive"]
    assert show_claim(repo, 1)["leaseExpiresAt"] == place["leaseExpiresAt"]


def test_bad_options_are_bad_input_and_store_nothing(repo: Path) -> None:
    approved_task(repo)
    before = stored(repo)
    for args, text in (
        (("--stage", "two"), "--stage 'two'"),
        (("--stage", "9"), "the plan has no stage 9"),
        (("--lease", "2 hours"), "--lease '2 hours'"),
        (("--lease", "0s"), "--lease '0s'"),
    ):
        proc = okstra(repo, "stage", "claim", KEY, *args)
        assert proc.returncode == 2 and text in proc.stderr, (args, proc.stderr)
    proc = okstra(repo, "stage", "claim", KEY, "--stage", "4")
    assert proc.returncode == 1 and "stage 4 is not ready" in proc.stderr
    assert stored(repo) == before and not (repo.parent / "wt").exists()


def test_done_checks_the_worktree_then_stores_head_report_and_carry(repo: Path) -> None:
    folder = approved_task(repo)
    claim_json(repo)
    stage1 = folder / "stage-1"
    (stage1 / "schema.py").write_text("x = 1\n")
    before = stored(repo)
    dirty = okstra(repo, "stage", "done", KEY, "--stage", "1")
    assert dirty.returncode == 1 and "uncommitted changes: schema.py" in dirty.stderr
    head = commit_in(stage1, "schema.py")
    wrong = okstra(repo, "stage", "done", KEY, "--stage", "1", "--head", "HEAD")
    assert wrong.returncode == 1 and f"worktree HEAD is {head[:12]}" in wrong.stderr
    (repo / "carry.json").write_text("[1, 2]")
    not_object = okstra(repo, "stage", "done", KEY, "--stage", "1", "--carry", "carry.json")
    assert not_object.returncode == 2 and "expected a JSON object" in not_object.stderr
    (repo / "carry.json").write_text("{nope")
    bad = okstra(repo, "stage", "done", KEY, "--stage", "1", "--carry", "carry.json")
    assert bad.returncode == 2 and "not UTF-8 JSON" in bad.stderr
    (repo / "carry.json").write_text(json.dumps({"pad": "x" * 70_000}))
    big = okstra(repo, "stage", "done", KEY, "--stage", "1", "--carry", "carry.json")
    assert big.returncode == 2 and "larger than the 64 KiB cap" in big.stderr
    assert stored(repo) == before

    (repo / "carry.json").write_text(json.dumps({"exports": ["Settings"]}))
    (repo / "report.md").write_text("# stage 1\n")
    proc = okstra(
        repo, "stage", "done", KEY, "--stage", "1", "--head", head,
        "--report", "report.md", "--carry", "carry.json", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["runFinished"] is True
    data = show_claim(repo, 1)
    assert data["status"] == "done" and data["headCommit"] == head and data["doneAt"]
    assert data["reportPath"] == "report.md" and data["carry"] == {"exports": ["Settings"]}
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/001.json"))
    assert run["status"] == "completed" and run["reportPath"] == "report.md"
    # The claim ref is a chain: claim, then done.
    assert git(repo, "log", "--format=%s", f"{CLAIMS}stage-1").splitlines() == [
        f"done stage 1 at {head[:12]} (implementation-001)",
        "claim stage 1 for implementation-001",
    ]
    # Repeating it with the same head is a no-op; after a later commit it is refused with the
    # way out (the later commits come along when the stage branch is merged).
    claim_head = git(repo, "rev-parse", f"{CLAIMS}stage-1")
    again = okstra(repo, "stage", "done", KEY, "--stage", "1")
    assert again.returncode == 0, again.stderr
    assert f"stage 1 was already done at {head} (implementation-001); unchanged" in again.stdout
    assert git(repo, "rev-parse", f"{CLAIMS}stage-1") == claim_head
    later = commit_in(stage1, "later.py")
    moved = okstra(repo, "stage", "done", KEY, "--stage", "1")
    assert moved.returncode == 1
    assert f"is already done at {head[:12]} (implementation-001" in moved.stderr
    merge = f"git -C {folder / 'task'} merge okstra/g/i/stage-1"
    assert f"its head is now {later[:12]}. To take the later commits too, merge" in moved.stderr
    assert f"into the task worktree: {merge}" in moved.stderr
    step = json.loads(okstra(repo, "task", "status", KEY, "--json").stdout)["next"]
    assert moved.stderr.splitlines()[-1] == f"hint: {step['command']}"  # the task's next step
    assert git(repo, "rev-parse", f"{CLAIMS}stage-1") == claim_head


def test_run_finishes_only_when_its_whole_batch_is_done(repo: Path) -> None:
    folder = approved_task(repo)
    claim_json(repo)
    commit_in(folder / "stage-1", "schema.py")
    assert okstra(repo, "stage", "done", KEY, "--stage", "1").returncode == 0
    data = claim_json(repo)
    assert data["stages"] == [2, 3] and data["runId"] == "implementation-002"
    for n in (2, 3):
        commit_in(folder / f"stage-{n}", f"s{n}.py")
    (repo / "report.md").write_text("# run 2\n")
    first = okstra(repo, "stage", "done", KEY, "--stage", "2", "--report", "report.md", "--json")
    assert first.returncode == 0 and json.loads(first.stdout)["runFinished"] is False
    last = okstra(repo, "stage", "done", KEY, "--stage", "3", "--json")
    assert last.returncode == 0
    note = json.loads(last.stdout)["runNote"]
    assert "--seq 002 --status completed" in note  # no report given: the run waits for one
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/002.json"))
    assert run["status"] == "running"
    # Run 001 (stage 1 done without a report) was left running, and said so.
    run1 = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/001.json"))
    assert run1["status"] == "running"


def test_release_is_audited_and_the_stage_can_be_claimed_again(repo: Path) -> None:
    folder = approved_task(repo)
    claim_json(repo)
    work = commit_in(folder / "stage-1", "half.py")
    before = stored(repo)
    other = okstra(
        repo, "stage", "release", KEY, "--stage", "1", "--reason", "x", "--run", "implementation-9"
    )
    assert other.returncode == 1
    assert "held by run implementation-001 (Test User <test@example.invalid> on " in other.stderr
    assert "no lease), not implementation-9" in other.stderr
    assert "--reason x --run implementation-001" in other.stderr
    empty = okstra(repo, "stage", "release", KEY, "--stage", "1", "--reason", " ", "--force")
    assert empty.returncode == 2
    assert stored(repo) == before
    forced = okstra(
        repo, "stage", "release", KEY, "--stage", "1", "--reason", "agent crashed", "--force"
    )
    assert forced.returncode == 0, forced.stderr
    data = show_claim(repo, 1)
    assert data["status"] == "released" and data["releaseReason"] == "agent crashed"
    assert data["releasedBy"].startswith("Test User <test@example.invalid> on ")
    assert data["releasedBy"].endswith("(--force)") and data["releasedAt"]
    # Claimed again: the new run continues in the worktree where the work was left, and is
    # told about the edits the released run never committed.
    (folder / "stage-1" / "draft.py").write_text("unfinished\n")
    again = claim_json(repo)
    assert again["runId"] == "implementation-002" and again["stages"] == [1]
    (place,) = again["placements"]
    assert place["startedHeadCommit"] == work and place["baseCommit"] == data["baseCommit"]
    assert "Continues from" in again["directive"]
    assert place["leftUncommitted"] == ["draft.py"]
    assert (
        "Uncommitted changes already in this worktree**, left by an earlier run"
        in (again["directive"])
    )
    assert "`draft.py`" in again["directive"]
    (folder / "stage-1" / "draft.py").unlink()
    renewed = show_claim(repo, 1)
    assert renewed["history"] == ["implementation-001"] and "takeOverOf" not in renewed
    assert git(folder / "stage-1", "rev-parse", "HEAD") == work
    # The only run holding this task on this host is the releaser's own: no --run needed.
    own = okstra(repo, "stage", "release", KEY, "--stage", "1", "--reason", "done for today")
    assert own.returncode == 0 and "(--force)" not in show_claim(repo, 1)["releasedBy"]


def test_expired_lease_is_taken_over_only_when_asked(repo: Path) -> None:
    approved_task(repo)
    claim_json(repo, "--lease", "1s", "--no-worktree")
    old_head = claim_refs(repo)[f"{CLAIMS}stage-1"]
    time.sleep(1.2)
    listed = json.loads(okstra(repo, "stage", "list", KEY, "--json").stdout)
    assert listed["stages"][0]["status"] == "expired"
    plain = okstra(repo, "stage", "claim", KEY, "--no-worktree")
    assert plain.returncode == 1 and "lease expired; take it over with --take-over-expired" in (
        plain.stderr
    )
    ready = json.loads(okstra(repo, "stage", "ready", KEY, "--take-over-expired", "--json").stdout)
    assert ready["batch"] == [1] and ready["takeOver"] == [1]
    taken = claim_json(repo, "--take-over-expired", "--no-worktree")
    assert taken["placements"][0]["takeOverOf"] == "implementation-001"
    assert "Taken over from run `implementation-001`" in taken["directive"]
    data = show_claim(repo, 1)
    assert data["runId"] == "implementation-002" and data["takeOverOf"] == "implementation-001"
    assert data["history"] == ["implementation-001"] and "leaseExpiresAt" not in data
    assert git(repo, "rev-parse", f"{CLAIMS}stage-1^") == old_head  # the chain keeps the old one
    assert git(repo, "log", "-1", "--format=%s", f"{CLAIMS}stage-1") == (
        "take over stage 1 from implementation-001 for implementation-002"
    )


def test_no_worktree_claim_needs_head_at_done(repo: Path) -> None:
    approved_task(repo)
    data = claim_json(repo, "--no-worktree")
    assert data["placements"][0]["worktreePath"] == "" and data["taskWorktree"] == ""
    assert not (repo.parent / "wt").exists()
    need = okstra(repo, "stage", "done", KEY, "--stage", "1")
    assert need.returncode == 2 and "--head" in need.stderr
    head = git(repo, "rev-parse", "HEAD")
    assert okstra(repo, "stage", "done", KEY, "--stage", "1", "--head", "HEAD").returncode == 0
    assert show_claim(repo, 1)["headCommit"] == head


def test_stage_list_is_the_consumers_view(repo: Path) -> None:
    folder = approved_task(repo)
    claim_json(repo, "--lease", "1d")
    head = commit_in(folder / "stage-1", "a.py")
    (repo / "r.md").write_text("r\n")
    okstra(repo, "stage", "done", KEY, "--stage", "1", "--report", "r.md")
    claim_json(repo, "--stage", "3")
    text = okstra(repo, "stage", "list", KEY)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["stage", "status", "run", "head", "lease", "report"]
    assert lines[1].split()[:4] == ["1", "done", "implementation-001", head[:12]]
    assert lines[1].split()[-1] == "r.md"
    assert lines[2].split()[:4] == ["3", "started", "implementation-002", "-"]
    rows = json.loads(okstra(repo, "stage", "list", KEY, "--json").stdout)["stages"]
    assert [(r["stage"], r["status"], r["runId"]) for r in rows] == [
        (1, "done", "implementation-001"),
        (3, "started", "implementation-002"),
    ]
    assert rows[0]["headCommit"] == head and rows[0]["reportPath"] == "r.md"


def test_diamond_base_rules(repo: Path) -> None:
    """2 and 3 depend on 1; 4 on 2 and 3. Each claim integrates the done dependencies its batch
    needs into the task branch first — one merge commit per stage, in dependency order — so
    every stage's base contains every dependency. Stacking on one dependency's head is gone
    (docs/workflow.md): stage 4 stacked on 3 would have lacked 2."""
    folder = approved_task(repo)
    task_wt = folder / "task"
    ctx = open_context(repo)
    key = ctx.key(KEY)
    claims.claim(ctx, key)
    one = commit_in(folder / "stage-1", "src/schema.py")
    claims.done(ctx, key, 1)
    second = claims.claim(ctx, key)
    assert [p.stage for p in second.stages] == [2, 3]
    base = git(task_wt, "rev-parse", "HEAD")
    git(repo, "merge-base", "--is-ancestor", one, base)
    assert {p.base_commit for p in second.stages} == {base}
    assert {p.stacked_on for p in second.stages} == {None}
    assert git(task_wt, "log", "-1", "--format=%s").startswith("integrate stage 1 (")
    heads = {n: commit_in(folder / f"stage-{n}", f"src/s{n}.py") for n in (2, 3)}
    for n in (2, 3):
        claims.done(ctx, key, n)
    proc = okstra(repo, "stage", "claim", KEY, "--json")
    assert proc.returncode == 0, proc.stderr
    (place,) = json.loads(proc.stdout)["placements"]
    task_head = git(task_wt, "rev-parse", "HEAD")
    assert place["stage"] == 4 and place["stackedOn"] is None
    assert place["baseCommit"] == task_head == git(folder / "stage-4", "rev-parse", "HEAD")
    for n in (1, 2, 3):
        git(repo, "merge-base", "--is-ancestor", heads.get(n, one), task_head)
    merges = git(task_wt, "log", "--merges", "--format=%s").splitlines()
    assert [m.split(" (")[0] for m in merges] == [f"integrate stage {n}" for n in (3, 2, 1)]
    manifest = json.loads(git(repo, "show", f"{TASK_REF}:task.json"))
    assert manifest["implementationBaseCommit"] == git(repo, "rev-parse", "main")
    events = git(repo, "log", "--format=%s", TASK_REF).splitlines()
    assert sum(e.startswith("integrate stage(s) ") for e in events) == 2


def test_a_claim_whose_dependencies_conflict_is_refused_with_the_integrate_command(
    repo: Path,
) -> None:
    """Stages 2 and 3 both change one file: integrating them for stage 4 conflicts. The claim
    gives the merge up again (the task worktree clean, stage 4 unclaimed) and names
    ``integrate``; that command leaves the conflict where a person resolves it, and the lines
    it prints finish it."""
    folder = approved_task(repo)
    task_wt = folder / "task"
    ctx = open_context(repo)
    key = ctx.key(KEY)
    claims.claim(ctx, key)
    commit_in(folder / "stage-1", "src/schema.py")
    claims.done(ctx, key, 1)
    claims.claim(ctx, key)
    for n in (2, 3):
        commit_in(folder / f"stage-{n}", "src/shared.py", f"stage {n}\n")
        claims.done(ctx, key, n)
    proc = okstra(repo, "stage", "claim", KEY)
    assert proc.returncode == 1
    fix = f"git -C {repo} okstra integrate {KEY}"
    assert "merging them there conflicts" in proc.stderr and f"hint: {fix}" in proc.stderr
    assert git(task_wt, "status", "--porcelain") == "" and not (folder / "stage-4").exists()
    assert "stage-4" not in git(repo, "for-each-ref", CLAIMS)
    before = stored(repo)
    proc = okstra(repo, "integrate", KEY)
    assert proc.returncode == 1 and "conflicted: src/shared.py" in proc.stderr
    assert stored(repo) == before  # nothing recorded
    status = json.loads(okstra(repo, "task", "status", KEY, "--json").stdout)
    assert status["next"]["kind"] == "human" and status["next"]["cwd"] == str(task_wt)
    (task_wt / "src" / "shared.py").write_text("stage 2 and stage 3\n")
    git(task_wt, "add", "src/shared.py")
    finish = proc.stderr.split("finish with: ", 1)[1].splitlines()[0]
    for part in finish.split(" && "):  # each runs from any folder
        done = run_line(part)
        assert done.returncode == 0, (part, done.stderr)
    assert git(task_wt, "log", "-1", "--format=%s").startswith("integrate stage 3 (")
    assert git(repo, "log", "-1", "--format=%s", TASK_REF).startswith("integrate stage(s) ")
    claimed = claims.claim(ctx, key)
    assert [p.stage for p in claimed.stages] == [4]


def test_a_folder_in_the_way_is_refused_before_claiming(repo: Path) -> None:
    folder = approved_task(repo)
    (folder / "stage-1").mkdir(parents=True)
    (folder / "stage-1" / "notes.txt").write_text("mine\n")
    before = stored(repo)
    proc = okstra(repo, "stage", "claim", KEY)
    assert proc.returncode == 1 and f"{folder / 'stage-1'} exists and is not the worktree" in (
        proc.stderr
    )
    assert stored(repo) == before and (folder / "stage-1" / "notes.txt").exists()


def test_failed_provisioning_rolls_the_claim_back(repo: Path) -> None:
    """A branch that makes the stage branch name impossible (a folder of refs) fails the
    worktree after the claim landed: the claim is put back and the run finished as error."""
    folder = approved_task(repo)
    git(repo, "branch", "okstra/g/i/stage-1/blocker")
    tasks_before = git(repo, "rev-parse", TASK_REF)
    ctx = open_context(repo)
    with pytest.raises(Refused, match="cannot create branch okstra/g/i/stage-1"):
        claims.claim(ctx, ctx.key(KEY))
    assert claim_refs(repo) == {}
    assert not (folder / "stage-1").exists()
    assert "okstra-g-i-stage-1" not in git(repo, "worktree", "list")
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/001.json"))
    assert run["status"] == "error"
    assert git(repo, "rev-list", "--count", f"{tasks_before}..{TASK_REF}") == "2"
    git(repo, "branch", "-D", "okstra/g/i/stage-1/blocker")
    again = claims.claim(ctx, ctx.key(KEY))
    assert again.run_id == "implementation-002" and (folder / "stage-1").is_dir()


def test_claims_work_from_inside_a_stage_worktree(repo: Path) -> None:
    folder = approved_task(repo)
    claim_json(repo)
    stage1 = folder / "stage-1"
    head = commit_in(stage1, "a.py")
    done = okstra(stage1, "stage", "done", KEY, "--stage", "1", "--head", "HEAD", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["claim"]["headCommit"] == head


def test_service_errors_name_the_stage(repo: Path) -> None:
    approved_task(repo)
    ctx = open_context(repo)
    key = ctx.key(KEY)
    with pytest.raises(Refused, match=r"stage 2 of p:g:i has no claim"):
        claims.done(ctx, key, 2)
    with pytest.raises(BadInput, match="no such file"):
        claims.done(ctx, key, 1, report="missing.md")


def test_records_read_again_are_fresh_copies(repo: Path) -> None:
    """Claims and tasks are kept per process by commit (a claim reads them twice); a caller
    changing what it was handed must not change what the next reader gets."""
    from okstra_git.records.claim import load_claims
    from okstra_git.records.task import require_task

    approved_task(repo)
    ctx = open_context(repo)
    key = ctx.key(KEY)
    claims.claim(ctx, key, worktrees=False)
    first = load_claims(ctx.repo, key)
    number, state = sorted(first.items())[0]
    state.claim.status = "done"
    state.claim.batch.append(99)
    again = load_claims(ctx.repo, key)[number].claim
    assert again.status == "started" and 99 not in again.batch
    task = require_task(ctx.repo, key).task
    task.workflow.current_phase = "changed"
    task.implementation_base_commit = None
    fresh = require_task(ctx.repo, key).task
    assert fresh.workflow.current_phase != "changed" and fresh.implementation_base_commit


def test_one_claim_writes_every_commit_with_one_signature_read_once(repo: Path) -> None:
    """The claim commits and the task event of one transaction carry one committer line; the
    identity is read again for the next write, so a changed user.name shows there."""
    from plans import plan_text

    approved_task(repo, plan=plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])]))
    ctx = open_context(repo)
    claims.claim(ctx, ctx.key(KEY), worktrees=False)
    heads = [*claim_refs(repo).values(), git(repo, "rev-parse", TASK_REF)]
    assert len(heads) == 3
    lines = {git(repo, "show", "-s", "--format=%cn <%ce> %ct", head) for head in heads}
    assert len(lines) == 1
    git(repo, "config", "user.name", "Someone Else")
    claims.release(ctx, ctx.key(KEY), 1, "handing over", "implementation-001", False)
    released = git(repo, "show", "-s", "--format=%cn", claim_refs(repo)[CLAIMS + "stage-1"])
    assert released == "Someone Else"
