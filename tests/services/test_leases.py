"""Leases that live (docs/agents.md): the default lease from config, ``--lease none``, ``stage
renew`` on one clone and through a shared remote, and an expired claim seen as such by other clones.
Real clones, a real bare remote, real processes racing; leases of seconds."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import git, make_repo, okstra, race_jobs
from plans import plan_text
from team_world import CLAIMS, KEY, Team, approve_here, run_json, run_line

from okstra_git.logic.nextstep import line

FREE = plan_text([(n, [], [f"src/{n}.py"]) for n in (1, 2, 3, 4)], steps=5)
"""Four stages that depend on nothing, five steps each: a batch is one stage."""


def remote_claim(team: Team, stage: int) -> dict:
    ref = f"{CLAIMS}stage-{stage}"
    return json.loads(git(team.remote, "show", f"{ref}:claim.json"))


def subjects(repo: Path, ref: str) -> list[str]:
    return git(repo, "log", "--format=%s", ref).splitlines()


class Hold:
    """A pre-push hook in a clone that holds the first push made through it until the test
    lets it go."""

    def __init__(self, folder: Path) -> None:
        self.waiting = folder / "push-waiting"
        self.go = folder / "push-go"
        self.taken = folder / "push-taken"
        """Made (atomically, by mkdir) by the one push the hook holds; later pushes pass."""
        self.held: list[subprocess.Popen[str]] = []

    def start(self, cwd: Path, *args: str) -> subprocess.Popen[str]:
        """Start ``git okstra ARGS`` in ``cwd`` and return once its push waits in the hook."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "okstra_git", *args],
            cwd=cwd,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.held.append(proc)
        while not self.waiting.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        return proc


@contextlib.contextmanager
def held_push(clone: Path) -> Iterator[Hold]:
    """While the block runs, the first push from ``clone`` waits in its pre-push hook; it goes
    out when the block ends, and the block ends once the held command has exited.

    Nothing here depends on how fast a loaded machine runs the hook: the go-file stays until
    the held command is over (it used to be removed 0.5 s after it was made, and a hook that
    had not looked by then waited for ever), and only the first push is held (a retried push
    used to pass the hook again, re-making the waiting file the next hold then took for its
    own push's)."""
    hold = Hold(clone.parent)
    hook = clone / ".git" / "hooks" / "pre-push"
    hook.write_text(
        f"#!/bin/sh\nif mkdir {hold.taken} 2>/dev/null; then\n  touch {hold.waiting}\n"
        f"  while [ ! -e {hold.go} ]; do sleep 0.05; done\nfi\nexit 0\n"
    )
    hook.chmod(0o755)
    try:
        yield hold
    finally:
        hold.go.touch()
        for proc in hold.held:
            proc.wait(timeout=120)  # past its hook, and every retry of its push
        hook.unlink()
        hold.waiting.unlink(missing_ok=True)
        if hold.taken.exists():
            hold.taken.rmdir()
        hold.go.unlink()


def wait_past(moment: str) -> None:
    """Sleep until the ISO time ``moment`` has passed (a lease ran out)."""
    left = (datetime.fromisoformat(moment) - datetime.now(UTC)).total_seconds()
    time.sleep(max(0.0, left) + 1.1)


def test_init_sets_the_lease_every_claim_takes_unless_it_names_one(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    assert okstra(repo, "init").returncode == 0
    assert git(repo, "config", "okstra.claim.lease") == "2h"
    approve_here(repo, FREE)
    took = run_json(repo, "stage", "claim", KEY, "--stage", "1", "--no-worktree")
    claim = json.loads(git(repo, "show", f"{CLAIMS}stage-1:claim.json"))
    assert claim["leaseSeconds"] == 7200
    assert took["placements"][0]["leaseExpiresAt"] == claim["leaseExpiresAt"]
    # The directive's commands name the clone (git -C, since 868923c), so they run from anywhere.
    assert f"git -C {repo} okstra stage renew p:g:i" in took["directive"]

    forever = run_json(
        repo, "stage", "claim", KEY, "--stage", "2", "--no-worktree", "--lease", "none"
    )
    assert forever["placements"][0]["leaseExpiresAt"] is None
    assert "leaseSeconds" not in json.loads(git(repo, "show", f"{CLAIMS}stage-2:claim.json"))
    assert "stage renew" not in forever["directive"]

    # init keeps a lease already set, sets one it is given, and `none` turns the default off.
    assert okstra(repo, "init", "--lease", "30m").returncode == 0
    assert okstra(repo, "init").returncode == 0
    assert git(repo, "config", "okstra.claim.lease") == "30m"
    assert okstra(repo, "init", "--lease", "none").returncode == 0
    run_json(repo, "stage", "claim", KEY, "--stage", "3", "--no-worktree")
    assert "leaseExpiresAt" not in json.loads(git(repo, "show", f"{CLAIMS}stage-3:claim.json"))

    # A lease the config cannot hold is refused where it is read, naming the key; no claim.
    git(repo, "config", "okstra.claim.lease", "forever")
    proc = okstra(repo, "stage", "claim", KEY, "--stage", "4", "--no-worktree")
    assert proc.returncode == 2
    assert "config okstra.claim.lease = 'forever'" in proc.stderr
    assert "git config okstra.claim.lease 2h" in proc.stderr
    assert git(repo, "for-each-ref", f"{CLAIMS}stage-4") == ""
    proc = okstra(repo, "init", "--lease", "soon")
    assert proc.returncode == 2 and "--lease 'soon'" in proc.stderr


def test_renew_moves_this_clones_leases_and_refuses_what_it_does_not_hold(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    assert okstra(repo, "init").returncode == 0
    approve_here(repo, FREE)
    run_json(repo, "stage", "claim", KEY, "--stage", "1", "--no-worktree", "--lease", "10m")
    run_json(repo, "stage", "claim", KEY, "--stage", "2", "--no-worktree", "--lease", "none")
    # Without --lease a claim keeps its own length; one without a lease has nothing to renew.
    proc = okstra(repo, "stage", "renew", KEY)
    assert proc.returncode == 1 and "stage 2 of p:g:i was claimed without a lease" in proc.stderr
    done = run_json(repo, "stage", "renew", KEY, "--stage", "1")
    (renewed,) = done["renewed"]
    claim = json.loads(git(repo, "show", f"{CLAIMS}stage-1:claim.json"))
    assert renewed["leaseExpiresAt"] == claim["leaseExpiresAt"] and claim["leaseSeconds"] == 600
    assert done["publishedTo"] is None
    both = run_json(repo, "stage", "renew", KEY, "--lease", "1h")
    assert [r["stage"] for r in both["renewed"]] == [1, 2]
    assert both["renewed"][1]["previous"] is None
    assert subjects(repo, f"{CLAIMS}stage-1")[0].startswith("renew stage 1 lease to ")

    proc = okstra(repo, "stage", "renew", KEY, "--stage", "3")
    assert proc.returncode == 1 and "stage 3 of p:g:i has no claim" in proc.stderr
    git(repo, "config", "user.name", "Someone Else")
    run_json(repo, "stage", "release", KEY, "--stage", "1", "--reason", "done with it", "--force")
    proc = okstra(repo, "stage", "renew", KEY, "--stage", "1")
    assert proc.returncode == 1 and "only a started claim has a lease to renew" in proc.stderr


def test_this_clones_own_lapsed_claim_is_renewed_by_its_next_step(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    assert okstra(repo, "init").returncode == 0
    approve_here(repo, plan_text([(1, [], ["src/1.py"])], steps=2))
    took = run_json(repo, "stage", "claim", KEY, "--lease", "1s")
    wait_past(took["placements"][0]["leaseExpiresAt"])
    step = run_json(repo, "task", "status", KEY)["next"]
    assert step["argv"] == ["git", "okstra", "stage", "renew", KEY, "--stage", "1"], step
    assert "nobody has taken it over yet" in step["why"]
    proc = run_line(line(step["argv"], step["cwd"]))
    assert proc.returncode == 0, proc.stderr
    state = run_json(repo, "task", "status", KEY)
    assert state["stages"][0]["state"] == "started"
    assert state["next"]["argv"][2:4] == ["stage", "done"]


def test_a_renewed_claim_outlives_its_first_lease_and_an_unrenewed_one_is_taken_over(
    tmp_path: Path,
):
    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    bob = team.clone("bob", "Bob")
    approve_here(ann, plan_text([(1, [], ["src/1.py"]), (2, [], ["src/2.py"])], steps=5))
    run_json(ann, "sync", "origin")
    first = run_json(
        ann, "stage", "claim", KEY, "--stage", "1", "--remote", "origin", "--lease", "3s"
    )
    run_json(ann, "stage", "claim", KEY, "--stage", "2", "--remote", "origin", "--lease", "2s")
    # Through the remote, because the claim was taken there.
    renewed = run_json(ann, "stage", "renew", KEY, "--stage", "1", "--lease", "1h")
    assert renewed["publishedTo"] == "origin"
    assert remote_claim(team, 1)["leaseExpiresAt"] == renewed["renewed"][0]["leaseExpiresAt"]
    wait_past(first["placements"][0]["leaseExpiresAt"])  # both first leases have run out

    run_json(bob, "sync", "origin")
    listed = {row["stage"]: row["status"] for row in run_json(bob, "stage", "list", KEY)["stages"]}
    assert listed == {1: "started", 2: "expired"}
    ready = run_json(bob, "stage", "ready", KEY, "--take-over-expired")
    assert ready["takeOver"] == [2] and 1 not in ready["ready"]
    status = run_json(bob, "task", "status", KEY)
    assert [s["state"] for s in status["stages"][:2]] == ["started", "expired"]
    text = okstra(bob, "task", "status", KEY).stdout
    assert " 2 expired " in text
    proc = okstra(
        bob, "stage", "claim", KEY, "--stage", "1", "--take-over-expired", "--remote", "origin"
    )
    assert proc.returncode == 1 and "held by run implementation-001" in proc.stderr

    # Bob's next step is to take it over, and it runs as printed.
    step = status["next"]
    assert step["argv"][2:] == ["stage", "claim", KEY, "--take-over-expired", "--remote", "origin"]
    proc = run_line(line(step["argv"], step["cwd"]))
    assert proc.returncode == 0, proc.stderr
    assert remote_claim(team, 2)["takeOverOf"] == "implementation-002"
    assert remote_claim(team, 2)["user"].startswith("Bob")
    # Ann's renewal of the stage she lost is refused, naming who holds it; nothing lands.
    before = git(team.remote, "rev-parse", f"{CLAIMS}stage-2")
    proc = okstra(ann, "stage", "renew", KEY, "--stage", "2")
    assert proc.returncode == 1 and "changed hands" in proc.stderr, proc.stderr
    assert git(team.remote, "rev-parse", f"{CLAIMS}stage-2") == before


@pytest.mark.slow
def test_a_renewal_through_the_remote_loses_no_race(tmp_path: Path):
    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    bob = team.clone("bob", "Bob")
    approve_here(ann, plan_text([(n, [], [f"src/{n}.py"]) for n in range(1, 6)], steps=5))
    run_json(ann, "sync", "origin")

    def expired_claim(stage: int) -> str:
        """Ann claims ``stage`` through the remote with a 1s lease; returns the run once the
        lease ran out and Bob has fetched it."""
        took = run_json(
            ann, "stage", "claim", KEY, "--stage", str(stage), "--remote", "origin",
            "--lease", "1s", "--no-worktree",
        )  # fmt: skip
        wait_past(took["placements"][0]["leaseExpiresAt"])
        run_json(bob, "sync", "origin")
        return took["runId"]

    def agree(stage: int) -> None:
        for clone in (ann, bob):  # both clones come to agree with the remote
            run_json(clone, "sync", "origin")
            ref = f"{CLAIMS}stage-{stage}"
            assert git(clone, "rev-parse", ref) == git(team.remote, "rev-parse", ref)

    renew = ["stage", "renew", KEY, "--lease", "1h", "--stage"]
    take = ["stage", "claim", KEY, "--take-over-expired", "--remote", "origin", "--no-worktree"]

    # The renewal's push is held (a pre-push hook waits) while Bob takes the stage over: the
    # renewal loses on the remote, is put back here, and is refused naming the new holder.
    run = expired_claim(1)
    with held_push(ann) as hold:
        renewing = hold.start(ann, *renew, "1")
        assert okstra(bob, *take, "--stage", "1").returncode == 0
    assert renewing.wait(timeout=120) == 1
    assert "changed hands before its lease was renewed" in renewing.stderr.read()
    assert remote_claim(team, 1)["takeOverOf"] == run
    agree(1)

    # The take-over's push is held while Ann renews: the take-over loses and is refused, the
    # stage stays Ann's with the new lease.
    run = expired_claim(2)
    with held_push(bob) as hold:
        taking = hold.start(bob, *take, "--stage", "2")
        assert okstra(ann, *renew, "2").returncode == 0
    assert taking.wait(timeout=120) == 1
    assert f"stage 2 is not ready: held by run {run}" in taking.stderr.read()
    assert remote_claim(team, 2)["runId"] == run and remote_claim(team, 2)["leaseSeconds"] == 3600
    agree(2)

    # Both at the same moment: exactly one lands.
    run = expired_claim(3)
    renewed, taken = race_jobs([(ann, [*renew, "3"]), (bob, [*take, "--stage", "3"])])
    assert sorted([renewed.returncode, taken.returncode]) == [0, 1]
    holder = remote_claim(team, 3)
    assert (holder["runId"] == run) == (renewed.returncode == 0)
    agree(3)

    # Three renewals of one claim at once, while the other clone claims another stage: every
    # renewal lands (one commit each on the remote), the last one's lease is the one kept, and
    # the other clone's claim lands too.
    run_json(ann, "stage", "claim", KEY, "--stage", "4", "--remote", "origin", "--no-worktree")
    run_json(bob, "sync", "origin")
    renew = ["stage", "renew", KEY, "--stage", "4", "--json"]
    claim = ["stage", "claim", KEY, "--stage", "5", "--remote", "origin", "--no-worktree"]
    *renewals, other = race_jobs([(ann, renew), (ann, renew), (ann, renew), (bob, claim)])
    assert [r.returncode for r in renewals] == [0, 0, 0], [r.stderr for r in renewals]
    assert other.returncode == 0, other.stderr
    landed = [json.loads(r.stdout)["renewed"][0]["leaseExpiresAt"] for r in renewals]
    history = subjects(team.remote, f"{CLAIMS}stage-4")
    # A renewal that sets the lease already there (two in the same second) has nothing to
    # write: one commit per distinct lease, none lost (CI saw three in one second: one commit).
    renewed_to = {
        s.split(" lease to ")[1].split(" ")[0] for s in history if s.startswith("renew stage 4")
    }
    assert renewed_to == set(landed), history
    assert remote_claim(team, 4)["leaseExpiresAt"] == max(landed)
    assert remote_claim(team, 5)["user"].startswith("Bob")
