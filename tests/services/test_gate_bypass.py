"""Attacks on the server-side gate, each made as an attacker would make it: a real bare server
running the real contrib/pre-receive (installed by `hooks install --server`), real pushes with
`--no-verify`, and a server that demands signed verdicts (`okstra.gate.allowedSigners`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import add_verdict, commit, pair, push, remote_ref

from okstra_git.core.resources import installed_executable
from okstra_git.gate import signing
from okstra_git.git.repo import GitRepo
from okstra_git.records.verdict import VERDICTS_REF, append_verdict

OKSTRA_EXE = installed_executable() or "git-okstra"


def ssh_key(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


@pytest.fixture
def signed_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A clone, and its bare server running contrib/pre-receive that counts only verdicts
    signed by the reviewer's key; main on the server already carries a signed verdict."""
    monkeypatch.setenv("OKSTRA_EXE", OKSTRA_EXE)
    work, remote = pair(tmp_path)
    proc = okstra(remote, "hooks", "install", "--server", str(remote))
    assert proc.returncode == 0, proc.stderr
    key = ssh_key(tmp_path, "reviewer")
    (remote / "allowed_signers").write_text(
        f"test@example.invalid {key.with_suffix('.pub').read_text()}"
    )
    git(remote, "config", "okstra.gate.allowedSigners", "allowed_signers")
    commit(work, "verified", "app.txt", "reviewed code\n")
    sign_verdict(work, key)
    proc = push(work, "--no-verify", "origin", VERDICTS_REF, "main")
    assert proc.returncode == 0 and "gate open" in proc.stderr, proc.stderr
    return work, remote


def sign_verdict(work: Path, key: Path, rev: str = "HEAD") -> None:
    unsigned = add_verdict(work, rev)
    signed = unsigned.replace(recorded_at="2026-06-06T12:05:00+00:00")
    signed = signed.replace(signature=signing.sign(signed.signed_payload(), str(key)))
    append_verdict(GitRepo.open(work), signed)


def unverified_child(work: Path) -> str:
    """B: a commit on top of the verified main with a file nobody verified."""
    return commit(work, "backdoor", "app.txt", "reviewed code\nrm -rf --no-preserve-root /\n")


# -- replace refs ------------------------------------------------------------------------------


def test_a_pushed_replace_ref_cannot_dress_an_unverified_commit_as_a_verified_one(
    signed_server,
):
    work, remote = signed_server
    verified = git(work, "rev-parse", "HEAD")
    bad = unverified_child(work)
    git(work, "replace", bad, verified)
    proc = push(work, "--no-verify", "origin", f"refs/replace/{bad}")
    assert proc.returncode != 0
    assert f"refusing to update refs/replace/{bad}" in proc.stderr
    assert remote_ref(remote, f"refs/replace/{bad}") is None
    git(work, "replace", "-d", bad)
    proc = push(work, "--no-verify", "origin", f"{bad}:main")
    assert proc.returncode != 0 and "refusing to update refs/heads/main" in proc.stderr
    assert remote_ref(remote, "main") == verified


def test_a_replace_ref_already_on_the_server_is_not_followed(signed_server):
    """One made on the server itself (or before the hook was installed) fools no read."""
    work, remote = signed_server
    verified = git(work, "rev-parse", "HEAD")
    bad = unverified_child(work)
    push(work, "--no-verify", "origin", f"{bad}:refs/heads/topic")  # unprotected: the object
    git(remote, "replace", bad, verified)
    proc = push(work, "--no-verify", "origin", f"{bad}:main")
    assert proc.returncode != 0, proc.stderr
    assert f"refusing to update refs/heads/main to {bad[:12]}" in proc.stderr
    assert remote_ref(remote, "main") == verified


def test_ci_check_in_a_clone_holding_a_replace_ref_judges_the_real_commit(signed_server):
    work, remote = signed_server
    git(work, "config", "okstra.gate.allowedSigners", str(remote / "allowed_signers"))
    verified = git(work, "rev-parse", "HEAD")
    assert okstra(work, "ci", "check").returncode == 0
    bad = unverified_child(work)
    git(work, "replace", bad, verified)
    proc = okstra(work, "ci", "check", bad)
    assert proc.returncode == 1, proc.stdout
    assert f"{bad[:12]} does not pass the verification gate" in proc.stdout
    # The client hook reads the same way.
    assert okstra(work, "hooks", "install").returncode == 0
    proc = push(work, "origin", "HEAD:refs/heads/release/1")
    assert proc.returncode != 0 and "okstra pre-push: refusing" in proc.stderr


# -- symbolic refs -----------------------------------------------------------------------------


def test_a_push_through_a_symbolic_ref_is_judged_as_the_ref_it_moves(signed_server):
    work, remote = signed_server
    verified = git(work, "rev-parse", "HEAD")
    git(remote, "symbolic-ref", "refs/heads/trunk", "refs/heads/main")
    git(remote, "symbolic-ref", "refs/heads/alias", "refs/heads/trunk")  # a chain of two
    git(remote, "symbolic-ref", "refs/okstra/sneaky", "refs/heads/main")  # okstra's namespace
    unverified_child(work)
    for name in ("refs/heads/trunk", "refs/heads/alias", "refs/okstra/sneaky"):
        proc = push(work, "--no-verify", "origin", f"HEAD:{name}")
        assert proc.returncode != 0, (name, proc.stderr)
        assert "refusing to update refs/heads/main" in proc.stderr
        assert (
            f"(pushed as {name}, a symbolic ref to refs/heads/main on this server: a push to it "
            "moves that ref, so that ref is what the gate judges)"
        ) in proc.stderr
        assert remote_ref(remote, "main") == verified
    # A dangling one: the push would create the protected ref it names.
    git(remote, "symbolic-ref", "refs/heads/next-release", "refs/heads/release/9")
    proc = push(work, "--no-verify", "origin", "HEAD:refs/heads/next-release")
    assert proc.returncode != 0 and "refusing to update refs/heads/release/9" in proc.stderr
    assert remote_ref(remote, "refs/heads/release/9") is None


# -- whose notes count -------------------------------------------------------------------------


def test_the_server_counts_only_its_own_verdicts_ref_and_the_notes_being_pushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The server guards refs/notes/okstra/verdicts (here: a chained hook lets no one but the
    reviewers push it); a forged verdict in any other notes ref must not open main."""
    monkeypatch.setenv("OKSTRA_EXE", OKSTRA_EXE)
    work, remote = pair(tmp_path)
    guard = remote / "hooks" / "pre-receive"
    guard.write_text(
        "#!/bin/sh\nwhile read old new ref; do\n"
        f'  [ "$ref" = {VERDICTS_REF} ] && [ -z "$REVIEWER" ] && '
        "echo 'only reviewers push verdicts' >&2 && exit 1\ndone\nexit 0\n"
    )
    guard.chmod(0o755)
    assert okstra(remote, "hooks", "install", "--server", str(remote)).returncode == 0
    head = commit(work, "unverified")
    add_verdict(work)  # a forged, unsigned "accepted"
    proc = push(work, "--no-verify", "origin", VERDICTS_REF, "main")
    assert proc.returncode != 0 and "only reviewers push verdicts" in proc.stderr
    for where in ("refs/notes/okstra-remotes/origin/verdicts", "refs/notes/okstra-remotes/x/y"):
        forged = push(work, "--no-verify", "origin", f"{VERDICTS_REF}:{where}")
        assert forged.returncode == 0, forged.stderr  # notes refs travel freely …
        proc = push(work, "--no-verify", "origin", "main")
        assert proc.returncode != 0, proc.stderr  # … but only the server's own count
        assert f"refusing to update refs/heads/main to {head[:12]}" in proc.stderr
    assert remote_ref(remote, "main") != head
    # Pushed with the branch by a reviewer, the same notes open it.
    proc = push(work, "--no-verify", "origin", VERDICTS_REF, "main", env={"REVIEWER": "1"})
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "main") == head
