"""The README's set-up, for real: the wheel installed with its dependencies into a fresh venv,
and on top of the system Python's packages; each runs commands, the demo and the shipped data.

One wheel and one pair of installs per session (a venv with its dependencies takes a while),
shared by the tests below.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import git, make_repo

# On one worker of a parallel run: one wheel and its two installs (session-scoped), built once.
pytestmark = pytest.mark.xdist_group("test_install")

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Install:
    """One installation of the wheel: its interpreter, and an environment whose PATH finds its
    ``git-okstra`` first and whose Python path holds nothing of this checkout."""

    python: Path
    env: dict[str, str]

    def run(self, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, text=True)


def _installs(wheel: Path, root: Path) -> tuple[Install, Install]:
    """Two installs made at once: a venv that sees no other packages (every dependency from
    the index, as for a user's `pip install .` in a new venv), and one on top of the system
    Python's packages (whatever it has; pip adds what is missing) without touching them."""
    base = getattr(sys, "_base_executable", sys.executable)
    plans = {"fresh": (sys.executable, []), "system": (base, ["--system-site-packages"])}
    procs = {}
    for name, (python, args) in plans.items():
        prefix = root / name
        # No pip inside (ensurepip costs seconds): this pip installs into it.
        subprocess.run([python, "-m", "venv", "--without-pip", *args, str(prefix)], check=True)
        pip = [sys.executable, "-m", "pip", "--python", str(prefix / "bin" / "python")]
        procs[name] = subprocess.Popen(
            [*pip, "install", "-q", str(wheel)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    made = []
    for name, proc in procs.items():
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{name}: {out[-3000:]}"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{root / name / 'bin'}{os.pathsep}{env['PATH']}"
        made.append(Install(root / name / "bin" / "python", env))
    return made[0], made[1]


@pytest.fixture(scope="session")
def installs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Install, Install]:
    """(fresh venv, system Python) installs of one wheel built from this checkout."""
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("okstra_git-*.whl")
    return _installs(wheel, tmp_path_factory.mktemp("installs"))


@pytest.fixture
def fresh(installs: tuple[Install, Install]) -> Install:
    return installs[0]


def _data_dir(install: Install, name: str, cwd: Path) -> str:
    code = f"import okstra_git.core.resources as r; print(r.data_dir({name!r}))"
    where = install.run(str(install.python), "-c", code, cwd=cwd).stdout.strip()
    assert where.startswith(str(install.python.parent.parent)), where
    return where


@pytest.mark.slow
def test_the_readme_set_up_in_a_fresh_venv_and_on_the_system_python(
    installs: tuple[Install, Install], tmp_path: Path
) -> None:
    """`pip install . && git okstra demo` in both installs (the demos run at once), after a
    command that writes a task and one that reads it back."""
    demos = []
    for n, install in enumerate(installs):
        assert Path(_data_dir(install, "schemas", tmp_path), "task.schema.json").is_file()
        repo = make_repo(tmp_path / f"r{n}")
        for args in (
            ["task", "new", "p:g:i", "--type", "implementation-planning"],
            ["task", "show", "p:g:i", "--write-index"],
        ):
            proc = install.run("git", "okstra", *args, cwd=repo)
            assert proc.returncode == 0, proc.stderr
        assert (repo / ".okstra/tasks/g/i/task-index.md").is_file()
        assert git(repo, "rev-parse", "--verify", "refs/okstra/tasks/g/i")
        demos.append(
            subprocess.Popen(
                ["git", "okstra", "demo", "--dir", str(tmp_path / f"demo{n}")],
                cwd=tmp_path,
                env=install.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for demo in demos:
        out, err = demo.communicate(timeout=600)
        assert demo.returncode == 0, out[-3000:] + err[-3000:]


@pytest.mark.slow
def test_the_wheel_ships_the_man_page_contrib_and_version(fresh: Install, tmp_path: Path) -> None:
    """In the fresh venv: `--version`, `git okstra --help` showing the shipped man page with
    MANPATH unset (man-db finds <venv>/share/man from <venv>/bin on PATH), the MIT licence and
    Python floor in the metadata, contrib's files, and `hooks install --server` from them."""
    version = fresh.run("git", "okstra", "--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    from okstra_git import __version__

    assert version.stdout == f"okstra-git {__version__}\n"  # the metadata's, built from it
    page = fresh.python.parent.parent / "share" / "man" / "man1" / "git-okstra.1"
    assert page.is_file()
    if shutil.which("man"):
        env = {k: v for k, v in fresh.env.items() if k != "MANPATH"}
        env.update(MANPAGER="cat", PAGER="cat", MANWIDTH="100")
        shown = subprocess.run(
            ["git", "okstra", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert shown.returncode == 0, shown.stderr
        assert "GIT-OKSTRA(1)" in shown.stdout and "hooks install" in shown.stdout

    meta = fresh.run(
        str(fresh.python),
        "-c",
        "import importlib.metadata as m; d = m.distribution('okstra-git'); "
        "print(d.metadata['License-Expression'], d.metadata['Requires-Python'], d.version); "
        "print(*[f.name for f in d.files if f.name == 'LICENSE'])",
        cwd=tmp_path,
    ).stdout.split()
    assert meta == ["MIT", ">=3.11", __version__, "LICENSE"], meta
    contrib = _data_dir(fresh, "contrib", tmp_path)
    for name in (
        "pre-receive",
        "update",
        "github-actions/okstra-gate.yml",
        "gitlab-ci/okstra-gate.yml",
    ):
        assert Path(contrib, name).is_file(), name
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    proc = fresh.run("git", "okstra", "hooks", "install", "--server", str(bare), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    exe = fresh.python.parent / "git-okstra"
    assert f"OKSTRA_EXE=${{OKSTRA_EXE:-{exe}}}" in (bare / "hooks" / "pre-receive").read_text()
    # The documents the help names are in the wheel: `git okstra docs NAME` prints them.
    doc = fresh.run("git", "okstra", "docs", "plan-format", cwd=tmp_path)
    assert doc.returncode == 0 and doc.stdout.startswith("# The plan format\n"), doc.stderr
    assert _data_dir(fresh, "docs", tmp_path).startswith(str(fresh.python.parent.parent))


@pytest.mark.slow
def test_the_benches_time_the_installed_wheel(fresh: Install, tmp_path: Path) -> None:
    """``bench/report.py --installed`` (the benches from this checkout, okstra from the wheel,
    as issue 25's table is measured): it names the venv's okstra and runs it; with this checkout
    on PYTHONPATH it refuses rather than time the wrong okstra."""
    report = [str(fresh.python), str(ROOT / "bench" / "report.py"), "--short", "--installed"]
    ran = fresh.run(*report, "--only", "completion", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    site = fresh.python.parent.parent / "lib"
    first = ran.stdout.splitlines()[0]
    assert f"from {site}" in first and f"runs as {fresh.python.parent / 'git-okstra'}" in first
    assert "completion of a task key, 200 tasks" in ran.stdout
    wrong = subprocess.run(
        report,
        cwd=tmp_path,
        env={**fresh.env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert wrong.returncode != 0 and "--installed: okstra_git comes from" in wrong.stderr
