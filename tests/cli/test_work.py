"""``git okstra work``: real loops (separate processes) in real clones of one bare remote,
running a small shell script as the agent; killed with real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import git, make_repo, okstra
from plans import plan_text
from team_world import CLAIMS, KEY, Team, approve_here

AGENT = """#!/bin/sh
# The agent: commits its stage's file and writes its report; AGENT_HOLD makes it wait
# (for ever) instead, AGENT_FAIL=N makes it fail stage N, AGENT_DIRTY=N leave N uncommitted.
set -e
test -f "$OKSTRA_DIRECTIVE"
echo "$OKSTRA_STAGE $OKSTRA_RUN $OKSTRA_WORKTREE" >> "$AGENT_LOG"
if [ -n "$AGENT_HOLD" ]; then
    echo $$ > "$AGENT_HOLD"
    while :; do sleep 0.1; done
fi
mkdir -p src
echo "STAGE = $OKSTRA_STAGE  # $AGENT_NAME" > "src/$OKSTRA_STAGE.py"
if [ "$AGENT_DIRTY" = "$OKSTRA_STAGE" ]; then exit 0; fi
git add -A
git commit -q -m "stage $OKSTRA_STAGE by $AGENT_NAME"
printf '# Stage %s\\n\\nBy %s.\\n' "$OKSTRA_STAGE" "$AGENT_NAME" > "$OKSTRA_REPORT"
if [ "$AGENT_FAIL" = "$OKSTRA_STAGE" ]; then exit 3; fi
"""


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    script = tmp_path / "agent.sh"
    script.write_text(AGENT)
    script.chmod(0o755)
    return script


def loop(clone: Path, agent: Path, *options: str, **env: str) -> subprocess.Popen[str]:
    """``git okstra work KEY OPTIONS -- agent`` as its own process in ``clone``."""
    return subprocess.Popen(
        [sys.executable, "-m", "okstra_git", "work", KEY, *options, "--json", "--", str(agent)],
        cwd=clone,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={
            **os.environ,
            "AGENT_NAME": clone.name,
            "AGENT_LOG": str(clone.parent / f"{clone.name}.log"),
            "OKSTRA_DEBUG": "",
            **env,
        },
    )


def finish(proc: subprocess.Popen[str], timeout: float = 240) -> tuple[int, dict, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, json.loads(out), err


def history(team: Team, stage: int) -> list[str]:
    """The subjects of the remote's claim ref of ``stage``, oldest first."""
    out = git(team.remote, "log", "--reverse", "--format=%s", f"{CLAIMS}stage-{stage}")
    return out.splitlines()


def remote_claim(team: Team, stage: int) -> dict:
    return json.loads(git(team.remote, "show", f"{CLAIMS}stage-{stage}:claim.json"))


def wait_for(path: Path, proc: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def two_clones(tmp_path: Path, plan: str) -> tuple[Team, Path, Path]:
    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    bob = team.clone("bob", "Bob")
    approve_here(ann, plan)
    assert okstra(ann, "sync", "origin").returncode == 0
    assert okstra(bob, "sync", "origin").returncode == 0
    return team, ann, bob


DIAMOND = plan_text(
    [
        (1, [], ["src/1.py"]),
        (2, [1], ["src/2.py"]),
        (3, [1], ["src/3.py"]),
        (4, [2, 3], ["src/4.py"]),
    ],
    steps=5,
)
"""1, then 2 and 3 side by side, then 4 joining them; five steps each: a batch is one stage."""


def test_two_loops_in_two_clones_finish_a_diamond_and_no_stage_is_taken_twice(
    tmp_path: Path, agent: Path
):
    team, ann, bob = two_clones(tmp_path, DIAMOND)
    loops = [loop(clone, agent, "--remote", "origin", "--lease", "1h") for clone in (ann, bob)]
    results = [finish(proc) for proc in loops]
    for code, data, err in results:
        assert code == 0, err
        assert data["finished"] and not data["released"] and not data["lost"]
    done = sorted(n for _, data, _ in results for n in data["done"])
    assert done == [1, 2, 3, 4]  # each stage done by exactly one loop
    for stage in (1, 2, 3, 4):
        subjects = history(team, stage)
        assert len(subjects) == 2, subjects  # one claim, one done: never taken twice
        assert subjects[0].startswith(f"claim stage {stage} for implementation-")
        assert subjects[1].startswith(f"done stage {stage} at ")
        claim = remote_claim(team, stage)
        assert claim["reportPath"].endswith(f"stage-{stage}-report-{claim['runId']}.md")
    for _, _, err in results:  # each says so when it ends
        assert "okstra work: every stage of p:g:i is done" in err
    assert "okstra work: claimed stage" in "".join(err for *_, err in results)
    # Every stage's base holds its dependencies' work, wherever they were done.
    for stage, deps in ((2, [1]), (3, [1]), (4, [2, 3])):
        base = remote_claim(team, stage)["baseCommit"]
        for dep in deps:
            done_at = remote_claim(team, dep)["headCommit"]
            git(team.remote, "merge-base", "--is-ancestor", done_at, base)
    # The one published task branch holds every stage, each merged once.
    task = git(team.remote, "rev-parse", "refs/okstra/branches/g/i/task")
    for stage in (1, 2, 3, 4):
        git(
            team.remote,
            "merge-base",
            "--is-ancestor",
            remote_claim(team, stage)["headCommit"],
            task,
        )
    merges = git(team.remote, "log", "--merges", "--format=%s", task).splitlines()
    stage_merges = sorted(m.split(" (")[0] for m in merges if m.startswith("integrate stage "))
    assert stage_merges == [f"integrate stage {n}" for n in (1, 2, 3, 4)], merges


@pytest.mark.slow
def test_a_killed_loop_leaves_a_claim_that_expires_and_the_other_loop_takes_over(
    tmp_path: Path, agent: Path
):
    team, ann, bob = two_clones(tmp_path, plan_text([(1, [], ["src/1.py"])], steps=2))
    hold = tmp_path / "ann-agent.pid"
    stuck = loop(ann, agent, "--remote", "origin", "--lease", "3s", AGENT_HOLD=str(hold))
    wait_for(hold, stuck)
    first = remote_claim(team, 1)
    # Ann's loop renews the lease while her agent works: well past the first lease, Bob's loop
    # waits, and the stage stays Ann's.
    patient = loop(bob, agent, "--remote", "origin", "--lease", "3s")
    time.sleep(7)
    assert patient.poll() is None
    assert remote_claim(team, 1)["runId"] == first["runId"]
    assert remote_claim(team, 1)["leaseExpiresAt"] > first["leaseExpiresAt"]
    assert [s for s in history(team, 1) if s.startswith("renew stage 1")]

    stuck.send_signal(signal.SIGKILL)  # no release, no renewal any more
    os.kill(int(hold.read_text()), signal.SIGKILL)  # the agent it left running (its pipes)
    stuck.communicate(timeout=30)
    code, data, err = finish(patient)
    assert code == 0, err
    assert data["done"] == [1] and data["finished"]
    subjects = history(team, 1)
    assert subjects[0] == f"claim stage 1 for {first['runId']}"
    taken = [s for s in subjects if s.startswith("take over stage 1")]
    assert taken == [
        f"take over stage 1 from {first['runId']} for {remote_claim(team, 1)['runId']}"
    ]
    assert subjects[-1].startswith("done stage 1 at ")
    assert remote_claim(team, 1)["user"].startswith("Bob")
    assert "taken over from" in err


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_sigterm_or_ctrl_c_releases_at_once_and_stops_the_agent(
    tmp_path: Path, agent: Path, stop: signal.Signals, status: int
):
    team, ann, _ = two_clones(tmp_path, plan_text([(1, [], ["src/1.py"])], steps=2))
    hold = tmp_path / "ann-agent.pid"
    proc = loop(ann, agent, "--remote", "origin", "--lease", "1h", AGENT_HOLD=str(hold))
    wait_for(hold, proc)
    agent_pid = int(hold.read_text())
    proc.send_signal(stop)  # Ctrl-C: the terminal's SIGINT reaches the loop, not the agent
    code, data, err = finish(proc, timeout=60)
    assert code == status, err
    assert data["stopped"] == stop.name and data["released"] == {"1": data["released"]["1"]}
    claim = remote_claim(team, 1)  # released on the remote, not only here
    assert claim["status"] == "released"
    assert claim["releaseReason"] == f"git okstra work: the work loop was stopped ({stop.name})"
    with pytest.raises(ProcessLookupError):
        os.kill(agent_pid, 0)  # the agent was stopped with it
    task = json.loads(git(team.remote, "show", "refs/okstra/tasks/g/i:task.json"))
    assert task["latestRun"]["status"] == "error"  # the run it started is over, and says so


def test_a_failing_or_untidy_agent_gets_its_stage_released_with_its_commits(
    tmp_path: Path, agent: Path
):
    repo = make_repo(tmp_path / "repo")
    assert okstra(repo, "init").returncode == 0
    approve_here(repo, plan_text([(n, [], [f"src/{n}.py"]) for n in (1, 2, 3)], steps=5))
    proc = loop(repo, agent, "--lease", "none", AGENT_FAIL="1", AGENT_DIRTY="2")
    code, data, err = finish(proc)
    assert code == 1, err
    assert data["done"] == [3] and not data["finished"]
    assert data["released"] == {
        "1": "the command exited 3",
        "2": "the command left uncommitted changes: src/",
    }
    assert "nothing left for this loop: the command failed on stage(s) 1, 2" in err
    one = json.loads(git(repo, "show", f"{CLAIMS}stage-1:claim.json"))
    assert one["status"] == "released"
    # The commit the failing agent made is kept on the stage's branch.
    assert git(repo, "log", "-1", "--format=%s", one["branch"]) == "stage 1 by repo"
    # Each stage ran once: a failed stage is not taken again by the loop.
    runs = (tmp_path / "repo.log").read_text().splitlines()
    assert sorted(line.split()[0] for line in runs) == ["1", "2", "3"]


def test_once_works_one_batch_and_bad_commands_are_refused_before_any_claim(
    tmp_path: Path, agent: Path
):
    repo = make_repo(tmp_path / "repo")
    assert okstra(repo, "init").returncode == 0
    approve_here(repo, plan_text([(1, [], ["src/1.py"]), (2, [], ["src/2.py"])], steps=5))
    proc = okstra(repo, "work", KEY, "--", str(tmp_path / "no-such-agent"))
    assert proc.returncode == 2 and "not found" in proc.stderr
    proc = okstra(repo, "work", KEY)
    assert proc.returncode == 2
    assert git(repo, "for-each-ref", CLAIMS) == ""
    code, data, err = finish(loop(repo, agent, "--once"))
    assert code == 0, err
    assert data["done"] == [1] and not data["finished"]
    env = (tmp_path / "repo.log").read_text().split()
    assert env[:2] == ["1", "implementation-001"]


def test_on_a_terminal_the_loop_says_one_line_a_step_and_git_draws_no_meter(
    tmp_path: Path, agent: Path
):
    """stderr a terminal, where fetch, push and checkout draw git's progress meter: none of the
    loop's claims, dones and integrates does, so its lines stay one a step."""
    import pty
    import select

    _, ann, _ = two_clones(tmp_path, plan_text([(1, [], ["src/1.py"])], steps=2))
    main, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "okstra_git", "work", KEY, "--remote", "origin", "--", str(agent)],
        cwd=ann,
        stdout=subprocess.PIPE,
        stderr=side,
        env={**os.environ, "AGENT_NAME": "ann", "AGENT_LOG": str(tmp_path / "ann.log")},
    )
    os.close(side)
    said = b""
    while True:  # until the loop exits and the terminal is closed
        ready, _, _ = select.select([main], [], [], 60)
        assert ready, said
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: every writer of the terminal is gone
            break
        if not chunk:
            break
        said += chunk
    os.close(main)
    assert proc.wait(timeout=60) == 0, said
    lines = said.decode().replace("\r\n", "\n").splitlines()
    assert lines and all(line.startswith("okstra work: ") for line in lines), lines
    assert any("published to origin" in line for line in lines)


def test_a_loop_works_first_the_stage_its_own_clone_claimed_before_it(tmp_path: Path, agent: Path):
    """A stage claimed in this clone by hand (`stage claim`, as `next` says) is this loop's
    to work: it used to wait for it as for another run's, until its own lease ran out."""
    team, ann, _ = two_clones(tmp_path, plan_text([(1, [], ["src/1.py"])], steps=5))
    claimed = json.loads(okstra(ann, "stage", "claim", KEY, "--remote", "origin", "--json").stdout)
    (stage,) = claimed["stages"]
    code, data, err = finish(loop(ann, agent, "--remote", "origin", "--once"))
    assert code == 0, err
    assert data["done"] == [stage], err
    assert f"resumed stage {stage} ({claimed['runId']}, this clone's claim)" in err
    done = remote_claim(team, stage)
    assert done["runId"] == claimed["runId"] and done["status"] == "done"
    subjects = history(team, stage)
    assert subjects[0].startswith(f"claim stage {stage} for {claimed['runId']}")
    assert any(s.startswith("renew") for s in subjects), subjects
    assert subjects[-1].startswith(f"done stage {stage} at ")


def test_stage_works_the_one_chosen_stage_waiting_for_its_dependency(tmp_path: Path, agent: Path):
    """Trial T17's agents wanted one stage each: `work --stage N` claims N alone — waiting
    while its dependency is another loop's — works it, integrates it and stops; the stages
    nobody chose stay unclaimed."""
    team, ann, bob = two_clones(tmp_path, DIAMOND)
    three = loop(ann, agent, "--remote", "origin", "--lease", "1h", "--stage", "3")
    one = loop(bob, agent, "--remote", "origin", "--lease", "1h", "--stage", "1")
    (code1, data1, err1), (code3, data3, err3) = finish(one), finish(three)
    assert (code1, code3) == (0, 0), (err1, err3)
    assert (data1["done"], data3["done"]) == ([1], [3])
    assert data3["finished"] and data3["stage"] == 3
    assert "okstra work: stage 3 of p:g:i is done" in err3
    # Until bob's stage 1 was done; only the chosen stage is waited for.
    assert "okstra work: waiting: stage 3: waiting for stage(s) 1 (not done)\n" in err3
    assert set(team.on_remote(CLAIMS)) == {f"{CLAIMS}stage-1", f"{CLAIMS}stage-3"}
    helped = okstra(ann, "work", "-h").stdout
    assert "--stage N" in helped and "Work stage N alone" in " ".join(helped.split())
    bad = okstra(ann, "work", KEY, "--stage", "9", "--", str(agent))
    assert bad.returncode == 2 and "the plan of p:g:i has stages 1, 2, 3, 4" in bad.stderr
