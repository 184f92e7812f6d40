"""The server-side gate (contrib/pre-receive and contrib/update) in a bare remote, and the
whole push path over a real `git daemon` on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import add_verdict, commit, git_daemon, pair, push, remote_ref

from okstra_git.core.resources import installed_executable
from okstra_git.records.verdict import VERDICTS_REF

OKSTRA_EXE = installed_executable() or "git-okstra"


def serve_hook(remote: Path, name: str = "pre-receive") -> None:
    """``git okstra hooks install --server`` (with ``--update`` for the update hook)."""
    args = ["--update"] if name == "update" else []
    proc = okstra(remote, "hooks", "install", "--server", str(remote), *args)
    assert proc.returncode == 0, proc.stderr
    if name == "update":  # the update hook alone
        (remote / "hooks" / "pre-receive").unlink()


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A clone whose bare remote runs contrib/pre-receive; the clone has our pre-push hook."""
    monkeypatch.setenv("OKSTRA_EXE", OKSTRA_EXE)
    work, remote = pair(tmp_path)
    serve_hook(remote)
    assert okstra(work, "hooks", "install").returncode == 0
    return work, remote


def test_pre_receive_refuses_an_unverified_push_made_with_no_verify(server):
    work, remote = server
    before = remote_ref(remote, "main")
    head = commit(work, "unverified")
    proc = push(work, "--no-verify", "origin", "main")
    assert proc.returncode != 0
    assert f"remote: okstra pre-receive: refusing to update refs/heads/main to {head[:12]}" in (
        proc.stderr
    )
    assert "pre-receive hook declined" in proc.stderr
    assert "okstra pre-push" not in proc.stderr  # the client hook really was skipped
    assert remote_ref(remote, "main") == before

    # A verdict only in the clone does not count on the server; the fix says what to push.
    add_verdict(work)
    proc = push(work, "--no-verify", "origin", "main")
    assert proc.returncode != 0 and "push the verdict notes with the branch" in proc.stderr

    # Notes and branch in one push: the server reads the notes commit still in quarantine.
    proc = push(work, "--no-verify", "origin", VERDICTS_REF, "main")
    assert proc.returncode == 0, proc.stderr
    assert "gate open" in proc.stderr
    assert remote_ref(remote, "main") == head


def test_pre_receive_speaks_gitlab_and_guards_deletion(server):
    work, remote = server
    commit(work, "unverified")
    proc = push(work, "--no-verify", "origin", "main", env={"GL_ID": "user-1"})
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("remote: ")]
    assert lines and all(ln.startswith("remote: GL-HOOK-ERR: ") for ln in lines), lines

    assert push(work, "--no-verify", "origin", "HEAD:refs/heads/release/1").returncode != 0
    assert remote_ref(remote, "release/1") is None  # protected by the default globs too
    git(remote, "branch", "release/0", "main")  # made on the server itself
    proc = push(work, "--no-verify", "origin", "--delete", "release/0")
    assert proc.returncode != 0
    assert "refusing to delete the protected ref refs/heads/release/0" in proc.stderr
    git(remote, "config", "okstra.allowDelete", "true")
    proc = push(work, "--no-verify", "origin", "--delete", "release/0")
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "release/0") is None


def test_pre_receive_without_okstra_installed_fails_closed(server, monkeypatch):
    work, remote = server
    monkeypatch.setenv("OKSTRA_EXE", "/nonexistent/git-okstra")
    proc = push(work, "--no-verify", "origin", "HEAD:refs/heads/topic")
    assert proc.returncode != 0 and "not installed on this server" in proc.stderr
    assert f"or remove the gate: rm -f -- '{remote.resolve()}/hooks/pre-receive'" in proc.stderr
    assert remote_ref(remote, "topic") is None


def test_server_install_records_okstra_and_chains_a_hook_already_there(tmp_path: Path):
    work, remote = pair(tmp_path)
    log = tmp_path / "theirs"
    theirs = f'#!/bin/sh\ncat > "{log}"\nexit 0\n'
    (remote / "hooks" / "pre-receive").write_text(theirs)
    (remote / "hooks" / "pre-receive").chmod(0o755)
    proc = okstra(tmp_path, "hooks", "install", "--server", str(remote), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "chained" in json.loads(proc.stdout)["action"]
    script = (remote / "hooks" / "pre-receive").read_text()
    assert f"OKSTRA_EXE=${{OKSTRA_EXE:-{OKSTRA_EXE}}}" in script
    assert (remote / "hooks" / "pre-receive.okstra-chained").read_text() == theirs
    again = okstra(tmp_path, "hooks", "install", "--server", str(remote))
    assert again.returncode == 0 and again.stdout.startswith("pre-receive unchanged")
    head = commit(work, "unverified")
    proc = push(work, "--no-verify", "origin", "main", "HEAD:refs/heads/topic")
    assert proc.returncode != 0 and "okstra pre-receive: refusing" in proc.stderr
    assert len(log.read_text().splitlines()) == 2  # their hook saw both lines first
    assert remote_ref(remote, "main") != head
    work_tree = okstra(work, "hooks", "install", "--server", str(work))
    assert work_tree.returncode == 2 and "not a bare repository" in work_tree.stderr
    assert okstra(work, "hooks", "install", "--update").returncode == 2


def test_update_hook_variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OKSTRA_EXE", OKSTRA_EXE)
    work, remote = pair(tmp_path)
    serve_hook(remote, "update")
    head = commit(work, "x")
    add_verdict(work)
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and "remote: okstra update: refusing" in proc.stderr
    assert "this ref was not updated" in proc.stderr and "nothing was pushed" not in proc.stderr
    assert push(work, "origin", VERDICTS_REF).returncode == 0
    assert push(work, "origin", "main").returncode == 0
    assert remote_ref(remote, "main") == head

    # One push, two refs: the update hook refuses the branch, and the notes land anyway — which
    # is what its message says.
    unverified = commit(work, "y")
    add_verdict(work, rev="HEAD~1", key="p:g:other")  # moves the notes, not onto `unverified`
    proc = push(work, "origin", VERDICTS_REF, "main")
    assert proc.returncode != 0 and "may have been updated" in proc.stderr
    assert remote_ref(remote, VERDICTS_REF) == git(work, "rev-parse", VERDICTS_REF)
    assert remote_ref(remote, "main") == head != unverified


# -- over the network -----------------------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[str]:
    """`git daemon` serving tmp_path on 127.0.0.1 (push enabled); stopped after the test."""
    with git_daemon(tmp_path, {"OKSTRA_EXE": OKSTRA_EXE}) as url:
        yield url


def test_push_sync_and_ci_check_over_git_daemon(tmp_path: Path, daemon: str):
    _, remote = pair(tmp_path, "seed-clone")
    serve_hook(remote)
    url = f"{daemon}/remote.git"
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", url, str(work))
    assert okstra(work, "init", "--remote", "origin", "--hooks").returncode == 0

    head = commit(work, "over the network")
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and "okstra pre-push: refusing" in proc.stderr
    add_verdict(work)
    proc = push(work, "origin", "main")  # the client hook passes; the server has no notes
    assert proc.returncode != 0 and "remote: okstra pre-receive: refusing" in proc.stderr

    out = okstra(work, "sync", "origin", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pushed"] == [VERDICTS_REF]
    proc = push(work, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "main") == head

    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", url, str(fresh))
    assert okstra(fresh, "ci", "check").returncode == 1  # a clone does not bring notes
    check = okstra(fresh, "ci", "check", "--fetch", "origin", "--format", "json")
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)["verdict"]["head"] == head


# -- gitolite -------------------------------------------------------------------------------


@pytest.fixture
def gitolite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A real gitolite (Debian's gitolite3) set up in this test's HOME; pushes reach it the way
    sshd hands them over (gitolite-shell with SSH_ORIGINAL_COMMAND). Its `testing` repository
    and the environment a `git` needs to push there."""
    shell = Path("/usr/share/gitolite3/gitolite-shell")
    if shutil.which("gitolite") is None or not shell.is_file():
        pytest.skip("gitolite is not installed (Debian's gitolite3; .ci/run installs it)")
    monkeypatch.setenv("OKSTRA_EXE", OKSTRA_EXE)
    home = Path(os.environ["HOME"])
    key = home / "admin"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    subprocess.run(["gitolite", "setup", "-pk", f"{key}.pub"], check=True, capture_output=True)
    ssh = tmp_path / "ssh"
    ssh.write_text(
        "#!/bin/sh\nfor last; do :; done\n"
        f'SSH_CONNECTION="127.0.0.1 1 127.0.0.1 22" SSH_ORIGINAL_COMMAND="$last" exec {shell} '
        "admin\n"
    )
    ssh.chmod(0o755)
    return home / "repositories" / "testing.git", {"GIT_SSH_COMMAND": str(ssh)}


def test_under_gitolite_the_update_hook_is_refused_and_pre_receive_survives_setup(
    gitolite, tmp_path: Path
):
    repo, env = gitolite
    hooks = sorted(p.name for p in (repo / "hooks").iterdir())
    proc = okstra(tmp_path, "hooks", "install", "--server", str(repo), "--update")
    assert proc.returncode == 1 and "gitolite" in proc.stderr
    assert f"git okstra hooks install --server {repo}" in proc.stderr  # the fix
    assert sorted(p.name for p in (repo / "hooks").iterdir()) == hooks  # nothing written
    proc = okstra(tmp_path, "hooks", "install", "--server", str(repo))
    assert proc.returncode == 0 and "gitolite" in proc.stdout, proc.stdout + proc.stderr
    subprocess.run(["gitolite", "setup"], check=True, capture_output=True)  # as admins do
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", "ssh://git@localhost/testing", str(work)],
                   check=True, capture_output=True, env={**os.environ, **env})  # fmt: skip
    head = commit(work, "unverified")
    proc = push(work, "origin", "HEAD:main", env=env)
    assert proc.returncode != 0 and "okstra pre-receive: refusing" in proc.stderr, proc.stderr
    add_verdict(work)
    proc = push(work, "origin", VERDICTS_REF, "HEAD:main", env=env)
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(repo, "main") == head
