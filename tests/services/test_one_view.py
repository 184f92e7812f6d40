"""One view of remote state (docs/concurrency-and-sync.md): after a plain `git fetch` the pre-push
hook, `ci check`, `verify show` and the approval gate read local and fetched notes alike; `task
show`/`list`, `stage list` and `verify target` read local task and claim refs and all say "run `git
okstra sync R`" the same way when those lag; a fresh clone says sync, not `task new`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import KEY as VERDICT_KEY
from hooks_world import add_verdict, commit, pair, push
from sync_world import KEY, TASK_REF, new_task, sync_json

from okstra_git.git.repo import GitRepo
from okstra_git.records.approval import APPROVALS_REF, Approval, read_approvals
from okstra_git.records.verdict import VERDICTS_REF

SYNC = "git okstra sync origin"


def fetching_clone(tmp_path: Path, name: str) -> Path:
    """A clone set up with `init --remote origin`, so a plain `git fetch` brings okstra data."""
    clone, _ = pair(tmp_path, name)
    proc = okstra(clone, "init", "--remote", "origin")
    assert proc.returncode == 0, proc.stderr
    return clone


def test_after_a_plain_fetch_hook_ci_and_verify_show_agree(tmp_path: Path):
    a, _remote = pair(tmp_path, "a")
    head = commit(a, "work")
    git(a, "push", "-q", "origin", "HEAD:refs/heads/topic")
    add_verdict(a)
    sync_json(a)
    b = fetching_clone(tmp_path, "b")
    git(b, "fetch", "-q")
    git(b, "merge", "-q", "--ff-only", "origin/topic")
    assert okstra(b, "hooks", "install").returncode == 0
    assert git(b, "for-each-ref", "refs/notes/okstra/") == ""  # not synced: fetched only

    shown = json.loads(okstra(b, "verify", "show", head, "--json").stdout)
    assert [v["verdict"] for v in shown["verdicts"]] == ["accepted"]
    assert okstra(b, "ci", "check", head).returncode == 0
    assert push(b, "origin", "main").returncode == 0

    # A forged line on the remote counts nowhere: not for the hook, not for verify show.
    other = commit(b, "more")
    tree = git(b, "rev-parse", f"{other}^{{tree}}")
    line = json.dumps({"taskKey": VERDICT_KEY, "verdict": "accepted", "scope": "whole-task"})
    GitRepo.open(a).add_notes_lines(VERDICTS_REF, {other: [line], tree: [line]}, "forged")
    git(a, "push", "-q", "origin", VERDICTS_REF)
    git(b, "fetch", "-q")
    shown = json.loads(okstra(b, "verify", "show", other, "--json").stdout)
    assert shown["verdicts"] == [] and "does not match verdict.schema.json" in shown["problems"][0]
    assert okstra(b, "ci", "check", other).returncode == 1
    refused = push(b, "origin", "main")
    assert refused.returncode != 0 and "does not match verdict.schema.json" in refused.stderr


def test_a_fetched_approval_counts_as_a_synced_one(tmp_path: Path):
    a, _remote = pair(tmp_path, "a")
    blob = "ab" * 20
    approval = Approval(KEY, "plans/i.md", blob, "Alice <a@x>", "2026-01-01T00:00:00+00:00", "B")
    GitRepo.open(a).add_note_lines(APPROVALS_REF, blob, [approval.to_line()], "approve")
    sync_json(a)
    b = fetching_clone(tmp_path, "b")
    assert read_approvals(GitRepo.open(b), blob, KEY) == []
    git(b, "fetch", "-q")
    assert read_approvals(GitRepo.open(b), blob, KEY) == [approval]


@pytest.mark.parametrize(
    "args",
    [
        ("task", "show", KEY),
        ("task", "log", KEY),
        ("stage", "list", KEY),
        ("verify", "target", KEY),
        ("plan", "status", KEY),
    ],
)
def test_a_fresh_clone_with_fetched_refs_says_sync_not_task_new(tmp_path: Path, args):
    a, _remote = pair(tmp_path, "a")
    new_task(a)
    sync_json(a)
    b = fetching_clone(tmp_path, "b")
    git(b, "fetch", "-q")
    proc = okstra(b, *args, "--json")
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hint"] == f"git -C {b.resolve()} okstra sync origin"
    assert "task new" not in out["error"]
    assert f"task {KEY} is not here yet, but origin has it" in out["error"]
    # A plain clone (no `init --remote`) fetches no okstra refs: it is told to set that up
    # first (the task may be on origin, as here), and offered task new second.
    c, _ = pair(tmp_path, "c")
    told = json.loads(okstra(c, *args, "--json").stdout)
    assert told["hint"] == f"git -C {c.resolve()} okstra init --remote origin", told
    assert f"run task new {KEY} --type TYPE" in told["error"], told


def test_every_reader_says_sync_the_same_way_when_local_records_lag(tmp_path: Path):
    a, _remote = pair(tmp_path, "a")
    new_task(a)
    new_task(a, "p:g:other")
    sync_json(a)
    b = fetching_clone(tmp_path, "b")
    sync_json(b)
    for args in (("task", "show", KEY), ("stage", "list", KEY), ("task", "list")):
        assert okstra(b, *args).stderr == "", args  # in step: nothing to say
    assert okstra(a, "run", "start", KEY, "--type", "error-analysis").returncode == 0
    new_task(a, "p:h:new")
    sync_json(a)
    git(b, "fetch", "-q")

    for args, what in (
        (("task", "show", KEY), f"task {KEY} here"),
        (("stage", "list", KEY), f"the claims of {KEY} here"),
        (("verify", "target", KEY), f"the record of {KEY} here"),
        (("task", "list"), "the task list here"),
    ):
        proc = okstra(b, *args)
        note = [ln for ln in proc.stderr.splitlines() if ln.startswith("git okstra: note:")]
        assert len(note) == 1, (args, proc.stderr)
        assert note[0].startswith(f"git okstra: note: {what} is older than what was fetched")
        assert f"{TASK_REF} behind" in note[0] and note[0].endswith(SYNC)
    listed = json.loads(okstra(b, "task", "list", "--json").stdout)
    states = {lag["ref"]: lag["state"] for lag in listed["remoteLag"]}
    assert states == {TASK_REF: "behind", "refs/okstra/tasks/h/new": "missing-here"}
    shown = json.loads(okstra(b, "task", "show", KEY, "--json").stdout)
    assert shown["remoteLag"][0]["state"] == "behind"
    # Local-only work is not "older": no note, but --json says it is unpublished.
    sync_json(b)
    assert okstra(b, "run", "start", KEY, "--type", "requirements-discovery").returncode == 0
    proc = okstra(b, "task", "show", KEY, "--json")
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["remoteLag"][0]["state"] == "ahead"
