"""Every command honours git's own ways of naming the repository and its config, as `git okstra`
is run by git: `git -C DIR`, `GIT_DIR` / `--git-dir` (with `GIT_WORK_TREE` / `--work-tree`),
`git -c KEY=VALUE` and `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`,
`GIT_CONFIG_GLOBAL`. Real `git` runs the real `git-okstra` (on PATH: the code under test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git, make_repo

from okstra_git.core.resources import installed_executable


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``git ARGS`` in a folder with git-okstra on PATH; returns the finished process."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git-okstra").symlink_to(installed_executable() or shutil.which("git-okstra"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    def git_okstra(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args], cwd=cwd, text=True, capture_output=True, env={**os.environ, **env}
        )

    return git_okstra


def task_keys(repo: Path) -> list[str]:
    out = git(repo, "for-each-ref", "--format=%(refname)", "refs/okstra/tasks/")
    return [
        json.loads(git(repo, "show", f"{ref}:task.json"))["taskKey"] for ref in out.splitlines()
    ]


NEW = ("okstra", "task", "new", "g:x", "--type", "implementation-planning")


def test_git_c_sets_config_for_the_command(repo: Path, run):
    proc = run(repo, "-c", "okstra.projectId=zzz", *NEW)
    assert proc.returncode == 0, proc.stderr
    assert task_keys(repo) == ["zzz:g:x"]
    assert git(repo, "config", "--get", "okstra.projectId", check=False) == ""  # not written


def test_git_config_count_sets_config_for_the_command(repo: Path, run):
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "okstra.projectId"}
    proc = run(repo, *NEW, **env, GIT_CONFIG_VALUE_0="fromenv")
    assert proc.returncode == 0, proc.stderr
    assert task_keys(repo) == ["fromenv:g:x"]


def test_git_config_global_names_the_global_file(repo: Path, run, tmp_path: Path):
    other = tmp_path / "other.gitconfig"
    other.write_text("[okstra]\n\tprojectId = global-one\n")
    proc = run(repo, *NEW, GIT_CONFIG_GLOBAL=str(other))
    assert proc.returncode == 0, proc.stderr
    assert task_keys(repo) == ["global-one:g:x"]


def test_git_dir_and_work_tree_name_the_repository(repo: Path, run, tmp_path: Path):
    elsewhere = make_repo(tmp_path / "elsewhere")  # where the command runs: not the one meant
    git(repo, "config", "okstra.projectId", "meant")
    proc = run(elsewhere, f"--git-dir={repo / '.git'}", f"--work-tree={repo}", *NEW)
    assert proc.returncode == 0, proc.stderr
    assert task_keys(repo) == ["meant:g:x"] and task_keys(elsewhere) == []
    listed = run(elsewhere, "okstra", "task", "list", "--json", GIT_DIR=str(repo / ".git"))
    assert listed.returncode == 0, listed.stderr
    assert [t["taskKey"] for t in json.loads(listed.stdout)["tasks"]] == ["meant:g:x"]
    there = run(tmp_path, "-C", str(repo), "okstra", "task", "show", "meant:g:x")
    assert there.returncode == 0, there.stderr
    bad = run(elsewhere, "okstra", "task", "list", GIT_DIR=str(tmp_path / "nothing"))
    assert bad.returncode != 0 and "internal error" not in bad.stderr


def _system_config_can_be_swapped() -> bool:
    """A mount namespace (root, unshare) can lay another file over /etc/gitconfig, the system
    config both git and libgit2 read, for one process tree — the machine's own stays as it is."""
    if os.geteuid() != 0 or not os.path.isfile("/etc/gitconfig") or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(
    not _system_config_can_be_swapped(), reason="needs root and unshare -m (a mount namespace)"
)
def test_git_config_nosystem_leaves_out_the_system_config(repo: Path, run, tmp_path: Path):
    """GIT_CONFIG_NOSYSTEM: git reads no /etc/gitconfig, so neither does okstra — libgit2 read
    it anyway, and a project id (or an identity) git ignores named okstra's records."""
    system = tmp_path / "system.gitconfig"
    system.write_text("[okstra]\n\tprojectId = from-system\n")
    swap = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/gitconfig && exec "$@"']
    for nosystem, task in (("0", "g:x"), ("1", "g:y")):
        argv = [*swap, str(system), "git", *NEW[:3], task, *NEW[4:]]
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": nosystem}
        proc = subprocess.run(argv, cwd=repo, text=True, capture_output=True, env=env)
        assert proc.returncode == 0, proc.stderr
    keys = task_keys(repo)
    assert "from-system:g:x" in keys and len(keys) == 2, keys
    (without,) = [key for key in keys if key.endswith(":g:y")]
    assert not without.startswith("from-system:"), without
