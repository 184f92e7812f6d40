"""Shared fixtures: real git repositories in temp dirs and the real `git okstra` executable."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

# Every record okstra builds is schema-checked before it is stored, in this process and in
# every git-okstra the tests start (outside tests only records read from elsewhere are).
os.environ["OKSTRA_CHECK_OWN_RECORDS"] = "1"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def _isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test gets its own HOME (empty global git config, its own ~/.okstra)."""
    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)


def isolate_git(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point HOME at ``home`` with a minimal global git config and a fixed identity (a
    module-scoped world sets this up before any test's own HOME exists)."""
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)


@pytest.fixture
def scripts_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter's scripts folder first on PATH, as in an activated venv: the tools the
    test extra installs (pre-commit, lefthook, check-jsonschema) are found there even when the
    suite runs with a venv's python that was never activated."""
    scripts = sysconfig.get_path("scripts")
    monkeypatch.setenv("PATH", f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, text=True, capture_output=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout.strip()


def okstra(
    cwd: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a separate process (exit codes and streams as a user sees them);
    ``env`` replaces the environment it inherits."""
    return subprocess.run(
        [sys.executable, "-m", "okstra_git", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        input=input,
        env={**(os.environ if env is None else env), "OKSTRA_DEBUG": ""},
    )


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# sample\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A non-bare repository with one commit on main."""
    return make_repo(tmp_path / "repo")


_RACER = """
import sys, time
from pathlib import Path
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.001)
from okstra_git.entry import main
sys.exit(main(sys.argv[2:]))
"""


def race(cwd: Path, count: int, *args: str) -> list[subprocess.CompletedProcess[str]]:
    """``count`` real processes run ``git okstra ARGS`` at the same moment: each is started and
    waits for a go-file, so interpreter start-up does not spread them out."""
    return race_in([cwd] * count, *args)


def race_in(cwds: list[Path], *args: str) -> list[subprocess.CompletedProcess[str]]:
    """:func:`race`, one process in each of ``cwds`` (clones racing through one remote)."""
    return race_jobs([(cwd, list(args)) for cwd in cwds])


def race_jobs(jobs: list[tuple[Path, list[str]]]) -> list[subprocess.CompletedProcess[str]]:
    """:func:`race` of different commands: ``git okstra ARGS`` in ``cwd`` for each job."""
    go = jobs[0][0].parent / f"go-{os.getpid()}-{id(jobs)}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(go), *args],
            cwd=cwd,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for cwd, args in jobs
    ]
    time.sleep(0.5)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    go.unlink()
    return results
