"""Shared fixtures: real git repositories in temp dirs and the real `git okstra` executable."""

from __future__ import annotations

import atexit
import io
import locale
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import settings

# No test times itself: hypothesis's per-example deadline (200 ms) is a timed assertion, and a
# loaded CI machine misses it on examples that are merely slow there.
settings.register_profile("okstra", deadline=None)
settings.load_profile("okstra")

# Every record okstra builds is schema-checked before it is stored, in this process and in
# every git-okstra the tests start (outside tests only records read from elsewhere are).
os.environ["OKSTRA_CHECK_OWN_RECORDS"] = "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow first, in their order (the others keep theirs): the parallel run
    hands tests out in this order, and one of half a minute handed out last would leave the
    other processors idle while it runs. Whole files move (a file's module-scoped fixtures are
    built once), and every worker collects the same order, as xdist requires."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}

GITCONFIG = (
    "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
    '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
)
"""The global git config of every test's HOME (:func:`isolate_git`)."""


@pytest.fixture(autouse=True)
def _isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test gets its own HOME (empty global git config, its own ~/.okstra)."""
    isolate_git(tmp_path_factory.mktemp("home"), monkeypatch)


def isolate_git(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point HOME at ``home`` with a minimal global git config and a fixed identity (a
    module-scoped world sets this up before any test's own HOME exists)."""
    (home / ".gitconfig").write_text(GITCONFIG)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    # libgit2 reads where the global config lives once, when pygit2 loads: point it at this
    # HOME, as a process started now would find it (commands run in this process, see okstra).
    import pygit2
    from pygit2.enums import ConfigLevel

    pygit2.settings.search_path[ConfigLevel.GLOBAL] = str(home)
    pygit2.settings.search_path[ConfigLevel.XDG] = str(home / ".config" / "git")


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
    """Run the CLI as a user does and see what they see: exit code, stdout, stderr; ``env``
    replaces the environment it would inherit.

    In this process (``okstra_git.entry.main`` with the working folder, the environment,
    stdin and file descriptors 1 and 2 swapped in for the call, so the git processes it starts
    write where its own output goes): starting an interpreter for each of the suite's ~400
    checks cost more than the checks. A check that needs a process of its own — a hook git
    runs, a kill, a race (:func:`race`), what a command imports — starts one itself."""
    from okstra_git.entry import main

    environ = {**(os.environ if env is None else env), "OKSTRA_DEBUG": ""}
    saved_environ, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_fds = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        # As Python opens them for a pipe: the locale's encoding, stdout strict and stderr
        # backslashreplace; stdin empty unless given.
        encoding = locale.getpreferredencoding(False)
        sys.stdin = io.TextIOWrapper(io.BytesIO((input or "").encode(encoding)), encoding)
        sys.stdout = open(1, "w", encoding=encoding, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False)  # noqa: SIM115
        os.environ.clear()
        os.environ.update(environ)
        try:
            os.chdir(cwd)
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                if isinstance(exc.code, str):
                    sys.stderr.write(exc.code + "\n")
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            sys.stdout.close()
            sys.stderr.close()
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            os.dup2(saved_fds[0], 1)
            os.dup2(saved_fds[1], 2)
            for fd in saved_fds:
                os.close(fd)
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_environ)
        texts = []
        for captured in (out, err):
            captured.seek(0)  # read back as subprocess's text mode does: universal newlines
            texts.append(io.TextIOWrapper(captured, encoding, errors="strict").read())
    return subprocess.CompletedProcess(["git", "okstra", *args], code, *texts)


def make_repo(path: Path) -> Path:
    """``git init`` in ``path``, then README.md committed as "initial" on main.

    Where git would make exactly the repository this process already made once (the HOME of
    :func:`isolate_git` and no other GIT_ variable), that one is copied instead: the ~500 calls
    of the suite each started three git processes. The copy differs only in its commit's
    timestamp (the first call's) and the files' inodes and times."""
    path.mkdir(parents=True, exist_ok=True)
    template = _repo_template()
    if template and not (path / ".git").exists() and not (path / "README.md").exists():
        shutil.copytree(template / ".git", path / ".git", symlinks=True)
        shutil.copy2(template / "README.md", path / "README.md")
        return path
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# sample\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "initial")
    return path


def make_remote(seed: Path, remote: Path) -> Path:
    """A bare repository at ``remote`` holding ``seed``'s main, as ``git init --bare`` and a
    push of main make it (copied, as :func:`make_repo` does, where ``seed`` is that copy)."""
    template = _repo_template()
    made = template and template.parent / "remote.git"
    if made and not remote.exists() and _head(seed) == _head(template):
        if not made.exists():
            git(made.parent, "init", "-q", "--bare", "-b", "main", str(made))
            git(template, "push", "-q", str(made), "main")
        shutil.copytree(made, remote, symlinks=True)
        return remote
    git(seed.parent, "init", "-q", "--bare", "-b", "main", str(remote))
    git(seed, "push", "-q", str(remote), "main")
    return remote


def _head(repo: Path) -> str | None:
    try:
        return (repo / ".git" / "refs" / "heads" / "main").read_text()
    except OSError:
        return None


_TEMPLATES: dict[tuple[tuple[str, str], ...], Path] = {}


def _repo_template() -> Path | None:
    """The repository :func:`make_repo` makes in this environment, made once per process
    (None where the environment is not a test's own: another HOME config, a GIT_ variable)."""
    home = Path(os.environ.get("HOME", "/nonexistent"))
    try:
        if (home / ".gitconfig").read_text() != GITCONFIG or (home / ".config" / "git").exists():
            return None
    except OSError:
        return None
    git_env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("GIT_")))
    if dict(git_env) != GIT_ENV:
        return None
    if git_env not in _TEMPLATES:
        made = Path(tempfile.mkdtemp(prefix="okstra-test-repo-")) / "repo"
        atexit.register(shutil.rmtree, made.parent, True)
        path = made
        path.mkdir()
        git(path, "init", "-q", "-b", "main")
        (path / "README.md").write_text("# sample\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "initial")
        _TEMPLATES[git_env] = made
    return _TEMPLATES[git_env]


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
