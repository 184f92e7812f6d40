"""The words of what a sync stops on, from real clones of a bare remote: each kind of true
conflict (its summary in ``--json`` and on stderr) and each record fetched from a remote that
is not adopted (``invalid``). views/sync.py words them from the values the sync service hands."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from claims_world import approved_task
from conftest import git, okstra
from hooks_world import pair
from sync_world import KEY, TASK_REF, new_task, shared_between_two, sync_json, wide_plan

from okstra_git.core.tracking import tracking_name
from okstra_git.services import plans
from okstra_git.services.context import open_context

STAGE1 = "refs/okstra/claims/g/i/stage-1"


def stopped(clone: Path) -> tuple[dict, str]:
    """A sync that stops: its --json, and the text's stderr."""
    proc = okstra(clone, "sync", "--json")
    assert proc.returncode == 1, proc.stderr
    text = okstra(clone, "sync")
    assert text.returncode == 1
    return json.loads(proc.stdout), text.stderr


def summary(clone: Path) -> str:
    """The one conflict's summary, the same in --json and on stderr's first line."""
    out, err = stopped(clone)
    (conflict,) = out["conflicts"]
    first = err.splitlines()[0]
    assert first == f"git okstra: sync with origin stopped for task {KEY}: {conflict['summary']}."
    return conflict["summary"]


def edit(clone: Path, ref: str, files: dict[str, bytes | None], message: str = "edited") -> str:
    """A commit on ``ref`` of ``clone`` changing ``files`` (``None`` removes), with plain git."""
    env = {**os.environ, "GIT_INDEX_FILE": str(clone / ".git" / "edit-index")}

    def plumbing(*args: str, data: bytes | None = None) -> str:
        done = subprocess.run(
            ["git", *args], cwd=clone, env=env, input=data, capture_output=True, check=True
        )
        return done.stdout.decode().strip()

    plumbing("read-tree", ref)
    for path, data in files.items():
        if data is None:
            plumbing("update-index", "--force-remove", path)
            continue
        oid = plumbing("hash-object", "-w", "--stdin", data=data)
        plumbing("update-index", "--add", "--cacheinfo", f"100644,{oid},{path}")
    commit = plumbing("commit-tree", plumbing("write-tree"), "-p", ref, "-m", message)
    git(clone, "update-ref", ref, commit)
    return commit


def edited_manifest(clone: Path, **changes: object) -> dict[str, bytes | None]:
    data = json.loads(git(clone, "show", f"{TASK_REF}:task.json"))
    return {"task.json": json.dumps({**data, **changes}, indent=2).encode()}


@pytest.fixture
def shared(tmp_path: Path) -> tuple[Path, Path]:
    """Alice's and Bob's clones, both holding task p:g:i from the remote."""
    a, b, _ = shared_between_two(tmp_path)
    return a, b


def start(clone: Path, phase: str = "error-analysis") -> None:
    assert okstra(clone, "run", "start", KEY, "--type", phase).returncode == 0


def test_a_run_started_on_both_names_both_sides_and_each_choice(shared):
    a, b = shared
    start(a)
    sync_json(a)
    start(b)
    out, err = stopped(b)
    (conflict,) = out["conflicts"]
    assert conflict["summary"] == "run error-analysis-001 was started on both sides"
    here, there = conflict["here"], conflict["there"]
    assert err == (
        f"git okstra: sync with origin stopped for task {KEY}: run error-analysis-001 was "
        "started on both sides.\n"
        f"  here:   {here['commit'][:12]} run start error-analysis ({here['author']}, "
        f"{here['when']})\n"
        f"  origin: {there['commit'][:12]} run start error-analysis ({there['author']}, "
        f"{there['when']})\n"
        "  Nothing of this task was pushed or rewritten; every other task was synced. Choose "
        "one:\n"
        "  - keep origin's side and drop yours (kept under refs/okstra-dropped/): git okstra "
        f"sync origin --task {KEY} --take-theirs error-analysis-001\n"
        "  - keep both: yours moves to the next free number after origin's: git okstra sync "
        f"origin --task {KEY} --renumber error-analysis-001\n"
    )


def test_a_run_changed_on_both(shared):
    a, b = shared
    start(a)
    sync_json(a)
    sync_json(b)
    run = "runs/error-analysis/001.json"
    for clone, who in ((a, "Alice <a@x>"), (b, "Bob <b@x>")):
        data = json.loads(git(clone, "show", f"{TASK_REF}:{run}"))
        edit(clone, TASK_REF, {run: json.dumps({**data, "startedBy": who}, indent=2).encode()})
    sync_json(a)
    assert summary(b) == "run error-analysis-001 was changed on both sides"


def test_a_task_file_changed_on_both(shared):
    a, b = shared
    edit(a, TASK_REF, {"brief.md": b"Alice's brief\n"})
    sync_json(a)
    edit(b, TASK_REF, {"brief.md": b"Bob's brief\n"})
    assert summary(b) == "brief.md was changed on both sides"


def test_a_task_field_changed_differently_on_both(shared):
    a, b = shared
    edit(a, TASK_REF, edited_manifest(a, workCategory="bugfix"))
    sync_json(a)
    edit(b, TASK_REF, edited_manifest(b, workCategory="refactor"))
    assert summary(b) == "task.json field workCategory was changed differently on both sides"


def test_a_task_created_on_both(tmp_path: Path):
    a, _ = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    new_task(a)
    sync_json(a)
    new_task(b, kind="error-analysis")
    assert summary(b) == "task p:g:i was created on both sides"


def test_a_plan_submitted_on_both(shared, tmp_path: Path):
    a, b = shared
    for clone in (a, b):
        ctx = open_context(clone)
        (clone / "plan.md").write_text(wide_plan(2) + f"\n{clone.name}\n", "utf-8")
        plans.submit_plan(ctx, ctx.key(KEY), str(clone / "plan.md"))
    sync_json(a)
    assert summary(b) == "plan snapshot 001 was submitted on both sides"


def test_the_same_stage_claimed_on_both_names_both_holders(tmp_path: Path):
    a, _ = pair(tmp_path, "a")
    approved_task(a, KEY, wide_plan(2))
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    sync_json(b)
    for clone in (a, b):
        proc = okstra(clone, "stage", "claim", KEY, "--no-worktree", "--stage", "1")
        assert proc.returncode == 0, proc.stderr
        if clone == a:
            sync_json(a)
    said = summary(b)
    mine, theirs = (
        json.loads(git(b, "show", f"{ref}:claim.json"))
        for ref in (STAGE1, tracking_name("origin", STAGE1))
    )

    def holder(claim: dict) -> str:
        return f"{claim['runId']} ({claim['status']}) by {claim['user']} on {claim['host']}"

    assert said == (
        f"stage 1 was claimed on both sides: here {holder(mine)}, on origin {holder(theirs)}"
    )


def test_a_remote_task_failing_its_checks_is_never_replayed_onto(shared):
    a, b = shared
    edit(a, TASK_REF, edited_manifest(a, currentStatus=7))
    git(a, "push", "-q", "origin", f"{TASK_REF}:{TASK_REF}")
    start(b)
    assert summary(b) == (
        "origin's record fails its checks, so no event is replayed onto it: "
        "refs/okstra/tasks/g/i:task.json: currentStatus: 7 is not one of "
        '["active", "awaiting-approval", "done"]'
    )


def test_a_local_event_that_would_store_an_invalid_task(shared):
    a, b = shared
    start(a)
    sync_json(a)
    edit(b, TASK_REF, edited_manifest(b, workCategory=7), "category 7")
    assert summary(b) == (
        "replaying 'category 7' would store an invalid task.json: workCategory: expected string, "
        "found integer"
    )


def test_records_fetched_that_fail_their_checks(shared, tmp_path: Path):
    a, b = shared
    remote = tmp_path / "remote.git"
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=remote, input=b"x", capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    git(remote, "update-ref", "refs/okstra/tasks/g/blob", blob)
    tree = git(remote, "rev-parse", f"{TASK_REF}^{{tree}}")
    raw = f"tree {tree}\nauthor Ev\nil <e@x> 1 +0000\ncommitter Ev\nil <e@x> 1 +0000\n\nbroken\n"
    broken = subprocess.run(
        ["git", "hash-object", "--literally", "-t", "commit", "-w", "--stdin"],
        cwd=remote, input=raw.encode(), capture_output=True,
    ).stdout.decode().strip()  # fmt: skip
    deep = git(remote, "commit-tree", tree, "-p", broken, "-m", "on top")
    git(remote, "update-ref", "refs/okstra/tasks/g/deep", deep)
    notes = edit(a, TASK_REF, {})
    git(a, "push", "-q", "origin", f"{notes}:refs/notes/okstra/evil")
    out, err = stopped(b)
    invalid = [
        f"refs/okstra/tasks/g/blob: the fetched {blob[:12]} is not a commit okstra can read",
        f"refs/okstra/tasks/g/deep: the fetched {deep[:12]} holds a commit that cannot be read",
        "refs/notes/okstra/evil: not an okstra notes ref (refs/notes/okstra/approvals, "
        "refs/notes/okstra/verdicts)",
    ]
    assert out["invalid"] == invalid
    assert err == (
        "git okstra: 3 record(s) fetched from origin fail their checks and were not adopted "
        "(nothing here acts on them; whoever wrote them must fix them on origin):\n"
        + "".join(f"  - {p}\n" for p in invalid)
    )
