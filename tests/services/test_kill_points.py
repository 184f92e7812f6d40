"""kill -9 at every write (issue 9): after any kill, the next command either completes the
operation or finds the previous state — no half-made worktree, no lost commit, no file left
where ``git status`` shows it, and every stale lock named with the one command that clears it.

Each command kills itself with SIGKILL at a named crash point (``OKSTRA_TEST_CRASH_AT``,
``okstra_git.core.crashpoints``; ``NAME#N`` is the point's N-th pass in the process):
``in-transaction`` (a ref transaction holds every lock, has written nothing),
``worktree-checked-out`` / ``worktree-registered`` (a new worktree is checked out at its hidden
sibling / pointed at its place, not yet moved there), ``worktree-moved-aside`` /
``worktree-unregistered`` (a worktree being removed is renamed aside / its admin entry is
gone), ``temp-written`` (an atomic file write has its temp file, not yet renamed),
``after-refs`` (a claim landed here, not yet published with ``--remote`` nor provisioned),
``sync-pushed`` (the remote took a sync's push; its tracking refs and staging refs are not yet
updated). One real SIGKILL from outside, in the middle of a large checkout, completes the
picture.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claims_world import CLAIMS, KEY, TASK_REF, approved_task, claim_refs, commit_in, show_claim
from conftest import git, okstra
from plans import LINEAR_PLAN

from okstra_git.services import claims, plans, tasks
from okstra_git.services.context import open_context


def killed(cwd: Path, point: str, *args: str) -> None:
    """Run ``git okstra ARGS`` and make sure it died at ``point``."""
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        env={**os.environ, "OKSTRA_TEST_CRASH_AT": point},
    )
    assert proc.returncode == -signal.SIGKILL, (point, args, proc.returncode, proc.stderr)


def ok(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = okstra(cwd, *args)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc


def clear_stale_locks(cwd: Path, *args: str) -> None:
    """The retry after a kill inside a transaction is refused (exit 3) at once, naming the
    killed writer's locks and one ``rm``; run exactly that command."""
    proc = okstra(cwd, *args, "--json")
    assert proc.returncode == 3, (args, proc.returncode, proc.stderr)
    failure = json.loads(proc.stdout)
    assert re.search(r"left by okstra process [0-9]+ on .*, which was killed", failure["error"])
    assert failure["error"].endswith(f"Remove them: {failure['hint']}")
    rm = shlex.split(failure["hint"])
    assert rm[0] == "rm" and all(path.endswith(".lock") for path in rm[1:])
    subprocess.run(rm, check=True)


def whole(worktree: Path) -> None:
    """A worktree with every tracked file checked out, nothing staged, nothing unknown."""
    assert git(worktree, "status", "--porcelain", "--untracked-files=all") == "", worktree


def no_half_made(repo: Path, settled: bool = False) -> None:
    """Every registered worktree at its real path is whole: nothing a user or agent could
    mistake for their own work. Only okstra's hidden siblings (``.<leaf>.okstra-new`` being
    made, ``.okstra-old`` being removed) may be partial, right after a kill; once a command
    has completed (``settled``) none is left."""
    listing = git(repo, "worktree", "list", "--porcelain")
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = Path(line[len("worktree ") :])
            hidden = path.name.endswith((".okstra-new", ".okstra-old"))
            assert not (settled and hidden), listing
            if path.exists() and path != repo and not hidden:
                whole(path)


def reachable(repo: Path, *commits: str) -> None:
    for commit in commits:
        assert git(repo, "for-each-ref", "--contains", commit, "--format=%(refname)"), commit


# ---------------------------------------------------------------------------------------------
# Making worktrees


@pytest.mark.parametrize(
    "point",
    [
        "worktree-checked-out#1",  # the task worktree, before the claim
        "worktree-registered#1",
        "worktree-checked-out#2",  # the stage worktree, after the claim landed
        "worktree-registered#2",
    ],
)
def test_a_claim_killed_while_making_a_worktree_is_redone_whole(repo: Path, point: str) -> None:
    folder = approved_task(repo)
    killed(repo, point, "stage", "claim", KEY)
    no_half_made(repo)
    assert not (folder / "stage-1").exists()  # never half there: absent until complete
    if point.endswith("#1"):
        assert not (folder / "task").exists()
        assert claim_refs(repo) == {}  # nothing claimed yet: the previous state
        ok(repo, "stage", "claim", KEY)
    else:
        # Claimed, its stage worktree not made: the plain retry points at the resume.
        assert show_claim(repo, 1)["status"] == "started"
        again = okstra(repo, "stage", "claim", KEY)
        assert again.returncode == 1, again.stderr
        resume = shlex.split(again.stderr.split("make them with: ")[1].splitlines()[0])
        assert resume[2:] == ["stage", "claim", KEY, "--resume", "implementation-001"]
        data = json.loads(ok(repo, *resume[2:], "--json").stdout)
        assert data["placements"][0]["leftUncommitted"] == []
    assert not list(folder.glob(".*okstra*"))
    no_half_made(repo, settled=True)
    whole(folder / "task")
    whole(folder / "stage-1")
    assert git(folder / "stage-1", "rev-parse", "--abbrev-ref", "HEAD") == "okstra/g/i/stage-1"


def test_a_real_kill_in_the_middle_of_a_large_checkout(repo: Path) -> None:
    """SIGKILL from outside while libgit2 is writing files (the issue saw 158–3938 of 4000
    files left): the place of the worktree is empty, and the next command makes it whole."""
    for d in range(20):
        (repo / f"d{d:02}").mkdir()
        for f in range(100):
            (repo / f"d{d:02}" / f"f{f:03}.txt").write_text(f"{d} {f}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "2000 files")
    folder = approved_task(repo)
    staging = folder / ".task.okstra-new"
    proc = subprocess.Popen(
        [sys.executable, "-m", "okstra_git", "stage", "claim", KEY],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not (staging / "d05").exists() and proc.poll() is None:
            time.sleep(0.001)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert 0 < len(list(staging.glob("d*/*.txt"))) < 2000  # killed mid-checkout indeed
    assert not (folder / "task").exists() and claim_refs(repo) == {}
    ok(repo, "stage", "claim", KEY)
    no_half_made(repo, settled=True)
    for name in ("task", "stage-1"):
        whole(folder / name)
        assert len(list((folder / name).glob("d*/*.txt"))) == 2000
    assert not staging.exists()


# ---------------------------------------------------------------------------------------------
# The stage lifecycle: claim, release, done, prune


def test_every_write_of_the_stage_lifecycle_survives_a_kill(repo: Path) -> None:
    folder = approved_task(repo)
    ctx = open_context(repo)
    key = ctx.key(KEY)
    claims.claim(ctx, key)
    stage1 = folder / "stage-1"
    reports = ".okstra/tasks/g/i/runs/implementation/reports"

    # release: killed inside its transaction, the claim is still started; the retry names the
    # killed writer's lock, and after that one rm the release lands.
    release = ("stage", "release", KEY, "--stage", "1", "--reason", "x", "--run")
    killed(repo, "in-transaction", *release, "implementation-001")
    assert show_claim(repo, 1)["status"] == "started"
    clear_stale_locks(repo, *release, "implementation-001")
    ok(repo, *release, "implementation-001")
    assert show_claim(repo, 1)["status"] == "released"
    claims.claim(ctx, key)  # implementation-002 continues in the same worktree

    # done: killed in the claim update, nothing changed; killed in the run's finish, the
    # rerun of the very same command is a no-op on the claim and finishes the run.
    one = commit_in(stage1, "src/schema.py")
    (stage1 / reports).mkdir(parents=True)
    (stage1 / reports / "stage-1.md").write_text("# stage 1\n")
    done1 = ("stage", "done", KEY, "--stage", "1", "--report", f"{reports}/stage-1.md")
    killed(stage1, "in-transaction", *done1)
    assert show_claim(repo, 1)["status"] == "started"
    clear_stale_locks(stage1, *done1)
    killed(stage1, "in-transaction#2", *done1)
    assert show_claim(repo, 1)["status"] == "done"
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/002.json"))
    assert run["status"] == "running"  # interrupted between its two writes
    clear_stale_locks(stage1, *done1)
    rerun = json.loads(ok(stage1, *done1, "--json").stdout)
    assert rerun["already"] and rerun["runFinished"]
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/002.json"))
    assert run["status"] == "completed"
    assert not (rerun := json.loads(ok(stage1, *done1, "--json").stdout))["runFinished"]
    assert rerun["already"]

    # Stages 2 and 3; stage 3 gets a commit after it was done (unmerged: only --force prunes
    # it, keeping that commit under refs/okstra-kept/).
    git(folder / "task", "merge", "-q", "okstra/g/i/stage-1")
    claims.claim(ctx, key)
    two = commit_in(folder / "stage-2", "src/cache.py")
    three = commit_in(folder / "stage-3", "src/auth.py")
    claims.done(ctx, key, 2)
    claims.done(ctx, key, 3)
    for n in (2, 3):
        git(folder / "task", "merge", "-q", "--no-edit", f"okstra/g/i/stage-{n}")
    extra = commit_in(folder / "stage-3", "after-done.py")
    assert okstra(repo, "worktree", "prune", KEY).returncode == 1

    # prune --force, killed at each of its writes in turn; each time nothing is lost and no
    # half-deleted worktree is left, and the next run picks up where the last one stopped.
    prune = ("worktree", "prune", KEY, "--force")
    killed(repo, "in-transaction", *prune)  # pinning the unmerged commit
    assert git(repo, "for-each-ref", "refs/okstra-kept/") == ""
    clear_stale_locks(repo, *prune)
    killed(repo, "temp-written", *prune)  # copying stage 1's report out
    assert list((repo / reports).glob("stage-1.md")) == []
    killed(repo, "worktree-moved-aside", *prune)
    assert not stage1.exists()
    killed(repo, "worktree-unregistered", *prune)
    killed(repo, "in-transaction", *prune)  # deleting stage 1's branch
    clear_stale_locks(repo, *prune)
    killed(repo, "worktree-moved-aside#2", *prune)  # stage 2 went whole, stage 3 half-way
    no_half_made(repo)
    reachable(repo, one, two, three, extra)

    result = json.loads(ok(repo, *prune, "--json").stdout)
    assert result["removed"] == [3]
    assert result["kept"] == []  # pinned by the first run that got past its transaction
    assert git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/okstra-kept/") == (
        f"refs/okstra-kept/g/i/stage-3/{extra} {extra}"
    )
    assert (repo / reports / "stage-1.md").read_text() == "# stage 1\n"
    for n in (1, 2, 3):
        assert not (folder / f"stage-{n}").exists()
        assert git(repo, "branch", "--list", f"okstra/g/i/stage-{n}") == ""
    assert not list(folder.glob(".*okstra*"))
    assert ok(repo, *prune).stdout.strip() == "nothing to prune"
    reachable(repo, one, two, three, extra)
    no_half_made(repo, settled=True)
    assert set(claim_refs(repo)) == {f"{CLAIMS}stage-{n}" for n in (1, 2, 3)}


def test_an_interrupted_run_is_finished_by_the_commands_printed(repo: Path) -> None:
    """An agent that died holding its stage: each message names the next command, and running
    exactly those frees the stage and finishes the run, with nothing left running."""
    folder = approved_task(repo)
    ok(repo, "stage", "claim", KEY)
    work = commit_in(folder / "stage-1", "half.py")
    blocked = okstra(repo, "stage", "claim", KEY)
    assert blocked.returncode == 1
    line = next(ln for ln in blocked.stderr.splitlines() if "was interrupted" in ln)
    release = shlex.split(line.split("claimed again: ")[1])
    assert release[2:] == [
        "stage", "release", KEY, "--stage", "1", "--run", "implementation-001",
        "--reason", "interrupted",
    ]  # fmt: skip
    released = ok(repo, *release[2:])
    finish = shlex.split(released.stdout.splitlines()[-1].split("still running; ")[1])
    ok(repo, *finish[2:])
    run = json.loads(git(repo, "show", f"{TASK_REF}:runs/implementation/001.json"))
    assert run["status"] == "error"
    again = json.loads(ok(repo, "stage", "claim", KEY, "--json").stdout)
    assert again["runId"] == "implementation-002"
    assert again["placements"][0]["startedHeadCommit"] == work  # the work continues


# ---------------------------------------------------------------------------------------------
# Approving a plan


def test_plan_approve_killed_at_each_write(repo: Path) -> None:
    ctx = open_context(repo)
    key = ctx.key(KEY)
    tasks.new_task(ctx, key, "implementation-planning", "feature", None)
    (repo / "plan.md").write_text(LINEAR_PLAN)
    plans.submit_plan(ctx, key, str(repo / "plan.md"))
    git(repo, "add", "plan.md")
    git(repo, "commit", "-q", "-m", "plan")

    # Killed with the new plan in its temp file: the plan is untouched, and nothing that git
    # status shows is left beside it (the temp file is under .okstra/, swept on the next run).
    killed(repo, "temp-written", "plan", "approve", KEY)
    assert (repo / "plan.md").read_text() == LINEAR_PLAN
    assert [
        ln for ln in git(repo, "status", "--porcelain").splitlines() if ".okstra" not in ln
    ] == []
    assert list((repo / ".okstra" / "tmp").iterdir())  # the killed writer's temp file

    # Killed recording the approval: the file is ticked, no approval is noted; the rerun
    # records it without adding a second audit line.
    killed(repo, "in-transaction", "plan", "approve", KEY)
    ticked = (repo / "plan.md").read_text()
    assert "- [x] Approved" in ticked and ticked.count("Approved at (CLI ack):") == 1
    assert git(repo, "notes", "--ref", "okstra/approvals", "list", check=False) == ""
    clear_stale_locks(repo, "plan", "approve", KEY)
    ok(repo, "plan", "approve", KEY)
    assert (repo / "plan.md").read_text() == ticked
    assert len(git(repo, "notes", "--ref", "okstra/approvals", "list").splitlines()) == 1
    assert list((repo / ".okstra" / "tmp").iterdir()) == []
    assert ok(repo, "plan", "status", KEY)


# ---------------------------------------------------------------------------------------------
# Locks okstra did not write


def test_a_lock_no_okstra_writer_recorded_is_named_by_its_age(repo: Path) -> None:
    """git's own lock files say nothing about their writer: one that is old is named (a live
    writer holds a ref lock for milliseconds), with its age and the rm, as what it may be."""
    approved_task(repo)
    lock = repo / ".git" / f"{TASK_REF}.lock"
    lock.write_text("")
    old = time.time() - 120
    os.utime(lock, (old, old))
    proc = okstra(repo, "stage", "claim", KEY)
    assert proc.returncode == 3, proc.stderr
    assert f"{lock} (2m old)" in proc.stderr and "a git or okstra process holds them" in proc.stderr
    assert shlex.split(proc.stderr.split("remove them: ")[1].splitlines()[0]) == ["rm", str(lock)]
    assert claim_refs(repo) == {}
    lock.unlink()
    ok(repo, "stage", "claim", KEY)


def test_a_lock_left_on_a_branch_okstra_must_create_is_named(repo: Path) -> None:
    folder = approved_task(repo)
    lock = repo / ".git" / "refs" / "heads" / "okstra" / "g" / "i" / "task.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    proc = okstra(repo, "stage", "claim", KEY)
    assert proc.returncode == 1, proc.stderr
    assert "cannot create branch okstra/g/i/task" in proc.stderr and "internal" not in proc.stderr
    assert f"hint: rm {lock}\n" in proc.stderr
    assert claim_refs(repo) == {} and not (folder / "task").exists()
    lock.unlink()
    ok(repo, "stage", "claim", KEY)


def test_a_lock_inside_a_remote_on_this_machine_is_named_not_blamed_on_a_machine(
    tmp_path: Path,
) -> None:
    from hooks_world import pair

    work, remote = pair(tmp_path, "a")
    ctx = open_context(work)
    tasks.new_task(ctx, ctx.key(KEY), "implementation-planning", "feature", None)
    lock = remote / f"{TASK_REF}.lock"  # what a push killed inside the remote leaves
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    proc = okstra(work, "sync", "origin")
    assert proc.returncode == 3, proc.stderr
    assert "another machine" not in proc.stderr
    assert f"git push origin ({remote}, a repository on this machine) is blocked" in proc.stderr
    assert shlex.split(proc.stderr.split("remove them: ")[1].splitlines()[0]) == ["rm", str(lock)]
    lock.unlink()
    ok(work, "sync", "origin")
    assert git(remote, "rev-parse", TASK_REF) == git(work, "rev-parse", TASK_REF)


# -- through a shared remote: a claim published after the kill, a sync killed after its push --


def test_a_remote_claim_killed_before_its_push_is_published_or_settled_by_sync(
    tmp_path: Path,
) -> None:
    """``stage claim --remote`` killed once the claim landed here and before it was pushed: the
    next sync publishes it when the remote did not move, and when another clone claimed the
    stage meanwhile, sync stops on the task naming both claims and the one command that settles
    it — nothing is overwritten on either side."""
    from hooks_world import pair
    from team_world import KEY as TEAM_KEY
    from team_world import TWO_FREE, approve_here

    a, _ = pair(tmp_path, "one/calc")
    b, _ = pair(tmp_path, "two/calc")
    approve_here(a, TWO_FREE)
    ok(a, "sync", "origin")
    ok(b, "sync", "origin")
    claim = ("stage", "claim", TEAM_KEY, "--remote", "origin", "--no-worktree")
    killed(a, "after-refs", *claim, "--stage", "1")
    assert "; 2 pushed" in ok(a, "sync", "origin").stdout  # the claim ref and the task ref
    ok(b, "sync", "origin")
    refused = okstra(b, *claim, "--stage", "1")
    assert refused.returncode == 1 and "held by run implementation-001" in refused.stderr

    killed(a, "after-refs", *claim, "--stage", "2")
    ok(b, *claim, "--stage", "2")  # the remote moves on before a publishes
    stopped = okstra(a, "sync", "origin")
    assert stopped.returncode == 1 and "stage 2 was claimed on both sides" in stopped.stderr
    settle = next(
        line.split(": ", 1)[1] for line in stopped.stderr.splitlines() if "--take-theirs" in line
    )
    ok(a, *shlex.split(settle)[2:])  # the printed command, "git okstra …"
    assert git(a, "rev-parse", "refs/okstra/claims/g/i/stage-2") == git(
        b, "rev-parse", "refs/okstra/claims/g/i/stage-2"
    )
    assert git(a, "for-each-ref", "refs/okstra-dropped/"), "a's claim is kept, not lost"


def test_a_sync_killed_after_its_push_leaves_nothing_behind(tmp_path: Path) -> None:
    """Killed between ``git push`` and moving its tracking refs: the remote has the refs, the
    next sync finds them in step. Killed on the staging path (a conflict held a task back), the
    staging refs it left are swept by the next sync."""
    from hooks_world import pair
    from team_world import KEY as TEAM_KEY
    from team_world import TWO_FREE, approve_here

    a, _ = pair(tmp_path, "one/calc")
    b, _ = pair(tmp_path, "two/calc")
    approve_here(a, TWO_FREE)
    killed(a, "sync-pushed", "sync", "origin")
    assert "0 pushed" in ok(a, "sync", "origin").stdout
    ok(b, "sync", "origin")
    ok(b, "task", "show", TEAM_KEY)

    # A conflict on the task holds it back, so the next push goes through staging refs.
    claim = ("stage", "claim", TEAM_KEY, "--stage", "1", "--remote", "origin", "--no-worktree")
    killed(a, "after-refs", *claim)
    ok(b, *claim)
    approve_here(a, TWO_FREE, key="p:g:second")
    killed(a, "sync-pushed", "sync", "origin")
    assert git(a, "for-each-ref", "refs/okstra-outgoing/"), "the killed sync's staging refs"
    assert okstra(a, "sync", "origin").returncode == 1  # the conflict still stands
    assert not git(a, "for-each-ref", "refs/okstra-outgoing/")
    ok(b, "sync", "origin")
    ok(b, "task", "show", "p:g:second")
