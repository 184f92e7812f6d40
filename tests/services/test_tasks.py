"""Tasks as refs (docs/storage.md) through the real CLI: round trip, bad input, races, crashes."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import git, okstra, race

from okstra_git.core.keys import parse_task_key
from okstra_git.git.repo import GitRepo
from okstra_git.records.task import BULK_FROM, load_task
from okstra_git.records.taskindex import INDEX_PATH


def refs_snapshot(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/okstra/")


def test_task_round_trip_readable_with_plain_git(repo: Path) -> None:
    (repo / "brief.md").write_text("Add a cache.\n")
    proc = okstra(
        repo,
        "task",
        "new",
        "p:g:i",
        "--type",
        "error-analysis",
        "--brief",
        "brief.md",
        "--category",
        "bugfix",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ref"] == "refs/okstra/tasks/g/i"
    manifest = json.loads(git(repo, "show", "refs/okstra/tasks/g/i:task.json"))
    assert manifest["taskKey"] == "p:g:i"
    assert manifest["workCategory"] == "bugfix"
    assert manifest["workflow"]["currentPhase"] == "error-analysis"
    assert git(repo, "show", "refs/okstra/tasks/g/i:brief.md") == "Add a cache."
    shown = json.loads(okstra(repo, "task", "show", "p:g:i", "--json").stdout)
    assert shown["task"] == manifest
    again = okstra(repo, "task", "new", "p:g:i", "--type", "error-analysis")
    assert again.returncode == 1 and "already exists" in again.stderr


def test_project_id_defaults_to_config_then_folder(repo: Path) -> None:
    assert okstra(repo, "task", "new", "g:i", "--type", "implementation").returncode == 0
    assert json.loads(git(repo, "show", "refs/okstra/tasks/g/i:task.json"))["projectId"] == "repo"
    git(repo, "config", "okstra.projectId", "calc")
    assert okstra(repo, "task", "new", "g:j", "--type", "implementation").returncode == 0
    assert okstra(repo, "task", "show", "calc:g:j").returncode == 0


def test_run_lifecycle_moves_the_workflow(repo: Path) -> None:
    okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning")
    start = json.loads(
        okstra(repo, "run", "start", "p:g:i", "--type", "implementation-planning", "--json").stdout
    )
    assert start["run"]["seq"] == "001"
    report = start["run"]["paths"]["report"]
    assert (repo / report).parent.is_dir()
    (repo / report).write_text("# plan\n")
    finish = ["run", "finish", "p:g:i", "--type", "implementation-planning", "--seq", "001"]
    finish += ["--status", "completed", "--report", report]
    done = okstra(repo, *finish, "--json")
    assert done.returncode == 0, done.stderr
    flow = json.loads(done.stdout)["workflow"]
    assert flow["lastCompletedPhase"] == "implementation-planning"
    assert flow["nextRecommendedPhase"] == "implementation"
    assert flow["awaitingApproval"] is True
    again = okstra(repo, *finish)
    assert again.returncode == 1 and "already finished" in again.stderr
    log = okstra(repo, "task", "log", "p:g:i").stdout.splitlines()
    assert [line.split(" ", 2)[2].split("  (")[0] for line in log] == [
        "run finish implementation-planning 001 completed",
        "run start implementation-planning",
        "task new implementation-planning",
    ]


def test_error_run_recommends_the_same_phase(repo: Path) -> None:
    okstra(repo, "task", "new", "p:g:i", "--type", "error-analysis")
    okstra(repo, "run", "start", "p:g:i", "--type", "error-analysis")
    proc = okstra(
        repo,
        "run",
        "finish",
        "p:g:i",
        "--type",
        "error-analysis",
        "--seq",
        "001",
        "--status",
        "timeout",
        "--json",
    )
    flow = json.loads(proc.stdout)["workflow"]
    assert (flow["nextRecommendedPhase"], flow["routingStatus"]) == ("error-analysis", "rerun")


def test_bad_input_exits_2_and_changes_nothing(repo: Path) -> None:
    okstra(repo, "task", "new", "p:g:i", "--type", "implementation")
    before = refs_snapshot(repo)
    (repo / "huge.md").write_bytes(b"x" * (2 << 20))
    (repo / "binary.md").write_bytes(b"\xff\xfe\x00\x01")
    cases = [
        ["task", "new", "just-one-part", "--type", "implementation"],
        ["task", "new", "a:b:c:d", "--type", "implementation"],
        ["task", "new", "p::i", "--type", "implementation"],
        ["task", "new", "p:..:i", "--type", "implementation"],
        ["task", "new", "p: \t:i", "--type", "implementation"],
        ["task", "new", "p:g:i\x1b", "--type", "implementation"],
        ["task", "new", "p:g:x", "--type", "not-a-phase"],
        ["task", "new", "p:g:x", "--type", "implementation", "--brief", "huge.md"],
        ["task", "new", "p:g:x", "--type", "implementation", "--brief", "binary.md"],
        ["task", "new", "p:g:x", "--type", "implementation", "--brief", "missing.md"],
        [
            "run",
            "finish",
            "p:g:i",
            "--type",
            "implementation",
            "--seq",
            "1",
            "--status",
            "completed",
        ],
        ["run", "finish", "p:g:i", "--type", "implementation", "--seq", "001", "--status", "meh"],
    ]
    for args in cases:
        proc = okstra(repo, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("git okstra: ") and "Traceback" not in proc.stderr
    assert refs_snapshot(repo) == before


def test_hostile_and_non_ascii_keys_are_slugged_and_kept_exact(repo: Path) -> None:
    keys = ["p:Feat ~^?*[\\ x:a..b.lock", "p:기능:버그 수정", "p:g/../../etc:id"]
    for key in keys:
        proc = okstra(repo, "task", "new", key, "--type", "implementation", "--json")
        assert proc.returncode == 0, proc.stderr
        ref = json.loads(proc.stdout)["ref"]
        assert ref.startswith("refs/okstra/tasks/") and ref.count("/") == 4
        assert git(repo, "check-ref-format", ref, check=False) == ""
        assert json.loads(git(repo, "show", f"{ref}:task.json"))["taskKey"] == key
    listed = json.loads(okstra(repo, "task", "list", "--json").stdout)["tasks"]
    assert sorted(t["taskKey"] for t in listed) == sorted(keys)


def test_slug_collision_is_refused(repo: Path) -> None:
    assert okstra(repo, "task", "new", "p:Group:Id", "--type", "implementation").returncode == 0
    before = refs_snapshot(repo)
    proc = okstra(repo, "task", "new", "p:group:id", "--type", "implementation")
    assert proc.returncode == 2 and "collide" in proc.stderr
    shown = okstra(repo, "task", "show", "p:group:id")
    assert shown.returncode == 2 and "p:Group:Id" in shown.stderr
    assert refs_snapshot(repo) == before


def test_corrupted_manifest_is_named(repo: Path) -> None:
    okstra(repo, "task", "new", "p:g:i", "--type", "implementation")
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        input="{not json",
        text=True,
        capture_output=True,
    ).stdout.strip()
    tree = subprocess.run(
        ["git", "mktree"],
        cwd=repo,
        input=f"100644 blob {blob}\ttask.json\n",
        text=True,
        capture_output=True,
    ).stdout.strip()
    commit = git(repo, "commit-tree", tree, "-p", "refs/okstra/tasks/g/i", "-m", "corrupt")
    git(repo, "update-ref", "refs/okstra/tasks/g/i", commit)
    for args in (
        ["task", "show", "p:g:i"],
        ["run", "start", "p:g:i", "--type", "implementation"],
        ["task", "list"],
    ):
        proc = okstra(repo, *args)
        assert proc.returncode == 2, proc.stderr
        assert "refs/okstra/tasks/g/i:task.json" in proc.stderr and "not UTF-8 JSON" in proc.stderr
    assert git(repo, "rev-parse", "refs/okstra/tasks/g/i") == commit


def test_task_list_reads_odd_but_sound_commits_and_names_unsound_ones(repo: Path) -> None:
    """task list reads many manifests in bulk through git; a ref it cannot vouch for that way
    is read alone through pygit2, which accepts what libgit2 reads and names the rest."""
    for key in ("p:g:a", "p:g:b", "p:g:c"):
        assert okstra(repo, "task", "new", key, "--type", "implementation").returncode == 0
    # Enough refs for the bulk read (copies of p:g:c's ref), and no index, so all are read.
    c = git(repo, "rev-parse", "refs/okstra/tasks/g/c")
    pads = "".join(f"create refs/okstra/tasks/pad/p{n} {c}\n" for n in range(BULK_FROM))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=pads, text=True, check=True)
    index = repo / ".git" / INDEX_PATH
    before = json.loads(okstra(repo, "task", "list", "--json").stdout)
    assert len(before["tasks"]) == 3 + BULK_FROM
    # An extra commit header (as a signature adds): unusual, read by libgit2 all the same.
    head = git(repo, "rev-parse", "refs/okstra/tasks/g/a")
    body = git(repo, "cat-file", "commit", head).replace("\n\n", "\nx-extra kept\n\n", 1)
    odd = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo, input=body, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    git(repo, "update-ref", "refs/okstra/tasks/g/a", odd)
    # A replacement object is not followed (pygit2 does not follow it either).
    b = git(repo, "rev-parse", "refs/okstra/tasks/g/b")
    manifest = json.loads(git(repo, "show", "refs/okstra/tasks/g/b:task.json"))
    stray = _event(repo, "refs/okstra/tasks/g/b", json.dumps({**manifest, "taskType": "stray"}))
    git(repo, "update-ref", "refs/okstra/tasks/g/b", b)
    git(repo, "replace", b, stray)
    index.unlink()  # every manifest is read again, in bulk
    listed = json.loads(okstra(repo, "task", "list", "--json").stdout)
    assert listed["tasks"] == [
        {**row, "ref": "refs/okstra/tasks/g/a"} if row["taskKey"] == "p:g:a" else row
        for row in before["tasks"]
    ]
    # No task.json, or a folder by that name; a ref at an annotated tag: each named, exit 2.
    git(repo, "tag", "-a", "-m", "t", "v-task", "refs/okstra/tasks/g/c")
    no_manifest = git(repo, "commit-tree", "-m", "empty", "HEAD^{tree}")
    tree = subprocess.run(
        ["git", "mktree"], cwd=repo, capture_output=True, text=True, check=True,
        input=f"040000 tree {git(repo, 'rev-parse', 'HEAD^{tree}')}\ttask.json\n",
    ).stdout.strip()  # fmt: skip
    folder = git(repo, "commit-tree", "-m", "folder", tree)
    tree = subprocess.run(
        ["git", "mktree"], cwd=repo, capture_output=True, text=True, check=True,
        input=f"160000 commit {'1' * 40}\ttask.json\n",
    ).stdout.strip()  # fmt: skip
    submodule = git(repo, "commit-tree", "-m", "a submodule", tree)
    # A blob whose content reads as a commit: the object's type decides.
    commit_as_blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo, capture_output=True, text=True,
        input=git(repo, "cat-file", "commit", c) + "\n", check=True,
    ).stdout.strip()  # fmt: skip
    for target, said in (
        (no_manifest, "refs/okstra/tasks/g/c:task.json is missing"),
        (folder, "refs/okstra/tasks/g/c:task.json is missing"),
        (submodule, "refs/okstra/tasks/g/c:task.json is missing"),
        (git(repo, "rev-parse", "v-task"), "refs/okstra/tasks/g/c points at a tag"),
        (commit_as_blob, "refs/okstra/tasks/g/c points at a blob"),
    ):
        git(repo, "update-ref", "refs/okstra/tasks/g/c", target)
        index.unlink(missing_ok=True)
        for proc in (okstra(repo, "task", "list", "--json"), okstra(repo, "task", "show", "p:g:c")):
            assert proc.returncode == 2 and said in proc.stderr, proc.stderr
            assert "internal error" not in proc.stderr


def _event(repo: Path, ref: str, manifest: str) -> str:
    """A new event on ``ref`` whose task.json is ``manifest``, written with plain git."""
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo, capture_output=True, text=True,
        input=manifest, check=True,
    ).stdout.strip()  # fmt: skip
    tree = subprocess.run(
        ["git", "mktree"], cwd=repo, capture_output=True, text=True, check=True,
        input=f"100644 blob {blob}\ttask.json\n",
    ).stdout.strip()  # fmt: skip
    commit = git(repo, "commit-tree", tree, "-p", ref, "-m", "event")
    git(repo, "update-ref", ref, commit)
    return commit


def test_task_list_remembers_what_it_read_by_commit(repo: Path) -> None:
    for key in ("p:g:a", "p:g:b", "p:h:c"):
        assert okstra(repo, "task", "new", key, "--type", "implementation").returncode == 0
    first = okstra(repo, "task", "list", "--json")
    assert first.returncode == 0, first.stderr
    index = repo / ".git" / INDEX_PATH
    heads = {git(repo, "rev-parse", f"refs/okstra/tasks/{r}") for r in ("g/a", "g/b", "h/c")}
    assert set(json.loads(index.read_text())["commit"]) == heads
    # Listed again, the commits it knows are answered from the index: no manifest is read.
    good = json.loads(index.read_text())
    index.write_text(json.dumps({**good, "current_status": ["from the index"] * 3}))
    listed = json.loads(okstra(repo, "task", "list", "--json").stdout)["tasks"]
    assert [task["currentStatus"] for task in listed] == ["from the index"] * 3
    # An index that is not sound is ignored (and written again), never trusted or fatal.
    unsound = [
        b"{not json",
        b"[" * 100_000,
        json.dumps({"format": "another version", "commit": []}).encode(),
        b"[]",
    ]
    for column, value in (("task_key", 7), ("next_recommended_phase", ["x"]), ("commit", None)):
        unsound.append(json.dumps({**good, column: [value] * 3}).encode())
    unsound.append(json.dumps({**good, "task_type": good["task_type"][:2]}).encode())
    for text in unsound:
        index.write_bytes(text)
        proc = okstra(repo, "task", "list", "--json")
        assert (proc.returncode, proc.stdout) == (0, first.stdout), (text, proc.stderr)
        assert json.loads(index.read_text()) == good
    # A new event is read and checked as any manifest; a listing of one group keeps the
    # other commits, a listing of all forgets those no task ref holds any more.
    old = git(repo, "rev-parse", "refs/okstra/tasks/g/a")
    manifest = json.loads(git(repo, "show", "refs/okstra/tasks/g/a:task.json"))
    new = _event(repo, "refs/okstra/tasks/g/a", json.dumps({**manifest, "currentStatus": "done"}))
    grouped = json.loads(okstra(repo, "task", "list", "--group", "g", "--json").stdout)
    assert [t["currentStatus"] for t in grouped["tasks"]] == ["done", "active"]
    assert {old, new} <= set(json.loads(index.read_text())["commit"])
    assert okstra(repo, "task", "list", "--json").returncode == 0
    assert set(json.loads(index.read_text())["commit"]) == heads - {old} | {new}
    good_b = git(repo, "rev-parse", "refs/okstra/tasks/g/b")
    _event(repo, "refs/okstra/tasks/g/b", "{not json")
    proc = okstra(repo, "task", "list", "--json")
    assert proc.returncode == 2 and "refs/okstra/tasks/g/b:task.json: not UTF-8 JSON" in proc.stderr
    git(repo, "update-ref", "refs/okstra/tasks/g/b", good_b)
    # Where the index cannot be written, listings still work (they read every manifest).
    shutil.rmtree(index.parent)
    index.parent.write_text("not a folder")
    proc = okstra(repo, "task", "list", "--group", "g", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == grouped


def test_eight_racing_run_starts_get_eight_seqs(repo: Path) -> None:
    okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning")
    procs = race(repo, 8, "run", "start", "p:g:i", "--type", "implementation-planning", "--json")
    assert [p.returncode for p in procs] == [0] * 8, [p.stderr for p in procs]
    seqs = sorted(json.loads(p.stdout)["run"]["seq"] for p in procs)
    assert seqs == [f"{n:03d}" for n in range(1, 9)]
    log = okstra(repo, "task", "log", "p:g:i").stdout
    assert log.count("run start implementation-planning") == 8
    names = git(
        repo, "ls-tree", "--name-only", "refs/okstra/tasks/g/i:runs/implementation-planning"
    )
    assert names.split() == [f"{s}.json" for s in seqs]


def test_killed_writers_leave_the_previous_state_valid(repo: Path) -> None:
    okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning")
    rng = random.Random(7)
    for _ in range(12):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "okstra_git",
                "run",
                "start",
                "p:g:i",
                "--type",
                "implementation-planning",
            ],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    git_repo = GitRepo.open(repo)
    state = load_task(git_repo, parse_task_key("p:g:i"))
    assert state is not None
    runs = git(
        repo, "ls-tree", "--name-only", f"{state.head}:runs/implementation-planning", check=False
    ).split()
    # Every event on the chain holds a manifest that reads back.
    for commit in git(repo, "rev-list", "refs/okstra/tasks/g/i").split():
        json.loads(git(repo, "show", f"{commit}:task.json"))
    lock = repo / ".git" / "refs" / "okstra" / "tasks" / "g" / "i.lock"
    if lock.exists():  # killed while holding the ref lock: named, with the command that clears it
        proc = okstra(repo, "run", "start", "p:g:i", "--type", "implementation-planning")
        assert proc.returncode == 3 and str(lock) in proc.stderr
        lock.unlink()
    after = okstra(repo, "run", "start", "p:g:i", "--type", "implementation-planning", "--json")
    assert after.returncode == 0, after.stderr
    assert int(json.loads(after.stdout)["run"]["seq"]) == len(runs) + 1
