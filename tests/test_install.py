"""A non-editable install into a fresh venv runs every command, data files included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_repo

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_install_runs_commands_and_the_demo(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # System site-packages supply the dependencies; the package itself is a real wheel install.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert pip.returncode == 0, pip.stderr
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import okstra_git.resources as r; print(r.data_dir('schemas'))",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(venv)), where
    assert Path(where, "task.schema.json").is_file()
    repo = make_repo(tmp_path / "r")
    for args in (
        ["task", "new", "p:g:i", "--type", "implementation-planning"],
        ["task", "show", "p:g:i", "--write-index"],
    ):
        proc = subprocess.run(
            ["git", "okstra", *args], cwd=repo, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
    assert (repo / ".okstra/tasks/g/i/task-index.md").is_file()
    assert git(repo, "rev-parse", "--verify", "refs/okstra/tasks/g/i")
    demo = subprocess.run(
        ["git", "okstra", "demo", "--dir", str(tmp_path / "demo")],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
