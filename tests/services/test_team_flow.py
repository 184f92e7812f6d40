"""A team that follows the tool (docs/workflow.md, issue 20): several clones of one bare remote on
ONE host, each knowing its own claims by its clone id; the task branch as one published, leased ref
(``integrate``); and ``next`` as the one step each clone takes, run exactly as given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import git, okstra, race_in
from plans import plan_text
from reports_data import fill_prompts
from team_world import BRANCHES, CLAIMS, KEY, Team, approve_here, run_json, run_line, run_step

DIAMOND = plan_text(
    [
        (1, [], ["src/s1.py"]),
        (2, [1], ["src/s2.py"]),
        (3, [1], ["src/s3.py"]),
        (4, [2, 3], ["src/s4.py"]),
    ],
    steps=5,
)
TWO_FREE = plan_text([(1, [], ["src/s1.py"]), (2, [], ["src/s2.py"])], steps=5)
TASK_BRANCH = f"{BRANCHES}task"


def status(clone: Path) -> dict:
    return run_json(clone, "task", "status", KEY)


def clone_id(clone: Path) -> str:
    return git(clone, "config", "--local", "okstra.cloneId")


def commit_stage(worktree: Path, stage: int, text: str | None = None) -> str:
    path = worktree / "src" / f"s{stage}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text or f"STAGE = {stage}\n")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", f"stage {stage}")
    return git(worktree, "rev-parse", "HEAD")


def planned(team: Team, plan: str) -> Path:
    """The planner's clone: the task made, its plan approved and published."""
    pat = team.clone("pat", "Pat")
    approve_here(pat, plan)
    run_json(pat, "sync", "origin")
    return pat


def test_a_fresh_clones_first_next_is_the_sync_command(tmp_path: Path):
    team = Team.make(tmp_path)
    planned(team, TWO_FREE)
    fresh = team.clone("fresh", "Fay")  # init --remote origin, nothing fetched since
    proc = okstra(fresh, "task", "status", KEY, "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert "never" not in out["error"] and "task new" not in out["error"]
    assert out["hint"] == f"git -C {fresh.resolve()} okstra sync origin"
    step = out["next"]
    assert step["kind"] == "run" and step["argv"] == ["git", "okstra", "sync", "origin"]
    assert step["cwd"] == str(fresh.resolve())
    assert run_step(step).returncode == 0
    assert status(fresh)["next"]["argv"][2:] == ["stage", "claim", KEY, "--remote", "origin"]
    # A task no remote holds is still one to create.
    proc = okstra(fresh, "task", "status", "p:g:other", "--json")
    assert proc.returncode == 1 and "task new" in json.loads(proc.stdout)["hint"]


def test_a_task_made_here_is_published_before_anything_else_is_taken(tmp_path: Path):
    """A clone of a team (`init --remote origin`) that made a task was told "remotes: in step"
    and, after the approval, `stage claim` without --remote: a claim of this clone alone.
    Until the task is on origin, the next step is the sync that publishes it."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    seen = status(pat)
    assert seen["published"]["home"] == "origin" and seen["published"]["remote"] is None
    assert seen["published"]["unpublished"] == ["refs/okstra/tasks/g/i"]
    assert seen["next"]["argv"] == ["git", "okstra", "sync", "origin"]
    text = okstra(pat, "task", "status", KEY).stdout
    assert "not on origin yet: the task and its claims, here only" in text
    assert "in step" not in text
    assert run_step(seen["next"]).returncode == 0
    assert team.on_remote("refs/okstra/tasks/")
    seen = status(pat)
    assert seen["published"]["home"] is None and seen["published"]["unpublished"] == []
    assert seen["next"]["argv"][2:] == ["stage", "claim", KEY, "--remote", "origin"]
    assert "remotes: in step" in okstra(pat, "task", "status", KEY).stdout


def test_yours_means_this_clone_on_a_host_shared_by_clones(tmp_path: Path):
    team = Team.make(tmp_path)
    planned(team, TWO_FREE)
    alice, bob = team.clone("alice", "Alice"), team.clone("bob", "Bob")
    assert clone_id(alice) != clone_id(bob)  # init made each its own
    placed = run_json(alice, "stage", "claim", KEY, "--stage", "1", "--remote", "origin")
    record = json.loads(git(team.remote, "show", f"{CLAIMS}stage-1:claim.json"))
    assert record["clone"] == clone_id(alice) and record["host"] and record["user"]
    run_json(bob, "sync", "origin")
    seen = status(bob)
    (one, _) = seen["stages"]
    assert one["holder"]["mine"] is False and one["holder"]["clone"] == clone_id(alice)
    assert seen["next"]["argv"][2:4] == ["stage", "claim"]  # stage 2, never alice's done
    text = okstra(bob, "task", "status", KEY).stdout
    assert f"(clone {clone_id(alice)})" in text and "this clone" not in text
    assert "(this clone)" in okstra(alice, "task", "status", KEY).stdout
    # Bob cannot finish or release Alice's stage, and her worktree is not his missing one.
    proc = okstra(bob, "stage", "done", KEY, "--stage", "1")
    assert proc.returncode == 1 and "not by this clone" in proc.stderr
    proc = okstra(bob, "stage", "release", KEY, "--stage", "1", "--reason", "mine?")
    assert proc.returncode == 1 and "held by" in proc.stderr
    listed = run_json(bob, "worktree", "list", KEY)["worktrees"]
    (stage1,) = [w for w in listed if w["stage"] == 1]
    assert stage1["elsewhere"] and clone_id(alice) in stage1["elsewhere"]
    (line,) = [
        t for t in okstra(bob, "worktree", "list", KEY).stdout.splitlines() if "stage 1" in t
    ]
    assert "missing" not in line and "in another clone" in line
    # Alice's own: release without --run finds her run.
    released = run_json(alice, "stage", "release", KEY, "--stage", "1", "--reason", "later")
    assert released["claim"]["releasedBy"].endswith(f"(clone {clone_id(alice)})")
    assert placed["runId"] == released["claim"]["runId"]


def test_naming_another_clones_run_does_not_release_its_claim(tmp_path: Path):
    """A refusal once told the other clone "if that run is yours, release it with: … --run
    RUN"; run there, it ended a live claim of another clone without --force, and its sync
    published that. Only the holding clone, or a recorded --force, releases a claim."""
    team = Team.make(tmp_path)
    planned(team, TWO_FREE)
    alice, bob = team.clone("alice", "Alice"), team.clone("bob", "Bob")
    placed = run_json(alice, "stage", "claim", KEY, "--stage", "1", "--remote", "origin")
    run_json(bob, "sync", "origin")
    proc = okstra(bob, "stage", "release", KEY, "--stage", "1", "--reason", "mine?")
    assert proc.returncode == 1 and "another clone's claim" in proc.stderr
    assert "--run" not in proc.stderr
    named = ("stage", "release", KEY, "--stage", "1", "--reason", "x", "--run", placed["runId"])
    proc = okstra(bob, *named)
    assert proc.returncode == 1 and "another clone's claim" in proc.stderr, proc.stderr
    claim = json.loads(git(bob, "show", f"{CLAIMS}stage-1:claim.json"))
    assert claim["status"] == "started" and claim["clone"] == clone_id(alice)
    assert run_json(bob, "sync", "origin")["ok"]
    assert json.loads(git(team.remote, "show", f"{CLAIMS}stage-1:claim.json"))["status"] == (
        "started"
    )
    # Alice names her own run and releases it; --force still ends another clone's, recorded.
    assert run_json(alice, *named)["claim"]["status"] == "released"
    again = run_json(alice, "stage", "claim", KEY, "--stage", "1", "--remote", "origin")
    run_json(bob, "sync", "origin")
    forced = run_json(bob, "stage", "release", KEY, "--stage", "1", "--reason", "gone", "--force")
    assert forced["claim"]["runId"] == again["runId"]
    assert forced["claim"]["releasedBy"].endswith("(--force)")


def test_a_refusals_hint_is_the_next_step_task_status_gives(tmp_path: Path):
    """Refusals used to hint with commands of their own (`stage list`, `git merge …`, `run
    start` while stages were open) beside `next`; now the hint, in text and --json, is the
    engine's step, one line that runs from any folder."""
    team = Team.make(tmp_path)
    planned(team, DIAMOND)
    alice, bob = team.clone("alice", "Alice"), team.clone("bob", "Bob")
    run_json(alice, "stage", "claim", KEY, "--remote", "origin")
    run_json(bob, "sync", "origin")
    report = tmp_path / "report.md"
    report.write_text("# Stage 1\n\nNot mine.\n")
    refused = [
        ("stage", "done", KEY, "--stage", "1", "--report", str(report)),
        ("stage", "release", KEY, "--stage", "1", "--reason", "x"),
        ("stage", "claim", KEY, "--remote", "origin"),
        ("run", "start", KEY, "--type", "final-verification"),
        ("run", "start", KEY, "--type", "release-handoff"),
    ]
    step = status(bob)["next"]
    assert step["kind"] == "wait"
    for args in refused:
        proc = okstra(bob, *args, "--json")
        assert proc.returncode == 1, (args, proc.stderr)
        failure = json.loads(proc.stdout)
        assert failure.get("next") == step, (args, failure)
        assert failure["hint"] == step["command"], args
        text = okstra(bob, *args)
        assert text.stderr.splitlines()[-1] == f"hint: {step['command']}", (args, text.stderr)
    assert run_line(step["command"]).returncode == 0


def test_a_clone_id_that_is_not_one_okstra_made_is_refused(tmp_path: Path):
    team = Team.make(tmp_path)
    planned(team, TWO_FREE)
    bob = team.clone("bob", "Bob")
    run_json(bob, "sync", "origin")
    git(bob, "config", "okstra.cloneId", "not-a-clone-id")
    before = git(bob, "for-each-ref", "refs/okstra/")
    proc = okstra(bob, "stage", "claim", KEY)
    assert proc.returncode == 2
    assert "okstra.cloneId = 'not-a-clone-id'" in proc.stderr
    assert "git config --unset okstra.cloneId" in proc.stderr
    assert git(bob, "for-each-ref", "refs/okstra/") == before
    # A global value is not this clone's: it is never read (every clone would share it).
    git(bob, "config", "--unset", "okstra.cloneId")
    git(bob, "config", "--global", "okstra.cloneId", "0123456789abcdef")
    claimed = run_json(bob, "stage", "claim", KEY, "--stage", "1")
    assert clone_id(bob) != "0123456789abcdef"
    assert json.loads(git(bob, "show", f"{CLAIMS}stage-1:claim.json"))["clone"] == clone_id(bob)
    assert claimed["stages"] == [1]


def _two_done_stages(team: Team) -> tuple[Path, Path, dict[int, str]]:
    """Alice and Bob each finish one of two free stages through the remote, unintegrated."""
    planned(team, TWO_FREE)
    alice, bob = team.clone("alice", "Alice"), team.clone("bob", "Bob")
    heads = {}
    for n, who in ((1, alice), (2, bob)):
        placed = run_json(who, "stage", "claim", KEY, "--stage", str(n), "--remote", "origin")
        heads[n] = commit_stage(Path(placed["placements"][0]["worktreePath"]), n)
        run_json(who, "stage", "done", KEY, "--stage", str(n))
    for who in (alice, bob):
        run_json(who, "sync", "origin")
    return alice, bob, heads


def test_stage_done_names_integrate_so_a_late_stage_joins_the_published_task_branch(
    tmp_path: Path,
):
    """Bob finished and integrated stage 2 first; Alice's stage done then prints how to bring
    stage 1 in, and that command, run as printed, leaves her task branch the published one with
    both stages (a plain `git merge` in her task worktree made a branch beside it)."""
    team = Team.make(tmp_path)
    planned(team, TWO_FREE)
    alice, bob = team.clone("alice", "Alice"), team.clone("bob", "Bob")
    worktrees = {}
    for n, who in ((1, alice), (2, bob)):
        placed = run_json(who, "stage", "claim", KEY, "--stage", str(n), "--remote", "origin")
        worktrees[n] = Path(placed["placements"][0]["worktreePath"])
    heads = {2: commit_stage(worktrees[2], 2)}
    run_json(bob, "stage", "done", KEY, "--stage", "2")
    run_json(bob, "integrate", KEY, "--remote", "origin")
    heads[1] = commit_stage(worktrees[1], 1)
    printed = run_json(alice, "stage", "done", KEY, "--stage", "1")["merge"]
    assert printed is not None
    proc = run_line(printed)
    assert proc.returncode == 0, (printed, proc.stdout, proc.stderr)
    (published,) = team.on_remote(TASK_BRANCH).values()
    assert git(alice, "rev-parse", "refs/heads/okstra/g/i/task") == published
    for head in heads.values():
        git(team.remote, "merge-base", "--is-ancestor", head, published)
    text = okstra(alice, "stage", "done", KEY, "--stage", "1")
    assert text.returncode == 0, text.stderr
    assert "merge it" not in text.stdout  # merged now: no step left to print


def test_two_clones_integrating_at_once_leave_one_task_branch_with_both(tmp_path: Path):
    team = Team.make(tmp_path)
    alice, bob, heads = _two_done_stages(team)
    results = race_in([alice, bob], "integrate", KEY, "--remote", "origin", "--json")
    outs = []
    for proc in results:
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout))
    (published,) = team.on_remote(TASK_BRANCH).values()
    for head in heads.values():
        git(team.remote, "merge-base", "--is-ancestor", head, published)
    merges = git(team.remote, "log", "--merges", "--format=%s", published).splitlines()
    assert sorted(m.split(" (")[0] for m in merges) == ["integrate stage 1", "integrate stage 2"]
    # Whoever lost redid its merges on the winner's head, or found them there: every merge
    # landed once, and each clone's task branch is the published one.
    assert [o["head"] for o in outs] == [published, published]
    assert sum(len(o["merged"]) for o in outs) == 2
    for who in (alice, bob):
        assert git(who, "rev-parse", "refs/heads/okstra/g/i/task") == published
    events = git(team.remote, "log", "--format=%B", "refs/okstra/tasks/g/i")
    assert events.count("Okstra-Integrated: stage 1 ") == 1
    assert events.count("Okstra-Integrated: stage 2 ") == 1
    assert f"Okstra-Task-Branch: {published}" in events


def test_a_conflicting_integrate_publishes_nothing_and_prints_how_to_finish(tmp_path: Path):
    team = Team.make(tmp_path)
    planned(team, TWO_FREE)
    alice, bob = team.clone("alice", "Alice"), team.clone("bob", "Bob")
    for n, who in ((1, alice), (2, bob)):
        placed = run_json(who, "stage", "claim", KEY, "--stage", str(n), "--remote", "origin")
        wt = Path(placed["placements"][0]["worktreePath"])
        (wt / "shared.txt").write_text(f"stage {n}\n")  # both stages change one file
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", f"stage {n}")
        run_json(who, "stage", "done", KEY, "--stage", str(n))
    before = team.on_remote("refs/okstra/")
    proc = okstra(alice, "integrate", KEY, "--remote", "origin")
    assert proc.returncode == 1 and "conflicted: shared.txt" in proc.stderr
    assert "nothing was published" in proc.stderr
    assert team.on_remote("refs/okstra/") == before
    task_wt = Path(proc.stderr.split("in the task worktree ", 1)[1].split(" (")[0])
    step = status(alice)["next"]
    assert step["kind"] == "human" and step["cwd"] == str(task_wt)
    (task_wt / "shared.txt").write_text("stage 1 and stage 2\n")
    git(task_wt, "add", "shared.txt")
    finish = proc.stderr.split("finish with: ", 1)[1].splitlines()[0]
    for part in finish.split(" && "):  # each part runs from any folder
        done = run_line(part)
        assert done.returncode == 0, (part, done.stderr)
    (published,) = team.on_remote(TASK_BRANCH).values()
    assert published == git(task_wt, "rev-parse", "HEAD")
    event = git(team.remote, "log", "-1", "--format=%B", "refs/okstra/tasks/g/i")
    assert "Okstra-Integrated: stage 1 " in event and "Okstra-Integrated: stage 2 " in event
    # The abort line works too (on a fresh conflict it would put the worktree back).
    abort = proc.stderr.split("give the merge up with: ", 1)[1].splitlines()[0]
    assert abort == f"git -C {task_wt} merge --abort"


def test_status_and_sync_say_what_is_not_published(tmp_path: Path):
    team = Team.make(tmp_path)
    alice, bob, _ = _two_done_stages(team)
    run_json(alice, "integrate", KEY, "--remote", "origin")
    # Bob's task branch is behind the published one: sync names the command that brings it
    # here (it named only the remote's tracking ref), the one task status's next step runs.
    synced = okstra(bob, "sync", "origin")
    assert synced.returncode == 0, synced.stderr
    bring = f"git -C {bob.resolve()} okstra integrate {KEY} --remote origin"
    (theirs,) = team.on_remote(TASK_BRANCH).values()
    mine = git(bob, "rev-parse", "refs/heads/okstra/g/i/task")
    assert f"  {TASK_BRANCH}: the remote's {theirs[:12]} has more than yours ({mine[:12]}): "
    f"bring it here with: {bring}" in synced.stdout.splitlines(), synced.stdout
    (behind,) = [b for b in run_json(bob, "sync", "origin")["branches"] if b["ref"] == TASK_BRANCH]
    assert behind["state"] == "behind" and behind["command"] == bring, behind
    seen = status(bob)
    assert seen["published"]["taskBranch"]["state"] == "behind"
    assert seen["next"]["command"] == bring
    brought = run_line(behind["command"])  # as printed, from a folder of no repository
    assert brought.returncode == 0, brought.stderr
    assert git(bob, "rev-parse", "refs/heads/okstra/g/i/task") == theirs
    assert status(bob)["published"]["taskBranch"]["state"] == "same"
    task_wt = Path(status(bob)["taskWorktree"]["path"])
    # A hand commit on Bob's task branch while Alice publishes another: both moved.
    (task_wt / "notes.txt").write_text("bob\n")
    git(task_wt, "add", "-A")
    git(task_wt, "commit", "-q", "-m", "bob's note")
    alice_wt = Path(status(alice)["taskWorktree"]["path"])
    (alice_wt / "more.txt").write_text("alice\n")
    git(alice_wt, "add", "-A")
    git(alice_wt, "commit", "-q", "-m", "alice's note")
    assert run_json(alice, "integrate", KEY, "--remote", "origin")["published"]
    run_json(bob, "sync", "origin", code=1)
    proc = okstra(bob, "sync", "origin")
    assert proc.returncode == 1
    assert f"not published: {TASK_BRANCH} here" in proc.stderr
    # The fix runs from any folder (it said `git okstra integrate …`, working in the clone
    # only): deliberately changed to the -C form task status's next step has.
    assert f"publish both with: {bring}\n" in proc.stderr, proc.stderr
    branches = run_json(bob, "sync", "origin", code=1)["branches"]
    (diverged,) = [b for b in branches if b["ref"] == TASK_BRANCH]
    assert diverged["state"] == "diverged" and diverged["command"] == bring, diverged
    seen = status(bob)
    assert seen["published"]["taskBranch"]["state"] == "diverged"
    text = okstra(bob, "task", "status", KEY).stdout
    assert "task branch: diverged from origin's" in text
    assert seen["next"]["command"] == bring
    assert run_line(bring).returncode == 0
    (published,) = team.on_remote(TASK_BRANCH).values()
    for note in ("notes.txt", "more.txt"):
        assert git(team.remote, "cat-file", "-t", f"{published}:{note}") == "blob"
    assert okstra(bob, "sync", "origin").returncode == 0


def _act(team: Team, clone: Path, step: dict) -> subprocess.CompletedProcess[str]:
    """Do exactly what ``step`` says: for work, the work (a commit when it is committed work, the
    report it names), then its argv in its cwd."""
    if step["kind"] == "work":
        if step["commit"]:
            (stage,) = step["stages"]
            commit_stage(Path(step["worktree"]), stage, f"STAGE = {stage}  # {clone.name}\n")
        report = Path(step["report"])
        report.parent.mkdir(parents=True, exist_ok=True)
        if step["argv"][2:4] == ["verify", "record"]:
            started = run_json(clone, "report", "init", KEY, "--verdict", "accepted")
            data = json.loads(Path(started["path"]).read_text())
            report.write_text(json.dumps(fill_prompts(data)))
        else:
            report.write_text(f"# report\n\nwritten by {clone.name}\n")
    return run_step(step)


def _next_of(clone: Path) -> tuple[dict, dict | None]:
    """A clone's next step, from ``task status --json`` (its refusal's ``next`` on a clone that
    has not fetched the task)."""
    proc = okstra(clone, "task", "status", KEY, "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 or "next" in out, out
    return out["next"], out if proc.returncode == 0 else None


def _one_task_branch(team: Team, clones: list[Path]) -> None:
    """Exactly one task branch: every clone's is the published one or behind it (before the
    first integrate publishes one, the commit every claim starts from: main's)."""
    found = team.on_remote(TASK_BRANCH)
    for clone in clones:
        local = git(clone, "rev-parse", "-q", "--verify", "refs/heads/okstra/g/i/task", check=False)
        if not local:
            continue
        (published,) = found.values() if found else [git(team.remote, "rev-parse", "main")]
        ok = subprocess.run(
            ["git", "merge-base", "--is-ancestor", local, published], cwd=team.remote
        )
        assert ok.returncode == 0, (clone, local, published)


@pytest.mark.slow
def test_three_clones_follow_next_from_approval_to_main(tmp_path: Path):
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat", False, "--hooks")
    approve_here(pat, DIAMOND)
    run_json(pat, "sync", "origin")
    clones = [team.clone(name, name.title(), False, "--hooks") for name in ("ann", "ben", "cal")]
    firsts = [_next_of(c)[0] for c in clones]
    assert all(f["argv"] == ["git", "okstra", "sync", "origin"] for f in firsts)
    raced: list[set[str]] = []
    for turn in range(150):
        (published,) = team.on_remote(TASK_BRANCH).values() or [None]
        if published is not None and git(team.remote, "rev-parse", "main") == published:
            break
        seen = {c: _next_of(c) for c in clones}
        claimers = [
            c for c, (st, _) in seen.items() if (st["argv"] or [])[2:4] == ["stage", "claim"]
        ]
        ready = max(
            (sum(x["state"] == "ready" for x in s["stages"]) for _, s in seen.values() if s),
            default=0,
        )
        if len(claimers) > 1 and ready > 1:
            # Agents acting at once: as many claim together as there are stages to take.
            group = claimers[:ready]
            results = race_in(group, *seen[group[0]][0]["argv"][2:])
            for clone, proc in zip(group, results, strict=True):
                assert proc.returncode == 0, (clone, proc.stderr)
            raced.append({c.name for c in group})
        else:
            clone = clones[turn % len(clones)]
            step = seen[clone][0]
            proc = _act(team, clone, step)
            assert proc.returncode == 0, (clone.name, step, proc.stderr, proc.stdout)
        _one_task_branch(team, clones)
    else:
        raise AssertionError("the team never got the verified task onto main")
    assert raced and all(len(group) == 2 for group in raced)  # stages 2 and 3, two clones
    head = git(team.remote, "rev-parse", "main")
    claims = {
        n: json.loads(git(team.remote, "show", f"{CLAIMS}stage-{n}:claim.json"))
        for n in (1, 2, 3, 4)
    }
    for n, deps in ((2, [1]), (3, [1]), (4, [2, 3])):
        for dep in deps:
            git(team.remote, "merge-base", "--is-ancestor", claims[dep]["headCommit"],
                claims[n]["baseCommit"])  # fmt: skip
    for claim in claims.values():
        assert claim["status"] == "done" and claim["clone"]
        git(team.remote, "merge-base", "--is-ancestor", claim["headCommit"], head)
    assert len({c["clone"] for c in claims.values()}) >= 2
    fresh = team.root / "ci"
    git(team.root, "clone", "-q", str(team.remote), str(fresh))
    proc = okstra(fresh, "ci", "check")  # a CI clone that never fetched the notes: told to
    assert proc.returncode == 1 and f"`git okstra ci check {head} --fetch origin`" in proc.stdout
    proc = okstra(fresh, "ci", "check", "--fetch", "origin")
    assert proc.returncode == 0, proc.stderr + proc.stdout


ONE_STAGE = plan_text([(1, [], ["src/s1.py"])], steps=5)


def _follow_until(team: Team, clone: Path, stop: str, turns: int = 40) -> dict:
    """``clone`` does what ``next`` says until it says to run ``stop`` (an argv's first words,
    joined); returns that step, not taken."""
    for _ in range(turns):
        step = _next_of(clone)[0]
        if " ".join(step["argv"] or []).startswith(stop):
            return step
        proc = _act(team, clone, step)
        assert proc.returncode == 0, (step, proc.stderr, proc.stdout)
    raise AssertionError(f"next never said {stop!r}")


def _land_on_main(team: Team, name: str, files: dict[str, str]) -> str:
    """Someone else lands a commit on the remote's main (a plain clone, no okstra): returns it."""
    other = team.root / name
    if not other.exists():
        git(team.root, "clone", "-q", str(team.remote), str(other))
    git(other, "pull", "-q", "--ff-only")
    for path, text in files.items():
        (other / path).parent.mkdir(parents=True, exist_ok=True)
        (other / path).write_text(text)
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", f"{name}'s change")
    git(other, "push", "-q", "origin", "main")
    return git(other, "rev-parse", "HEAD")


def test_main_moved_on_the_remote_is_merged_into_the_task_branch_then_pushed(tmp_path: Path):
    """The verified HEAD's push to main is rejected once main moved on the remote. After a
    fetch, ``next`` says to merge the remote's main into the task branch (in the task worktree):
    a merge bringing only what the task has keeps the verdict (the gate matches the tree) and
    the push follows; a merge bringing new files is a new tree, verified again first."""
    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann", False, "--hooks")
    approve_here(ann, ONE_STAGE)
    run_json(ann, "sync", "origin")
    push = _follow_until(team, ann, "git push")
    assert push["kind"] == "human" and push["cwd"] == str(ann.resolve())
    verified = push["argv"][3].split(":")[0]
    task_wt = Path(status(ann)["taskWorktree"]["path"])
    # Main moves on the remote, by a commit holding only what the task has already.
    _land_on_main(team, "ola", {"src/s1.py": git(task_wt, "show", f"{verified}:src/s1.py") + "\n"})
    rejected = run_step(push)
    assert rejected.returncode != 0 and "rejected" in rejected.stderr
    git(ann, "fetch", "-q", "origin")
    merge = _next_of(ann)[0]
    assert merge["kind"] == "human" and merge["cwd"] == str(task_wt)
    assert merge["argv"] == ["git", "merge", "--no-edit", "origin/main"]
    assert "non-fast-forward" in merge["why"]
    assert merge["also"] == [f"git -C {ann.resolve()} fetch origin main"]
    assert run_step(merge).returncode == 0
    same = git(task_wt, "rev-parse", "HEAD")
    assert git(task_wt, "rev-parse", f"{same}^{{tree}}") == git(
        task_wt, "rev-parse", f"{verified}^{{tree}}"
    )
    step = _next_of(ann)[0]  # the merge is published, and nothing is verified again
    assert step["argv"][2:] == ["integrate", KEY, "--remote", "origin"]
    assert run_step(step).returncode == 0
    push = _next_of(ann)[0]
    assert push["argv"] == ["git", "push", "origin", f"{same}:refs/heads/main"]
    assert okstra(ann, "ci", "check", same).returncode == 0  # the gate's answer for it
    # Before it is pushed, main moves again: other.txt is new to the task.
    _land_on_main(team, "ola", {"other.txt": "ola\n"})
    assert run_step(push).returncode != 0
    git(ann, "fetch", "-q", "origin")
    merge = _next_of(ann)[0]
    assert merge["argv"] == ["git", "merge", "--no-edit", "origin/main"]
    assert run_step(merge).returncode == 0
    step = _follow_until(team, ann, "git okstra run start")
    assert step["argv"][2:] == ["run", "start", KEY, "--type", "final-verification", "--remote",
                                "origin"]  # fmt: skip
    push = _follow_until(team, ann, "git push")
    merged = push["argv"][3].split(":")[0]
    assert merged == git(task_wt, "rev-parse", "HEAD") and merged != same
    proc = run_step(push)
    assert proc.returncode == 0, proc.stderr  # through the pre-push gate: a verdict on it
    assert git(team.remote, "rev-parse", "main") == merged
    done = _next_of(ann)[0]
    assert done["argv"][2:] == ["run", "start", KEY, "--type", "release-handoff", "--remote",
                                "origin"]  # fmt: skip


def test_a_shared_tasks_run_finish_is_published_at_once_and_leased(tmp_path: Path):
    """A shared task's analysis run finishes through its remote (``next`` says ``--remote``):
    the finish is on the remote at once, leased as the start was, so two clones finishing the
    one run at the same moment leave exactly one finish and one task chain."""
    from conftest import race_jobs

    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    assert okstra(ann, "task", "new", KEY, "--type", "error-analysis").returncode == 0
    run_json(ann, "sync", "origin")
    start = _next_of(ann)[0]
    assert start["argv"][2:] == ["run", "start", KEY, "--type", "error-analysis", "--remote",
                                 "origin"]  # fmt: skip
    assert run_step(start).returncode == 0
    ben = team.clone("ben", "Ben")
    run_json(ben, "sync", "origin")
    assert _next_of(ben)[0]["kind"] == "wait"  # Ann's run: its work is hers
    finish = _next_of(ann)[0]
    assert finish["kind"] == "work"
    assert finish["argv"][2:11] == ["run", "finish", KEY, "--type", "error-analysis", "--seq",
                                    "001", "--status", "completed"]  # fmt: skip
    assert finish["argv"][11:13] == ["--remote", "origin"]
    reports = {}
    for clone in (ann, ben):
        report = Path(finish["report"].replace(str(ann.resolve()), str(clone.resolve())))
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(f"# report\n\nwritten by {clone.name}\n")
        reports[clone] = str(report)
    results = race_jobs(
        [(clone, [*finish["argv"][2:13], "--report", reports[clone]]) for clone in (ann, ben)]
    )
    codes = sorted(proc.returncode for proc in results)
    assert codes == [0, 1], [(p.returncode, p.stderr) for p in results]
    (lost,) = [p for p in results if p.returncode == 1]
    assert "error-analysis run 001 of p:g:i already finished (completed)" in lost.stderr
    published = team.on_remote("refs/okstra/tasks/")["refs/okstra/tasks/g/i"]
    events = git(team.remote, "log", "--format=%s", published).splitlines()
    assert sum(e.startswith("run finish error-analysis 001") for e in events) == 1, events
    for clone in (ann, ben):  # the loser put its finish back (or never wrote one)
        assert git(clone, "rev-parse", "refs/okstra/tasks/g/i") == published
        step = _next_of(clone)[0]
        assert step["argv"][2:] == ["run", "start", KEY, "--type", "implementation-planning",
                                    "--remote", "origin"]  # fmt: skip


def test_a_final_verification_finish_publishes_its_verdict_with_it(tmp_path: Path):
    """The finish of a shared task's final-verification run is published with the verdict it
    routed on, in one push: another clone fetching the finished run used to find release-handoff
    next and no verdict on the task's HEAD (the notes went out only with the next sync), and
    was told to verify the task over again."""
    from okstra_git.records.verdict import VERDICTS_REF

    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    approve_here(ann, ONE_STAGE)
    run_json(ann, "sync", "origin")
    ben = team.clone("ben", "Ben")
    finish = _follow_until(team, ann, "git okstra run finish")
    assert finish["argv"][2:9] == ["run", "finish", KEY, "--type", "final-verification",
                                   "--seq", "001"]  # fmt: skip
    assert "--remote" in finish["argv"]
    assert team.on_remote(VERDICTS_REF) == {}  # recorded here only, so far
    assert run_step(finish).returncode == 0
    assert team.on_remote(VERDICTS_REF) == {VERDICTS_REF: git(ann, "rev-parse", VERDICTS_REF)}
    run_json(ben, "sync", "origin")
    step = status(ben)["next"]
    assert step["argv"][2:4] == ["integrate", KEY]  # Ben has no task branch yet
    assert run_step(step).returncode == 0
    seen = status(ben)
    assert seen["verdict"] is not None and seen["verdict"]["opensGate"], seen["verdict"]
    assert seen["next"]["kind"] == "human" and seen["next"]["argv"][:2] == ["git", "push"]


def test_a_planning_finish_publishes_the_planners_approval_with_it(tmp_path: Path):
    """The planner approves the plan (plan approve) during the shared planning run, then
    finishes it as next says: the approval notes go out in the finish's push. They stayed in the
    planner's clone (its status said in step), and the first claim elsewhere recorded an
    approval of its own from the plan's marker (method A, by the claimer)."""
    from okstra_git.records.approval import APPROVALS_REF

    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    assert okstra(ann, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    run_json(ann, "sync", "origin")
    assert run_step(_next_of(ann)[0]).returncode == 0  # run start --remote origin
    plan = ann / "plans" / "i.md"
    plan.parent.mkdir()
    plan.write_text(ONE_STAGE)
    run_json(ann, "plan", "submit", KEY, str(plan))
    run_json(ann, "plan", "approve", KEY)
    assert team.on_remote(APPROVALS_REF) == {}
    assert APPROVALS_REF in status(ann)["published"]["unpublished"]  # not "in step"
    finish = _next_of(ann)[0]
    assert finish["argv"][2:4] == ["run", "finish"] and "--remote" in finish["argv"], finish
    Path(finish["report"]).parent.mkdir(parents=True, exist_ok=True)
    Path(finish["report"]).write_text("# Plan\n\nOne stage.\n")
    assert run_step(finish).returncode == 0
    assert team.on_remote(APPROVALS_REF) == {APPROVALS_REF: git(ann, "rev-parse", APPROVALS_REF)}
    ben = team.clone("ben", "Ben")
    run_json(ben, "sync", "origin")
    assert status(ben)["plan"]["approved"], status(ben)["plan"]


def test_status_names_the_first_approval_of_the_plan_as_plan_show_does(tmp_path: Path):
    """Two approval lines on one plan blob (the planner's plan approve, then a claim in a clone
    that had only the ticked marker recording it again, method A): task status said the later
    one — the claimer as the approver's recorder, at the claim's time — where plan show says
    the first."""
    from okstra_git.records.approval import Approval, approval_notes_update
    from okstra_git.records.base import from_data
    from okstra_git.services.context import open_context

    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    approve_here(ann, ONE_STAGE)
    first = status(ann)["plan"]
    ctx = open_context(ann)
    (approval,) = [a for a in _approvals(ann) if a["method"] == "B"]
    again = from_data(
        Approval,
        {**approval, "method": "A", "approvedAt": "2099-01-01T00:00:00+00:00",
         "recordedBy": "Ben <ben@example.invalid>"},
        "test",
    )  # fmt: skip
    update = approval_notes_update(ctx.repo, again)
    assert update is not None
    ctx.repo.update_refs([update], "test: the approval recorded again")
    assert len(_approvals(ann)) == 2
    shown = status(ann)["plan"]
    assert (shown["approvedAt"], shown["method"]) == (first["approvedAt"], "B"), shown
    header = okstra(ann, "plan", "show", KEY).stdout.splitlines()[0]
    assert f"at {first['approvedAt']} (method B)" in header, header


def _approvals(clone: Path) -> list[dict]:
    from okstra_git.records.approval import APPROVALS_REF

    lines = git(clone, "notes", "--ref", APPROVALS_REF, "list").splitlines()
    found = []
    for note in lines:
        text = git(clone, "notes", "--ref", APPROVALS_REF, "show", note.split()[1])
        found += [json.loads(line) for line in text.splitlines() if line.strip()]
    return found
