"""A clone and its local bare remote, and verdicts written the way `verify record` writes them
(one canonical line on the commit and on its tree), for the hook, CI and sync tests."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import git, make_remote, make_repo, okstra

from okstra_git.git.repo import GitRepo
from okstra_git.records.verdict import Verdict, append_verdict

KEY = "proj:grp:feat"


def pair(tmp_path: Path, name: str = "work") -> tuple[Path, Path]:
    """A bare remote holding main, and a clone of it with ``origin`` configured."""
    remote = tmp_path / "remote.git"
    if not remote.exists():
        make_remote(make_repo(tmp_path / "seed"), remote)
    work = tmp_path / name
    git(tmp_path, "clone", "-q", str(remote), str(work))
    git(work, "config", "user.name", "Test User")
    git(work, "config", "user.email", "test@example.invalid")
    return work, remote


def commit(repo: Path, message: str, path: str = "file.txt", text: str | None = None) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text if text is not None else message + "\n")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def add_verdict(
    repo: Path,
    rev: str = "HEAD",
    verdict: str = "accepted",
    scope: str = "whole-task",
    key: str = KEY,
    stages: tuple[int, ...] = (1, 2),
) -> Verdict:
    """Record a verdict on ``rev`` as `git okstra verify record` stores it."""
    grepo = GitRepo.open(repo)
    head = grepo.resolve_commit(rev)
    record = Verdict(
        task_key=key,
        scope=scope,
        stages=list(stages),
        base=head,
        head=head,
        head_tree=grepo.tree_id(head),
        verdict=verdict,
        blocker_count=0 if verdict == "accepted" else 1,
        report_digest="sha256:" + "ab" * 32,
        routing="release-handoff" if scope == "whole-task" else "implementation",
        recorded_at="2026-06-06T12:00:00+00:00",
        recorded_by="Test User <test@example.invalid>",
    )
    append_verdict(grepo, record)
    return record


def push(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A real ``git push`` (the hook runs as git runs it)."""
    return subprocess.run(
        ["git", "push", *args],
        cwd=repo,
        text=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def remote_ref(remote: Path, ref: str) -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", ref], cwd=remote, text=True, capture_output=True
    )
    return proc.stdout.strip() or None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def git_daemon(base: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """A real `git daemon` serving the repositories under ``base`` on 127.0.0.1 (push enabled);
    yields its ``git://`` URL and stops it on leaving."""
    port = free_port()
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}",
         "--export-all", "--enable=receive-pack", f"--base-path={base}", str(base)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("git daemon did not start") from None
                time.sleep(0.05)
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def install(repo: Path, *args: str) -> str:
    proc = okstra(repo, "hooks", "install", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def snapshot(repo: Path) -> dict[str, tuple[bytes, int] | str]:
    """Every hook file git could run for ``repo`` (bytes and mode), and core.hooksPath."""
    found: dict[str, tuple[bytes, int] | str] = {
        "core.hooksPath": git(repo, "config", "--get", "core.hooksPath", check=False)
    }
    for folder in (repo / ".git" / "hooks", repo / ".githooks", repo / ".husky"):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if path.is_file() and not path.name.endswith(".sample"):
                found[str(path.relative_to(repo))] = (path.read_bytes(), path.stat().st_mode)
    return found
