"""Records from a remote are untrusted (docs/concurrency-and-sync.md): schema-checked, their branch
and path fields confined, a bad one named (ref, field) and never acted on — the forged claim.json
that made `worktree prune` delete a local `release/1` branch, among others. Real clones and a bare
remote."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import git, make_repo, okstra
from hooks_world import pair, remote_ref
from sync_world import KEY, TASK_REF, new_task, refs, sync_json
from task_world import Task

from okstra_git.records.incoming import claim_data_problems, task_data_problems

SHA = "ab" * 20
STAGE1 = "refs/okstra/claims/g/i/stage-1"
CLAIM = {
    "schemaVersion": 1,
    "taskKey": KEY,
    "stage": 1,
    "runId": "implementation-001",
    "status": "done",
    "startedAt": "2026-01-01T00:00:00+00:00",
    "host": "h",
    "user": "Mallory <m@x>",
    "baseCommit": SHA,
    "startedHeadCommit": SHA,
    "worktreePath": "/home/m/wt/p/g/i/stage-1",
    "branch": "okstra/g/i/stage-1",
    "batch": [1],
    "doneAt": "2026-01-01T00:00:00+00:00",
    "headCommit": SHA,
}


def forge(
    clone: Path, ref: str, files: dict[str, bytes | tuple[str, bytes]], parent: str | None = None
) -> str:
    """A commit holding ``files`` (paths may have folders), written with plain git, at ``ref``
    of ``clone``: what anyone with push access can put on a shared remote. A ``(mode, data)``
    value is an entry of that mode: ``160000`` (a gitlink: ``data`` is the commit id it names),
    ``120000`` (a symbolic link to ``data``), ``100755``."""
    env = {**os.environ, "GIT_INDEX_FILE": str(clone / ".git" / "forge-index")}

    def plumbing(*args: str, data: bytes | None = None) -> str:
        done = subprocess.run(
            ["git", *args], cwd=clone, env=env, input=data, capture_output=True, check=True
        )
        return done.stdout.decode().strip()

    plumbing("read-tree", "--empty")
    for path, value in files.items():
        mode, data = value if isinstance(value, tuple) else ("100644", value)
        if mode == "160000":
            oid = data.decode()
        else:
            oid = plumbing("hash-object", "-w", "--stdin", data=data)
        plumbing("update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}")
    tree = plumbing("write-tree")
    commit = plumbing("commit-tree", tree, "-m", "forged", *(["-p", parent] if parent else []))
    git(clone, "update-ref", ref, commit)
    return commit


def claim_json(**changes: object) -> bytes:
    return json.dumps({**CLAIM, **changes}, indent=2).encode()


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The victim's clone (holding task p:g:i from the remote), Mallory's clone, the remote."""
    victim, remote = pair(tmp_path, "victim")
    new_task(victim)
    sync_json(victim)
    mallory, _ = pair(tmp_path, "mallory")
    sync_json(mallory)
    return victim, mallory, remote


def test_a_forged_claim_naming_release_1_is_reported_and_never_adopted(world):
    victim, mallory, remote = world
    release = git(victim, "rev-parse", "HEAD")
    git(victim, "branch", "release/1", release)
    forge(mallory, STAGE1, {"claim.json": claim_json(branch="release/1")})
    new_task(mallory, "p:good:one")  # a valid record pushed alongside is still adopted
    git(mallory, "push", "-q", "origin", f"{STAGE1}:{STAGE1}", "refs/okstra/*:refs/okstra/*")

    proc = okstra(victim, "sync", "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["invalid"] == [
        f"{STAGE1}:claim.json: branch 'release/1' is not the stage's own branch okstra/g/i/stage-1"
    ]
    assert {r["ref"]: r["state"] for r in out["refs"]}[STAGE1] == "invalid"
    assert git(victim, "rev-parse", "--verify", "-q", STAGE1, check=False) == ""
    assert git(victim, "rev-parse", "refs/okstra/tasks/good/one")
    text = okstra(victim, "sync").stderr
    assert "fail their checks and were not adopted" in text and "release/1" in text

    # Nothing acts on it: prune has no claim to follow, the branch stays.
    okstra(victim, "worktree", "prune", KEY, "--force")
    assert git(victim, "rev-parse", "refs/heads/release/1") == release
    assert remote_ref(remote, STAGE1)  # and nothing here deleted the remote's copy


def test_a_forged_claim_already_stored_here_is_refused_by_every_reader(world):
    victim, _mallory, _remote = world
    release = git(victim, "rev-parse", "HEAD")
    git(victim, "branch", "release/1", release)
    forged = forge(victim, STAGE1, {"claim.json": claim_json(branch="release/1")})
    for args in (("worktree", "prune", KEY, "--force"), ("stage", "list", KEY)):
        proc = okstra(victim, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "is not a claim okstra wrote, so it is never acted on" in proc.stderr
        assert f"git update-ref -d {STAGE1} {forged}" in proc.stderr
    assert git(victim, "rev-parse", "refs/heads/release/1") == release


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"branch": "main"}, "branch 'main' is not the stage's own branch okstra/g/i/stage-1"),
        ({"branch": "okstra/g/i/stage-2"}, "not the stage's own branch"),
        ({"stage": 2, "batch": [2]}, "stage 2 is not the stage of its ref (stage-1)"),
        ({"taskKey": "p:other:x"}, "taskKey 'p:other:x' is not the task of its ref (g/i)"),
        ({"worktreePath": "relative/path"}, "is not a plain absolute path"),
        ({"worktreePath": "/a/../../etc"}, "is not a plain absolute path"),
        ({"worktreePath": ""}, "branch and worktreePath are not both set or both empty"),
        ({"status": "pwned"}, 'status: "pwned" is not one of'),
        ({"headCommit": SHA + "\n"}, "headCommit: "),
        ({"runId": "release-001"}, "run id 'release-001' is not implementation-<seq>"),
        ({"host": "h\x1b[2J"}, "host: holds a control character"),
        ({"batch": [2]}, "batch [2] does not hold its own stage"),
        ({"extra": 1}, "unexpected field 'extra'"),
    ],
)
def test_claim_checks_name_the_field(changes: dict, problem: str):
    found = claim_data_problems({**CLAIM, **changes}, STAGE1)
    assert any(problem in p for p in found), found
    assert all(p.startswith(f"{STAGE1}:claim.json: ") for p in found)


def test_a_valid_claim_passes():
    assert claim_data_problems(CLAIM, STAGE1) == []
    assert claim_data_problems({**CLAIM, "branch": "", "worktreePath": ""}, STAGE1) == []


def task_json(victim: Path) -> dict:
    return json.loads(git(victim, "show", f"{TASK_REF}:task.json"))


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"hooks/post-checkout": b"#!/bin/sh\n"}, "hooks/post-checkout: not a file okstra keeps"),
        ({"runs/pwn/001.json": b"{}"}, "runs/pwn/001.json: not a file okstra keeps"),
        (
            {"runs/error-analysis/001.json": b'{"schemaVersion": 1}'},
            "runs/error-analysis/001.json: (top): missing 'taskKey'",
        ),
    ],
)
def test_a_forged_task_tree_is_not_adopted(world, files: dict, problem: str):
    victim, mallory, remote = world
    before = git(victim, "rev-parse", TASK_REF)
    manifest = json.dumps(task_json(victim)).encode()
    forge(mallory, TASK_REF, {"task.json": manifest, **files}, parent=before)
    git(mallory, "push", "-q", "origin", f"{TASK_REF}:{TASK_REF}")
    proc = okstra(victim, "sync", "--json")
    assert proc.returncode == 1, proc.stderr
    invalid = json.loads(proc.stdout)["invalid"]
    assert any(problem in p and p.startswith(TASK_REF) for p in invalid), invalid
    assert git(victim, "rev-parse", TASK_REF) == before
    assert remote_ref(remote, TASK_REF) != before


ELSEWHERE = ("160000", b"cd" * 20)  # a gitlink naming a commit nobody has


@pytest.mark.parametrize(
    ("path", "entry", "problem"),
    [
        ("plans/plan-001.md", ELSEWHERE, "plans/plan-001.md: a submodule (gitlink)"),
        ("plans/plan-001.md", ("120000", b"/etc/passwd"), "plans/plan-001.md: a symbolic link"),
        ("brief.md", ("100755", b"# brief\n"), "brief.md: an executable file"),
    ],
)
def test_a_task_tree_entry_that_is_not_a_plain_file_is_never_adopted(world, path, entry, problem):
    """With local events to replay (the replay reads the remote's files) and without them (the
    tip would be adopted as it is): named, not adopted, and the rest of the sync goes on."""
    victim, mallory, remote = world
    before = git(victim, "rev-parse", TASK_REF)
    manifest = json.dumps(task_json(victim)).encode()
    forge(mallory, TASK_REF, {"task.json": manifest, path: entry}, parent=before)
    new_task(mallory, "p:g:other")
    git(mallory, "push", "-q", "origin", TASK_REF, "refs/okstra/tasks/g/other")
    for local_event in (False, True):
        if local_event:
            assert okstra(victim, "run", "start", KEY, "--type", "error-analysis").returncode == 0
        mine = git(victim, "rev-parse", TASK_REF)
        proc = okstra(victim, "sync", "--json")
        assert "internal error" not in proc.stderr, proc.stderr
        assert proc.returncode == 1, proc.stdout + proc.stderr
        said = proc.stdout + proc.stderr
        assert f"{TASK_REF}:{problem}" in said, said
        assert git(victim, "rev-parse", TASK_REF) == mine  # nothing adopted
        assert refs(victim, "refs/okstra/tasks/g/other")  # the rest of the sync went on
    assert remote_ref(remote, TASK_REF) != before


def test_a_claim_whose_record_is_a_gitlink_is_never_adopted(world):
    victim, mallory, _remote = world
    forge(mallory, STAGE1, {"claim.json": ELSEWHERE})
    git(mallory, "push", "-q", "origin", STAGE1)
    proc = okstra(victim, "sync", "--json")
    assert "internal error" not in proc.stderr and proc.returncode == 1, proc.stderr
    assert f"{STAGE1}:claim.json: a submodule (gitlink)" in proc.stdout
    assert not refs(victim, STAGE1)
    for command in (("task", "status", KEY), ("stage", "list", KEY), ("task", "list")):
        proc = okstra(victim, *command)  # readers of what the fetch brought, too
        assert "internal error" not in proc.stderr, (command, proc.stderr)


def test_a_run_record_pointing_outside_its_workspace_is_not_adopted(world):
    victim, mallory, _remote = world
    okstra(mallory, "run", "start", KEY, "--type", "error-analysis")
    head = git(mallory, "rev-parse", TASK_REF)
    run = json.loads(git(mallory, "show", f"{TASK_REF}:runs/error-analysis/001.json"))
    run["paths"]["report"] = "../../.bashrc"
    files = {
        "task.json": git(mallory, "show", f"{TASK_REF}:task.json").encode() + b"\n",
        "runs/error-analysis/001.json": json.dumps(run).encode(),
    }
    forge(mallory, TASK_REF, files, parent=head)
    git(mallory, "push", "-q", "origin", f"{TASK_REF}:{TASK_REF}")
    out = json.loads(okstra(victim, "sync", "--json").stdout)
    assert out["invalid"] == [
        f"{TASK_REF}:runs/error-analysis/001.json: paths are not the run's own workspace paths"
    ]


def test_refs_and_notes_of_other_shapes_are_never_adopted(world):
    victim, mallory, _remote = world
    forge(mallory, "refs/okstra/evil/x", {"claim.json": claim_json()})
    forge(mallory, "refs/notes/okstra/evil", {"ab/" + "cd" * 19: b"line\n"})
    git(mallory, "push", "-q", "origin", "refs/okstra/evil/x", "refs/notes/okstra/evil")
    out = json.loads(okstra(victim, "sync", "--json").stdout)
    assert any(
        p.startswith("refs/okstra/evil/x: not an okstra task or claim ref") for p in out["invalid"]
    )
    assert any(
        p.startswith("refs/notes/okstra/evil: not an okstra notes ref") for p in out["invalid"]
    )
    assert "refs/okstra/evil/x" not in refs(victim, "refs/okstra/")
    assert git(victim, "rev-parse", "--verify", "-q", "refs/notes/okstra/evil", check=False) == ""


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"taskKey": "p:x:y"}, "taskKey 'p:x:y' belongs at refs/okstra/tasks/x/y"),
        ({"briefPath": "../../etc/passwd"}, "briefPath '../../etc/passwd' is not brief.md"),
        ({"taskGroup": "zz"}, "are not the parts of taskKey"),
        (
            {"latestPlan": {"seq": "001", "path": "/etc/passwd", "blob": SHA}},
            "latestPlan.path: '/etc/passwd' is not a plain path inside the work tree",
        ),
    ],
)
def test_task_checks_name_the_field(changes: dict, problem: str):
    data = {
        "schemaVersion": 1,
        "taskKey": KEY,
        "projectId": "p",
        "taskGroup": "g",
        "taskId": "i",
        "taskType": "error-analysis",
        "workCategory": "feature",
        "currentStatus": "active",
        "createdAt": "x",
        "updatedAt": "x",
        "workflow": {
            "currentPhase": "error-analysis",
            "currentPhaseState": "pending",
            "phaseStates": {},
            "awaitingApproval": False,
            "routingStatus": "ready",
        },
    }
    assert task_data_problems(data, TASK_REF) == []
    found = task_data_problems({**data, **changes}, TASK_REF)
    assert any(problem in p for p in found), found


def test_prune_leaves_alone_a_worktree_a_claim_names_that_is_not_this_clones(tmp_path: Path):
    """A done claim whose worktree path names the task worktree (or any folder that is not the
    stage's own here) never makes prune remove it."""
    repo = make_repo(tmp_path / "repo")
    task = Task(repo)
    task.implement(1)
    assert task.task_wt is not None
    ref = "refs/okstra/claims/grp/feat/stage-1"
    claim = json.loads(git(repo, "show", f"{ref}:claim.json"))
    claim["worktreePath"] = str(task.task_wt)  # the task worktree: clean, merged, registered
    forge(repo, ref, {"claim.json": json.dumps(claim).encode()}, parent=git(repo, "rev-parse", ref))
    proc = okstra(repo, "worktree", "prune", "proj:grp:feat", "--force", "--json")
    assert proc.returncode == 0, proc.stderr
    skipped = json.loads(proc.stdout)["skipped"]
    assert any("which is not this clone's" in line for line in skipped), skipped
    assert (task.task_wt / ".git").is_file()
    assert git(task.task_wt, "rev-parse", "HEAD")
