"""Hostile input and fail-closed configuration, each case met as a user or agent meets it: the
real CLI (``python -m okstra_git``), real hooks run by a real ``git push``, and a check that
nothing stored changed (every okstra ref and note identical before and after).

Exit codes: 2 for bad input or a config the gate refuses to read, 1 for a gate refusal.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from claims_world import approved_task
from conftest import git, make_repo, okstra
from hooks_world import add_verdict, commit, pair, push, remote_ref
from hypothesis import given, settings
from hypothesis import strategies as st
from plans import DIAMOND_PLAN

from okstra_git.core.errors import BadInput
from okstra_git.core.keys import parse_task_key, part_problem
from okstra_git.core.resources import installed_executable
from okstra_git.core.shell import command
from okstra_git.gate import signing
from okstra_git.gate.config import GateConfig, _glob_literal, protect_glob
from okstra_git.git.repo import GitRepo
from okstra_git.logic.documents import run_directive, task_index
from okstra_git.logic.verify_rules import stage_worktree_gone, task_worktree_missing
from okstra_git.records.verdict import VERDICTS_REF, append_verdict

CONTRIB = Path(__file__).resolve().parent.parent / "contrib"


def everything(repo: Path) -> str:
    """Every ref (okstra's, notes, branches) with its value: "nothing stored changed"."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


# ---------------------------------------------------------------------------------------------
# The gate's config fails closed, the same in pre-push, pre-receive/update and ci check


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A clone with our pre-push hook and a bare remote running contrib/pre-receive."""
    monkeypatch.setenv("OKSTRA_EXE", installed_executable() or "git-okstra")
    work, remote = pair(tmp_path)
    shutil.copy(CONTRIB / "pre-receive", remote / "hooks" / "pre-receive")
    assert okstra(work, "hooks", "install").returncode == 0
    return work, remote


def test_a_bare_branch_name_in_okstra_protect_protects_that_branch(served):
    work, remote = served
    git(remote, "config", "okstra.protect", "main")  # plain git config, not init --protect
    git(work, "config", "okstra.protect", "main")
    before = remote_ref(remote, "main")
    head = commit(work, "unverified")
    for args in (("origin", "main"), ("--no-verify", "origin", "main")):
        proc = push(work, *args)
        assert proc.returncode != 0
        assert f"refusing to update refs/heads/main to {head[:12]}" in proc.stderr
    assert remote_ref(remote, "main") == before
    assert okstra(work, "ci", "check").returncode == 1
    # Another branch is not protected by `main`: it passes both hooks.
    assert push(work, "origin", "HEAD:refs/heads/topic").returncode == 0
    # A ref differing in case only is protected too: a server whose refs live on a
    # case-insensitive file system moves main for a push to MAIN.
    for args in (("origin",), ("--no-verify", "origin")):
        proc = push(work, *args, "HEAD:refs/heads/MAIN")
        assert proc.returncode != 0 and "refusing to update refs/heads/MAIN" in proc.stderr
    assert remote_ref(remote, "refs/heads/MAIN") is None


BAD_PROTECT = [
    ("refs/heads/mai[", "never closed"),
    ("mai[n", "never closed"),
    ("", "is empty"),
    ("tags/v*", "ambiguous"),
    ("refs/heads/a b", "no ref name can hold ' '"),
    ("refs/heads/main/", "cannot be in a ref name"),
    ("refs/heads/..x", "no ref name can hold '..'"),
    ("refs/heads/x.lock", "cannot be in a ref name"),
    # Lists in one value are legal ref names, and would protect none of the refs listed.
    ("refs/heads/main,refs/heads/master", "git config --add okstra.protect refs/heads/master"),
    ("refs/heads/{main,master}", "one glob per value"),
    ("main;master", "git config --add okstra.protect refs/heads/main"),
    ("main|master", "one glob per value"),
    ("REFS/HEADS/MAIN", "written in lowercase: refs/heads/main"),
    ("refs/heads/Release/*", "written in lowercase: refs/heads/release/*"),
]


@pytest.mark.parametrize(("value", "why"), BAD_PROTECT)
def test_an_unreadable_protect_glob_refuses_every_push_on_both_sides(served, value, why):
    work, remote = served
    for repo in (work, remote):
        git(repo, "config", "--add", "okstra.protect", "refs/heads/prod")
        git(repo, "config", "--add", "okstra.protect", value)
    head = commit(work, "unverified")
    before = everything(remote)
    for args in (("origin", "main"), ("--no-verify", "origin", "main")):
        for ref in ("main", "HEAD:refs/heads/topic"):  # even an unprotected-looking branch
            proc = push(work, *args[:-1], ref)
            assert proc.returncode != 0, proc.stderr
            assert "cannot read its config, so it fails closed" in proc.stderr
            assert f"okstra.protect = {value!r}" in proc.stderr and why in proc.stderr
            assert "Fix: git config --file" in proc.stderr
    assert everything(remote) == before
    proc = okstra(work, "ci", "check")
    assert proc.returncode == 2 and f"okstra.protect = {value!r}" in proc.stderr
    # hooks status still says what is installed, and that the gate is shut and why.
    proc = okstra(work, "hooks", "status", "--json")
    status = json.loads(proc.stdout)
    assert proc.returncode == 1 and status["runs"] is True and status["gate"] is None
    assert f"okstra.protect = {value!r}" in status["error"] and "fails closed" in proc.stderr
    # okstra's own data still travels (the verdict that will be needed must reach the server).
    add_verdict(work)
    assert push(work, "origin", VERDICTS_REF).returncode == 0
    assert remote_ref(remote, VERDICTS_REF) == git(work, "rev-parse", VERDICTS_REF)
    assert remote_ref(remote, "main") != head


def test_the_update_hook_reads_the_same_config(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OKSTRA_EXE", installed_executable() or "git-okstra")
    work, remote = pair(tmp_path)
    shutil.copy(CONTRIB / "update", remote / "hooks" / "update")
    git(remote, "config", "okstra.protect", "main")
    commit(work, "unverified")
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and "refusing to update refs/heads/main" in proc.stderr
    git(remote, "config", "okstra.protect", "refs/heads/mai[")
    proc = push(work, "origin", "HEAD:refs/heads/topic")
    assert proc.returncode != 0 and "okstra.protect = 'refs/heads/mai['" in proc.stderr


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("okstra.gate.match", "nearly", "must be tree or commit"),
        ("okstra.gate.match", "", "must be tree or commit"),
        ("okstra.allowDelete", "maybe", "is not a boolean"),
        ("okstra.gate.allowedSigners", "", "is empty"),
        ("okstra.gate.allowedSigners", "~nosuchuser/allowed", "no user 'nosuchuser'"),
    ],
)
def test_every_gate_key_is_checked_where_it_is_read(repo: Path, key: str, value: str, why: str):
    git(repo, "config", key, value)
    head = git(repo, "rev-parse", "HEAD")
    add_verdict(repo)  # a verdict that would open the gate: the config must still refuse
    line = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"
    proc = okstra(repo, "hooks", "run", "pre-push", "origin", "url", input=line)
    assert proc.returncode == 2, proc.stderr
    assert f"{key} = {value!r}" in proc.stderr and why in proc.stderr
    assert f"file:{repo}/.git/config" in proc.stderr
    proc = okstra(repo, "ci", "check")
    assert proc.returncode == 2 and f"{key} = {value!r}" in proc.stderr
    # A key with no "= value" at all is git's boolean true: no match mode, no signer file.
    if key.startswith("okstra.gate."):
        git(repo, "config", "--unset-all", key)
        with (repo / ".git" / "config").open("a") as fh:
            fh.write(f'[okstra "gate"]\n\t{key.rsplit(".", 1)[1]}\n')
        proc = okstra(repo, "hooks", "run", "pre-push", "origin", "url", input=line)
        assert proc.returncode == 2 and f"{key} = (no value)" in proc.stderr


def ssh_key(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


def test_a_relative_signers_file_is_read_from_the_git_dir_never_the_work_tree(
    tmp_path: Path,
):
    """An agent can write the work tree; it must not be able to name its own key as allowed."""
    work, _ = pair(tmp_path)
    assert okstra(work, "hooks", "install").returncode == 0
    reviewer, agent = ssh_key(tmp_path, "reviewer"), ssh_key(tmp_path, "agent")
    git(work, "config", "okstra.gate.allowedSigners", "allowed_signers")
    (work / "allowed_signers").write_text(  # the agent's own list, in the work tree
        f"test@example.invalid {agent.with_suffix('.pub').read_text()}"
    )
    commit(work, "work")
    unsigned = add_verdict(work)
    by_agent = unsigned.replace(recorded_at="2026-06-06T12:01:00+00:00")
    by_agent = by_agent.replace(signature=signing.sign(by_agent.signed_payload(), str(agent)))
    append_verdict(GitRepo.open(work), by_agent)
    git_dir_file = work / ".git" / "allowed_signers"
    proc = okstra(work, "ci", "check")
    assert proc.returncode == 1 and str(git_dir_file) in proc.stdout
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and str(git_dir_file) in proc.stderr

    git_dir_file.write_text(f"test@example.invalid {reviewer.with_suffix('.pub').read_text()}")
    assert okstra(work, "ci", "check").returncode == 1  # still only the agent's signature
    signed = unsigned.replace(recorded_at="2026-06-06T12:02:00+00:00")
    signed = signed.replace(signature=signing.sign(signed.signed_payload(), str(reviewer)))
    append_verdict(GitRepo.open(work), signed)
    assert okstra(work, "ci", "check").returncode == 0
    assert push(work, "origin", "main").returncode == 0


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab/.*?[]! ~^:\\@{-lock"), max_size=16))
def test_the_protect_glob_check_agrees_with_git_check_ref_format(value: str):
    """What the glob leaves after its wildcards is a refname exactly when git says so, so no
    accepted glob needs a refname git would never make, and none is refused that could match."""
    try:
        glob = protect_glob(value)
    except BadInput as exc:
        said = str(exc)
        if any(w in said for w in ("never closed", "ambiguous", "is empty", "like a list")):
            return  # refused for what it means, whatever check-ref-format says
        glob = ("refs/heads/" + value.strip()) if not value.strip().startswith("refs/") else value
        literal = _glob_literal(glob.strip())
        ok = subprocess.run(["git", "check-ref-format", literal], capture_output=True)
        assert ok.returncode != 0, (value, literal)
        return
    literal = _glob_literal(glob)
    ok = subprocess.run(["git", "check-ref-format", literal], capture_output=True)
    assert ok.returncode == 0, (value, literal)
    assert glob.startswith("refs/")


def test_a_glob_set_and_a_star_keep_their_meaning():
    config = GateConfig.from_values({})
    assert config.protect == ("refs/heads/main", "refs/heads/master", "refs/heads/release/*")
    assert protect_glob("release/[0-9]*") == "refs/heads/release/[0-9]*"
    assert protect_glob(" refs/tags/v* ") == "refs/tags/v*"
    assert protect_glob("refs/heads/a./b") == "refs/heads/a./b"  # only a whole name ends in .


# ---------------------------------------------------------------------------------------------
# Config outside the gate: the project id and the worktree root


def test_a_project_id_no_key_can_hold_is_refused_before_anything_is_written(repo: Path):
    git(repo, "config", "okstra.projectId", "a:b")
    before = everything(repo)
    proc = okstra(repo, "task", "new", "g:i", "--type", "implementation-planning")
    assert proc.returncode == 2
    assert "config okstra.projectId = 'a:b' cannot be the project-id" in proc.stderr
    assert "Fix: git config okstra.projectId NAME" in proc.stderr
    assert everything(repo) == before
    # A full key does not need the default, so it is not read.
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    git(repo, "config", "okstra.projectId", "ok")
    for bad in ("a:b", "x\ny", "..."):
        proc = okstra(repo, "init", "--project-id", bad)
        assert proc.returncode == 2 and "--project-id" in proc.stderr
    assert git(repo, "config", "okstra.projectId") == "ok"


@pytest.mark.parametrize(
    ("root", "why"),
    [
        ("{file}", "is a file, not a folder"),
        ("{file}/below", "is a file, not a folder"),
        ("/proc/okstra-no-such/wt", "cannot make the worktree folder"),
        ("~nosuchuser/wt", "no user 'nosuchuser'"),
        ("", "is empty"),
        pytest.param("/tmp/" + "x" * 5000, "File name too long", id="a-5000-char-part"),
        pytest.param("/tmp/" + "/y" * 2100, "File name too long", id="beyond-PATH_MAX"),
    ],
)
def test_a_worktree_root_that_cannot_hold_folders_is_refused_before_the_claim(
    repo: Path, root: str, why: str
):
    approved_task(repo)
    afile = repo.parent / "afile"
    afile.write_text("not a folder\n")
    git(repo, "config", "okstra.worktreeRoot", root.format(file=afile))
    before = everything(repo)
    proc = okstra(repo, "stage", "claim", "p:g:i")
    assert proc.returncode == 2, proc.stderr
    assert why in proc.stderr and "git config okstra.worktreeRoot PATH" in proc.stderr
    assert "internal error" not in proc.stderr and len(proc.stderr) < 1000  # said briefly
    assert everything(repo) == before  # no claim, no task event, no branch
    if "proc" not in root:  # a root that is readable, only not writable, lists fine
        assert "okstra.worktreeRoot" in okstra(repo, "worktree", "list", "p:g:i").stderr
        proc = okstra(repo, "init", "--worktree-root", root.format(file=afile))
        assert proc.returncode == 2 and "--worktree-root" in proc.stderr


@pytest.mark.parametrize("root", ["wt", "{repo}/deep/[wt]*", "."])
def test_a_worktree_root_inside_the_work_tree_is_excluded(repo: Path, root: str):
    """Task and stage worktrees made inside the main work tree would show as `?? wt/`, and
    `git add -A` would add them as embedded repositories."""
    approved_task(repo)
    git(repo, "config", "okstra.worktreeRoot", root.format(repo=repo))
    # The claim writes its run's files in .okstra/ (since 6304869, as run start does), which
    # `init` excludes and this repository (never init'ed) does not: the worktrees are judged.
    status = ("status", "--porcelain", "--untracked-files=all", "--", ".", ":(exclude).okstra")
    before = git(repo, *status)
    proc = okstra(repo, "--json", "stage", "claim", "p:g:i")
    assert proc.returncode == 0, proc.stderr
    stage = Path(json.loads(proc.stdout)["placements"][0]["worktreePath"])
    assert stage.is_dir() and repo in stage.parents
    assert git(repo, *status) == before
    added = git(repo, "add", "-A", "--dry-run", *status[3:])
    assert "stage-1" not in added and "task" not in added, added
    git(repo, "worktree", "remove", str(stage.parent / "task"))
    assert okstra(repo, "worktree", "task", "p:g:i").returncode == 0  # made again
    assert git(repo, *status) == before
    excludes = (repo / ".git" / "info" / "exclude").read_text()
    assert excludes.count("okstra worktrees of p:g:i") == 1  # one line per task, once


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs (mounting needs root: skipped otherwise), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def test_a_full_disk_during_a_claim_is_said_and_keeps_no_claim(small_disk: Path):
    """The disk fills at each point of a claim (branch, worktree files, objects, refs): every
    time exit 2 saying what failed and where, and no claim or stage worktree is left."""
    failed = 0
    for room in (0, 4096, 16_000, 40_000, 100_000):
        for leftover in small_disk.iterdir():
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        repo = make_repo(small_disk / "repo")
        approved_task(repo)  # worktrees under small_disk/wt
        free = os.statvfs(small_disk)
        with (small_disk / "fill").open("wb") as fill:
            fill.write(b"\0" * max(free.f_bavail * free.f_frsize - room, 0))
        claims_before = git(repo, "for-each-ref", "refs/okstra/claims/")
        proc = okstra(repo, "stage", "claim", "p:g:i")
        if proc.returncode == 0:
            continue  # room enough
        failed += 1
        assert proc.returncode == 2, (room, proc.stderr)
        assert "internal error" not in proc.stderr, (room, proc.stderr)
        assert "No space left on device" in proc.stderr, (room, proc.stderr)
        assert str(small_disk) in proc.stderr, (room, proc.stderr)  # where
        assert git(repo, "for-each-ref", "refs/okstra/claims/") == claims_before, room
        assert "stage-1" not in git(repo, "worktree", "list"), room
    assert failed >= 3


# ---------------------------------------------------------------------------------------------
# Strict parsing: numbers, durations, stage numbers, JSON — exit 2 and nothing written


@pytest.fixture
def claimed(repo: Path) -> Path:
    """An approved task whose stage 1 is claimed without a worktree."""
    approved_task(repo)
    proc = okstra(repo, "stage", "claim", "p:g:i", "--stage", "1", "--no-worktree")
    assert proc.returncode == 0, proc.stderr
    return repo


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("stage", "claim", "p:g:i", "--lease", "999999999d"), "--lease '999999999d'"),
        (("stage", "claim", "p:g:i", "--lease", "367d"), "at most 366d"),
        (("stage", "claim", "p:g:i", "--lease", "0s"), "--lease '0s'"),
        (("stage", "claim", "p:g:i", "--lease", "1٣h"), "--lease '1٣h'"),
        (("stage", "claim", "p:g:i", "--lease", "9" * 40 + "s"), "--lease '999"),
        (("stage", "claim", "p:g:i", "--stage", "²"), "--stage '²'"),
        (("stage", "claim", "p:g:i", "--stage", "٣"), "--stage '٣'"),
        (("stage", "claim", "p:g:i", "--stage", "9" * 30), "--stage '999"),
        (("stage", "claim", "p:g:i", "--stage", "0"), "--stage '0'"),
        (("stage", "done", "p:g:i", "--stage", "²", "--head", "HEAD"), "--stage '²'"),
        (("stage", "release", "p:g:i", "--stage", "¹", "--reason", "x"), "--stage '¹'"),
        (("verify", "target", "p:g:i", "--stage", "²"), "--stage '²'"),
        (
            (
                "run",
                "finish",
                "p:g:i",
                "--type",
                "implementation",
                "--seq",
                "²²²",
                "--status",
                "error",
            ),
            "--seq '²²²'",
        ),
    ],
)
def test_numbers_durations_and_stages_are_ascii_and_bounded(claimed: Path, args, shown):
    before = everything(claimed)
    proc = okstra(claimed, *args)
    assert proc.returncode == 2, proc.stderr
    assert shown in proc.stderr and "internal error" not in proc.stderr
    assert everything(claimed) == before


DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE_JSON = [
    ('{"x": NaN}', "NaN is not a JSON number"),
    ('{"x": Infinity}', "Infinity is not a JSON number"),
    ('{"x": -Infinity}', "-Infinity is not a JSON number"),
    ('{"x": 1e400}', "beyond a double"),
    ('{"x": "\\ud800"}', "lone surrogate"),
    ('{"x": "\\udfff and text"}', "lone surrogate"),
    ('{"x": ' + "7" * 5000 + "}", "5000-digit integer"),
    ('{"x": 9223372036854775808}', "beyond a 64-bit integer"),
    ('{"x": 1, "x": 2}', "the key 'x' appears twice"),
    ('{"x": ' + "[" * 30_000 + "]" * 30_000 + "}", "nested deeper than 64 levels"),
    ('{"x": ' + "[" * 70 + "]" * 70 + "}", "nested deeper than 64 levels"),
    ("[1, 2]", "expected a JSON object"),
    ("{", "not UTF-8 JSON (line 1 column 2"),
]


@pytest.mark.parametrize(("text", "why"), HOSTILE_JSON, ids=[w for _, w in HOSTILE_JSON])
def test_a_hostile_carry_file_is_refused_before_the_claim_moves(
    claimed: Path, tmp_path: Path, text: str, why: str
):
    carry = tmp_path / "carry.json"
    carry.write_text(text, "utf-8")
    before = everything(claimed)
    proc = okstra(claimed, "stage", "done", "p:g:i", "--stage", "1", "--head", "HEAD",
                  "--carry", str(carry))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"--carry {carry}" in proc.stderr and why in proc.stderr
    assert "internal error" not in proc.stderr
    assert everything(claimed) == before


def test_a_carry_file_that_is_not_utf8_is_refused(claimed: Path, tmp_path: Path):
    carry = tmp_path / "carry.json"
    carry.write_bytes(b'{"x": "\xed\xa0\x80"}')  # a surrogate encoded as UTF-8: not UTF-8
    proc = okstra(claimed, "stage", "done", "p:g:i", "--stage", "1", "--head", "HEAD",
                  "--carry", str(carry))  # fmt: skip
    assert proc.returncode == 2 and "not UTF-8 JSON (byte 7 is not UTF-8)" in proc.stderr


def test_a_report_nested_100k_deep_is_refused(repo: Path, tmp_path: Path):
    report = tmp_path / "data.json"
    report.write_text('{"a": ' + DEEP + "}")
    before = everything(repo)
    proc = okstra(repo, "verify", "record", "p:g:i", "--verdict", "accepted",
                  "--report", str(report))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"{report}: JSON nested deeper than 64 levels" in proc.stderr
    assert everything(repo) == before


@pytest.mark.parametrize("target", ["/", "{tmp}", "{tmp}/no/such/folder/out.xml"])
def test_ci_check_output_that_cannot_be_a_file_is_refused(repo: Path, tmp_path: Path, target):
    output = target.format(tmp=tmp_path)
    proc = okstra(repo, "ci", "check", "--format", "junit", "--output", output)
    assert proc.returncode == 2, proc.stderr
    assert f"--output {output}" in proc.stderr and "internal error" not in proc.stderr


def forge(repo: Path, ref: str, path: str, content: bytes, parent: bool = True) -> str:
    """Point ``ref`` at a new commit whose tree holds only ``path`` = ``content`` (what a
    hostile remote could hand ``sync``)."""

    def plumb(*args: str, data: bytes) -> str:
        done = subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True, check=True)
        return done.stdout.decode().strip()

    blob = plumb("hash-object", "-w", "--stdin", data=content)
    tree = plumb("mktree", data=f"100644 blob {blob}\t{path}\n".encode())
    parents = ["-p", ref] if parent else []
    commit = git(repo, "commit-tree", tree, *parents, "-m", "forged")
    git(repo, "update-ref", ref, commit)
    return commit


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b'{"schemaVersion": NaN}', "NaN is not a JSON number"),
        (b'{"stage": ' + b"1" * 5000 + b"}", "5000-digit integer"),
        (b'{"a": ' + b"[" * 100 + b"]" * 100 + b"}", "nested deeper than 64 levels"),
        (b'{"a": "\\ud800"}', "lone surrogate"),
    ],
)
def test_a_malformed_stored_record_is_named_not_an_internal_error(claimed: Path, text, why):
    repo = claimed
    forge(repo, "refs/okstra/claims/g/i/stage-1", "claim.json", text)
    forge(repo, "refs/okstra/tasks/g/i", "task.json", text)
    before = everything(repo)
    for args, where in (
        (("task", "show", "p:g:i"), "refs/okstra/tasks/g/i:task.json"),
        (("stage", "list", "p:g:i"), "refs/okstra/"),
        (("stage", "claim", "p:g:i"), "refs/okstra/"),
    ):
        proc = okstra(repo, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert where in proc.stderr and why in proc.stderr, proc.stderr
    assert everything(repo) == before


# ---------------------------------------------------------------------------------------------
# Injection: printed commands, directive lines, identities


_HOSTILE_BITS = ["'", '"', ";", "$(touch PWNED)", "`touch PWNED`", " ", "\\", "*", "&", "|",
                 ">x", "!", "#", "~", "기능", "é", "\t", "{a,b}"]  # fmt: skip
_KEY_PART = (
    st.lists(
        st.sampled_from(_HOSTILE_BITS) | st.text(min_size=1, max_size=4), min_size=1, max_size=5
    )
    .map("".join)
    .filter(lambda part: part_problem(part) is None)
)
hostile_keys = st.tuples(_KEY_PART, _KEY_PART, _KEY_PART).map(":".join)


ONE_STAGE = {
    "stage": 1, "title": "t", "worktreePath": "", "baseCommit": "abc", "startedHeadCommit": "abc",
    "report": "/c/r.md",
}  # fmt: skip
"""One claimed stage as a directive gets it (``--no-worktree``), its report at ``/c/r.md``."""


@settings(max_examples=300, deadline=None)
@given(hostile_keys)
def test_every_printed_command_splits_back_to_its_argv(key: str):
    """The task key grammar (docs/workflow.md) (three parts, no control characters, not only dots or
    whitespace)
    with shell metacharacters mixed in: each command okstra prints survives shlex.split."""
    parse_task_key(key)  # the grammar really admits it
    wanted = {
        ("git", "okstra", "verify", "target", key, "--stage", "auto"): stage_worktree_gone(
            1, "/wt", key
        ),
        ("git", "okstra", "worktree", "task", key): task_worktree_missing(
            "/wt", command("git", "okstra", "worktree", "task", key)
        ),
        (
            "git",
            "-C",
            "/c",
            "okstra",
            "stage",
            "done",
            key,
            "--stage",
            "1",
            "--report",
            "/c/r.md",
        ): (
            run_directive(
                key=key,
                run_id="implementation-001",
                stages=[ONE_STAGE],
                task_worktree="",
                task_branch="",
                implementation_base="abc",
                plan_path="p.md",
                plan_blob="",
                clone_dir="/c",
            )
        ),
        ("git", "okstra", "run", "start", key, "--type", "implementation"): task_index(
            {"taskKey": key, "taskType": "implementation", "workflow": {}},
            "refs/okstra/tasks/g/i",
        ),
    }
    for argv, text in wanted.items():
        line = command(*argv)
        assert line in text, (argv, text)
        assert shlex.split(line) == list(argv)


@settings(max_examples=100, deadline=None)
@given(st.text(st.sampled_from("ab\n\r\u2028\u2029\x85\x0b\x0c`|"), max_size=12))
def test_a_value_in_a_directive_never_adds_a_line(value: str):
    def directive(plan_path: str) -> str:
        return run_directive(key="p:g:i", run_id="implementation-001", stages=[],
                             task_worktree="", task_branch="", implementation_base="abc",
                             plan_path=plan_path, plan_blob="")  # fmt: skip

    assert len(directive(value or "x").splitlines()) == len(directive("x").splitlines())


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``git okstra`` on PATH is the code under test, as for an agent running a printed line."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git-okstra").symlink_to(installed_executable() or shutil.which("git-okstra"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


HOSTILE_KEY = "p:g:x';touch PWNED;'$(touch PWNED2) `touch PWNED3`"


def test_a_printed_hint_run_by_a_shell_runs_okstra_and_nothing_else(repo: Path, on_path):
    assert okstra(repo, "task", "new", HOSTILE_KEY, "--type", "implementation").returncode == 0
    proc = okstra(repo, "task", "new", HOSTILE_KEY, "--type", "implementation")
    assert proc.returncode == 1
    [hint] = [
        ln.removeprefix("hint: ") for ln in proc.stderr.splitlines() if ln.startswith("hint: ")
    ]
    assert shlex.split(hint) == ["git", "-C", str(repo), "okstra", "task", "show", HOSTILE_KEY]
    shown = subprocess.run(["sh", "-c", hint], cwd=repo, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert HOSTILE_KEY in shown.stdout
    assert not list(repo.parent.rglob("PWNED*"))


def test_the_directive_command_reaches_okstra_intact(repo: Path, on_path):
    approved_task(repo, key=HOSTILE_KEY, name="hostile")
    proc = okstra(repo, "stage", "claim", HOSTILE_KEY, "--no-worktree")
    assert proc.returncode == 0, proc.stderr
    done = _printed_done(repo, HOSTILE_KEY)
    assert done in proc.stdout
    ran = subprocess.run(["sh", "-c", done], cwd=repo, capture_output=True, text=True)
    # okstra parsed the argv: what stops it is the report nobody has written yet.
    assert ran.returncode == 2 and "no such file" in ran.stderr, ran.stderr
    assert not list(repo.parent.rglob("PWNED*"))


def _printed_done(repo: Path, key: str) -> str:
    """The directive's ``stage done`` of stage 1 (the engine's report file, ``-C`` the clone)."""
    report = json.loads(okstra(repo, "task", "status", key, "--json").stdout)["next"]["report"]
    return command(
        "git", "-C", repo, "okstra", "stage", "done", key, "--stage", 1, "--report", report
    )


@pytest.mark.parametrize("key", ["-p:g:i", "--stage:g:i", "--json:g:i", "-h:g:j"])
def test_a_key_starting_with_a_dash_is_never_taken_for_an_option(repo: Path, on_path, key: str):
    """A key is typed (and printed) where a positional goes; one starting with `-` must still
    be that argument, not an option, in every command okstra prints for it."""
    approved_task(repo, key=key, name="dash")
    proc = okstra(repo, "stage", "claim", key, "--no-worktree", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["taskKey"] == key
    done = _printed_done(repo, key)
    assert done in json.loads(proc.stdout)["directive"]
    ran = subprocess.run(["sh", "-c", done], cwd=repo, capture_output=True, text=True)
    assert ran.returncode == 2 and "no such file" in ran.stderr, ran.stderr  # the key parsed
    assert "required: KEY" not in ran.stderr, ran.stderr
    status = okstra(repo, "--json", "task", "status", key)
    assert status.returncode == 0, status.stderr
    line = json.loads(status.stdout)["next"]["command"]  # stage done KEY … --report PATH
    assert key in shlex.split(line)
    ran = subprocess.run(["sh", "-c", line], cwd=repo, capture_output=True, text=True)
    # The key parsed as KEY: what stops the line is the report nobody has written yet.
    assert "--report" in ran.stderr and "no such file" in ran.stderr, ran.stderr
    assert "required: KEY" not in ran.stderr, ran.stderr


@settings(max_examples=200, deadline=None)
@given(hostile_keys.map(lambda k: k.replace("~", "`")) | st.sampled_from(["`p`:g:i", "p:``g:i`"]))
def test_a_code_span_in_the_directive_holds_any_key(key: str):
    """Read by a CommonMark parser, the directive's code spans give back the key exactly, and
    the shell lines in them stay whole: a backtick in a key must not end a span early."""
    reader = pytest.importorskip("markdown_it").MarkdownIt("commonmark")
    text = run_directive(key=key, run_id="implementation-001", stages=[ONE_STAGE],
                         task_worktree="", task_branch="", implementation_base="abc",
                         plan_path="p.md", plan_blob="", clone_dir="/c")  # fmt: skip
    spans = [
        child.content
        for token in reader.parse(text)
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]
    assert spans[0] == key, (key, spans)
    done = command("git", "-C", "/c", "okstra", "stage", "done", key, "--stage", 1, "--report",
                   "/c/r.md", "--head", "HEAD")  # fmt: skip
    assert done in spans, (done, spans)


@pytest.mark.parametrize("name", ["a\nb.md", "a\rb.md", "a\u2028b.md"])
def test_a_plan_file_name_with_a_line_break_is_refused_at_input(repo: Path, name: str):
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation-planning").returncode == 0
    plan = repo / name
    plan.write_text(DIAMOND_PLAN)
    before = everything(repo)
    proc = okstra(repo, "plan", "submit", "p:g:i", str(plan))
    assert proc.returncode == 2 and "holds a line break" in proc.stderr
    assert everything(repo) == before


def test_a_hostile_identity_is_cleaned_as_git_commit_cleans_it(repo: Path):
    git(repo, "config", "user.name", "Ev\nil <x> Name")
    git(repo, "config", "user.email", "e<v>il@x\n")
    assert okstra(repo, "task", "new", "p:g:i", "--type", "implementation").returncode == 0
    head = git(repo, "rev-parse", "refs/okstra/tasks/g/i")
    assert "author Evil x Name <evil@x> " in git(repo, "cat-file", "-p", head)
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=repo,
                          capture_output=True, text=True)  # fmt: skip
    assert fsck.returncode == 0 and "missingEmail" not in fsck.stdout + fsck.stderr
    proc = okstra(repo, "task", "show", "p:g:i", "--json")
    assert proc.returncode == 0 and "internal error" not in proc.stderr
    # A release reason cannot add a trailer to the claim commit's message either.
    approved_task(repo, key="p:g:j")
    assert okstra(repo, "stage", "claim", "p:g:j", "--stage", "1", "--no-worktree").returncode == 0
    reason = "done\n\nOkstra-Task: p:other:key"
    proc = okstra(repo, "stage", "release", "p:g:j", "--stage", "1", "--force", "--reason", reason)
    assert proc.returncode == 0, proc.stderr
    message = git(repo, "log", "-1", "--format=%B", "refs/okstra/claims/g/j/stage-1")
    assert "Okstra-Task: p:other:key" not in message.splitlines()


# ---------------------------------------------------------------------------------------------
# Bad stores: refs at blobs, commits libgit2 cannot parse


def corrupt_commit(repo: Path, on: str) -> str:
    """A commit on top of ``on`` whose author line an unchecked writer broke (git fsck:
    missingEmail), written as such a writer would have written it."""
    tree = git(repo, "rev-parse", f"{on}^{{tree}}")
    raw = (f"tree {tree}\nparent {git(repo, 'rev-parse', on)}\nauthor Ev\nil <e@x> 1 +0000\n"
           "committer Ev\nil <e@x> 1 +0000\n\nbroken\n")  # fmt: skip
    return subprocess.run(
        ["git", "hash-object", "--literally", "-t", "commit", "-w", "--stdin"],
        cwd=repo, input=raw, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def test_a_corrupt_task_commit_is_named_and_never_published(tmp_path: Path):
    work, remote = pair(tmp_path)
    assert okstra(work, "task", "new", "p:g:i", "--type", "implementation").returncode == 0
    assert okstra(work, "sync", "origin").returncode == 0
    bad = corrupt_commit(work, "refs/okstra/tasks/g/i")
    git(work, "update-ref", "refs/okstra/tasks/g/i", bad)
    before, remote_before = everything(work), everything(remote)
    for args in (("task", "show", "p:g:i"), ("task", "log", "p:g:i"), ("task", "list"),
                 ("run", "start", "p:g:i", "--type", "implementation")):  # fmt: skip
        proc = okstra(work, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert f"refs/okstra/tasks/g/i points at commit {bad[:12]}, which cannot be read" in (
            proc.stderr
        )
        assert "git fsck" in proc.stderr and "internal error" not in proc.stderr
    proc = okstra(work, "sync", "origin", "--push-only")
    assert proc.returncode == 2 and "cannot be read" in proc.stderr
    assert everything(remote) == remote_before and everything(work) == before
    # Under a readable head, deeper in the chain: still never handed to the remote.
    tree = git(work, "rev-parse", f"{bad}^{{tree}}")
    git(work, "update-ref", "refs/okstra/tasks/g/i", git(work, "commit-tree", tree, "-p", bad,
                                                          "-m", "on top"))  # fmt: skip
    for args in (("sync", "origin"), ("sync", "origin", "--push-only")):
        proc = okstra(work, *args)
        assert proc.returncode == 2 and "cannot be read" in proc.stderr, proc.stderr
        assert "internal error" not in proc.stderr
    assert everything(remote) == remote_before
    # Tasks only this clone has, one of them over the corrupt commit: the publish check walks
    # them all at once, still names the bad one, and nothing is pushed.
    git(work, "update-ref", "refs/okstra/tasks/g/i", "refs/okstra-remotes/origin/tasks/g/i")
    for key in ("p:g:j", "p:g:k"):
        assert okstra(work, "task", "new", key, "--type", "implementation").returncode == 0
    under = corrupt_commit(work, "refs/okstra/tasks/g/j")
    tree = git(work, "rev-parse", f"{under}^{{tree}}")
    git(work, "update-ref", "refs/okstra/tasks/g/j", git(work, "commit-tree", tree, "-p", under,
                                                          "-m", "on top"))  # fmt: skip
    proc = okstra(work, "sync", "origin")
    assert proc.returncode == 2 and "refs/okstra/tasks/g/j holds a commit" in proc.stderr
    assert everything(remote) == remote_before


def test_a_corrupt_or_blob_verdicts_ref_never_opens_nor_jams_the_gate(served):
    work, remote = served
    head = commit(work, "verified")
    add_verdict(work)
    good_notes = git(work, "rev-parse", VERDICTS_REF)
    # On the server the verdicts ref points at a blob (pushed by someone, or damaged).
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=remote, input=b"x",
                          capture_output=True, check=True).stdout.decode().strip()  # fmt: skip
    git(remote, "update-ref", VERDICTS_REF, blob)
    proc = push(work, "--no-verify", "origin", "main")
    assert proc.returncode != 0 and "internal error" not in proc.stderr
    assert f"{VERDICTS_REF} points at a blob" in proc.stderr and "Ignored" in proc.stderr
    # The branch with its verdict notes in one push still lands: the pushed notes are read.
    proc = push(work, "--no-verify", "--force", "origin", VERDICTS_REF, "main")
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "main") == head and remote_ref(remote, VERDICTS_REF) == good_notes
    # okstra's refs only ever take commits: a blob pushed there is refused.
    git(work, "update-ref", "refs/okstra/tasks/g/x", git(work, "hash-object", "-w", "README.md"))
    proc = push(work, "--no-verify", "origin", "refs/okstra/tasks/g/x")
    assert proc.returncode != 0 and "that is a blob object, not a commit" in proc.stderr
    assert remote_ref(remote, "refs/okstra/tasks/g/x") is None
    # A local verdicts ref at a corrupt commit: ci check names it and fails, no traceback.
    git(work, "update-ref", VERDICTS_REF, corrupt_commit(work, good_notes))
    proc = okstra(work, "ci", "check")
    assert proc.returncode == 1 and "cannot be read" in proc.stdout


def test_a_task_ref_at_a_blob_is_named_with_the_fix(repo: Path):
    git(repo, "update-ref", "refs/okstra/tasks/g/i", git(repo, "hash-object", "-w", "README.md"))
    before = everything(repo)
    for args in (("task", "show", "p:g:i"), ("task", "list"), ("stage", "list", "p:g:i")):
        proc = okstra(repo, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "refs/okstra/tasks/g/i points at a blob" in proc.stderr
        assert "hint: git update-ref -d refs/okstra/tasks/g/i" in proc.stderr
    assert everything(repo) == before


def test_no_command_is_quoted_by_hand_in_the_sources():
    """Printed commands are built with okstra_git.core.shell: a value pasted between quotes in an
    f-string or a template (``'{key}'``, ``'{{ key }}'``) is the injection this module tests."""
    root = Path(__file__).resolve().parent.parent
    by_hand = re.compile(r"""(?:git okstra|git -C|git merge|git update-ref|rm)\b[^"\n]*'\{""")
    interpolated = re.compile(r"""f["'][^"'\n]*\bgit okstra(?: [a-z-]+)+ \{""")
    offenders = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for folder in ("okstra_git", "templates")
        for path in sorted((root / folder).rglob("*"))
        if path.suffix in (".py", ".j2")
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if by_hand.search(line) or interpolated.search(line)
    ]
    assert offenders == []


def test_a_folder_name_no_key_can_hold_needs_a_project_id_first(tmp_path: Path):
    from conftest import make_repo

    repo = make_repo(tmp_path / "team:app")
    before = git(repo, "config", "--list", "--local")
    proc = okstra(repo, "init", "--worktree-root", str(tmp_path / "wt"))
    assert proc.returncode == 2 and "the repository folder name" in proc.stderr
    assert "git config okstra.projectId NAME" in proc.stderr
    assert git(repo, "config", "--list", "--local") == before
    assert okstra(repo, "task", "new", "g:i", "--type", "implementation").returncode == 2
    assert okstra(repo, "init", "--project-id", "app").returncode == 0
    assert okstra(repo, "task", "new", "g:i", "--type", "implementation").returncode == 0


def test_a_file_name_that_is_not_utf8_never_reaches_a_record(claimed: Path):
    report = claimed / "\udcffreport.md"  # the byte 0xff, as Python reads such a name
    report.write_text("# report\n")
    before = everything(claimed)
    proc = okstra(claimed, "stage", "done", "p:g:i", "--stage", "1", "--head", "HEAD",
                  "--report", str(report))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "reportPath" in proc.stderr and "is not UTF-8 text" in proc.stderr
    assert everything(claimed) == before


@pytest.mark.parametrize("key", ["p:g|x:i", "p:g:a\\|b", "p:`g|x`:i"])
def test_a_key_holding_a_pipe_stays_in_its_task_index_cell(key: str):
    """The task index is a two-column table: a ``|`` in a key must not open a third cell."""
    from okstra_git.core.mdtable import decode_cell, split_table_row

    text = task_index({"taskKey": key, "taskType": "implementation", "workflow": {}}, "r")
    [row] = [ln for ln in text.splitlines() if ln.startswith("| task key |")]
    cells = split_table_row(row)
    assert len(cells) == 2 and decode_cell(cells[1]) == key, row
