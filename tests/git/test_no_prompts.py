"""Network calls the user did not ask for never wait on a credential prompt (issue 20): the probe
a refusal makes (does the remote hold the missing task?) fails at once where git would ask for a
password, while ``sync`` — asked for — prompts as git does. Each command runs in a process of its
own with a terminal of its own (a pseudo-terminal as its controlling terminal, where git and ssh
ask), against a local HTTP server that answers every request with 401."""

from __future__ import annotations

import http.server
import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git, make_repo

KEY = "p:g:i"
PROMPT = b"Username for"

# A session of its own with the terminal as its controlling terminal (what git's prompt opens
# as /dev/tty), then the command.
_ON_TERMINAL = (
    "import os, sys; os.setsid(); fd = os.open(sys.argv[1], os.O_RDWR); os.dup2(fd, 0); "
    "os.execv(sys.executable, [sys.executable, '-m', 'okstra_git', *sys.argv[2:]])"
)


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="okstra test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def asking_url() -> Iterator[str]:
    """An http URL whose server wants a password for everything."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/remote.git"
    finally:
        server.shutdown()
        server.server_close()


def _clone_of(tmp_path: Path, url: str) -> Path:
    repo = make_repo(tmp_path / "clone")
    git(repo, "remote", "add", "origin", url)
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", "init", "--remote", "origin"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return repo


def _prompting_env() -> dict[str, str]:
    """This environment with nothing that turns git's prompts off (a CI runner may set them)."""
    drop = ("GIT_TERMINAL_PROMPT", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH_COMMAND", "GIT_SSH")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _on_terminal(cwd: Path, *args: str, env: dict[str, str]) -> tuple[int | None, bytes, str]:
    """Run ``git okstra ARGS`` on a terminal of its own until it exits or asks on that terminal
    for a user name (then it is stopped): its exit code (None: it asked), what it wrote on the
    terminal, its stderr."""
    import pty

    main, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _ON_TERMINAL, os.ttyname(side), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    said = b""
    try:
        for _ in range(600):  # a guard against a hang that prints nothing: two minutes
            # Kept open here meanwhile (the child opens it by name): reads never see it closed.
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                said += os.read(main, 4096)
            if PROMPT in said or (proc.poll() is not None and not ready):
                break
        else:
            raise AssertionError(f"neither exited nor asked: {said!r}")
    finally:
        asked = proc.poll() is None
        if asked:
            proc.kill()
        _, err = proc.communicate()
        os.close(side)
        os.close(main)
    return (None if asked else proc.returncode), said, err.decode("utf-8", "replace")


def test_the_missing_task_probe_never_prompts_where_sync_does(tmp_path: Path, asking_url: str):
    clone = _clone_of(tmp_path, asking_url)
    env = _prompting_env()
    # Asked for: sync prompts as git does (so this terminal would show a prompt).
    code, said, _ = _on_terminal(clone, "sync", "origin", env=env)
    assert code is None and PROMPT in said, said
    # Not asked for: the probe on the way out of a refusal fails at once, and says so.
    code, said, err = _on_terminal(clone, "task", "status", KEY, env=env)
    assert PROMPT not in said, said
    assert code == 1, err
    assert f"task {KEY} is not here yet; origin could not be asked whether it has it" in err
    assert "terminal prompts disabled" in err
    assert "git okstra sync origin" in err


def test_the_probe_asks_ssh_for_batch_mode_with_the_users_own_ssh_command(tmp_path: Path):
    """Over ssh, the probe runs the user's ssh command (``core.sshCommand``, here a script that
    writes down its arguments) with ``-o BatchMode=yes`` after the user's own options; sync runs
    it as configured."""
    seen = tmp_path / "ssh-args"
    ssh = tmp_path / "fake-ssh"
    ssh.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {seen}\necho "no route" >&2\nexit 255\n')
    ssh.chmod(0o755)
    clone = _clone_of(tmp_path, "ssh://git@example.invalid/remote.git")
    git(clone, "config", "core.sshCommand", f"{ssh} -i /keys/deploy")
    env = _prompting_env()
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", "task", "status", KEY],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "could not be asked" in proc.stderr, proc.stderr
    probe = seen.read_text().splitlines()
    assert probe[:4] == ["-i", "/keys/deploy", "-o", "BatchMode=yes"], probe
    seen.unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", "sync", "origin"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    asked = seen.read_text().splitlines()
    assert asked[:2] == ["-i", "/keys/deploy"] and "BatchMode=yes" not in asked, asked
