"""`git okstra hooks install` beside the real hook managers, in both install orders: pre-commit,
husky 9 (through npm), lefthook and git-lfs. Each time an unverified protected push is refused,
a verified one passes, the team's own hook still runs, the work tree stays clean, and uninstall
puts back exactly what was there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import add_verdict, commit, install, pair, push, remote_ref, snapshot

from okstra_git.logic.hooklayout import LEFTHOOK_CONFIG, LEFTHOOK_SCRIPT_TEXT, MARKER, TEAM_LINE

ROOT = Path(__file__).resolve().parents[2]
# On one worker of a parallel run: the pre-commit store and husky's node_modules (session-scoped)
# are made once.
pytestmark = [pytest.mark.usefixtures("scripts_on_path"), pytest.mark.xdist_group("hook_managers")]


def run(cwd: Path, *argv: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        argv, cwd=cwd, text=True, capture_output=True, env={**os.environ, **(env or {})}
    )
    assert proc.returncode == 0, f"{argv}: {proc.stdout}{proc.stderr}"
    return proc.stdout + proc.stderr


def status(repo: Path) -> dict:
    """`hooks status --json`; it exits 1 exactly when some push would not run the gate (from
    here or another worktree) or would stop uploading LFS objects."""
    proc = okstra(repo, "hooks", "status", "--json")
    found = json.loads(proc.stdout)
    every = found["runs"] and all(w["runs"] for w in found["worktrees"]) and not found["lfs"]
    assert proc.returncode == (0 if every else 1), (proc.returncode, found, proc.stderr)
    assert bool(found["problems"]) == (not every), found
    return found


def gated(work: Path, remote: Path, log: Path, ran: Callable[[], int]) -> None:
    """The four pushes every order must get right, ending with a verified main on the remote.

    ``ran()`` counts the team hook's runs so far.
    """
    git(work, "checkout", "-q", "-b", "feature")
    unverified = commit(work, "unverified")
    git(work, "checkout", "-q", "main")
    git(work, "merge", "-q", "--ff-only", "feature")
    for specs in (
        ["main"],
        ["feature", "main"],  # several refs: the protected one is not the first
        ["feature"],  # first, so the remote has the commits…
        ["feature:refs/heads/release/5"],  # …then a protected ref made only of them
    ):
        proc = push(work, "origin", *specs)
        if specs == ["feature"]:
            assert proc.returncode == 0, proc.stderr
            continue
        assert proc.returncode != 0, (specs, proc.stderr)
        assert "refusing to update" in proc.stderr, (specs, proc.stderr)
    assert remote_ref(remote, "main") != unverified and remote_ref(remote, "release/5") is None
    git(remote, "branch", "release/0", "main")
    proc = push(work, "origin", "--delete", "release/0")
    assert proc.returncode != 0 and "refusing to delete the protected ref" in proc.stderr
    before = ran()
    add_verdict(work)
    proc = push(work, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "main") == unverified
    assert ran() > before, "the team's own pre-push hook must still run"
    assert git(work, "status", "--porcelain") == ""


def team_counter(log: Path) -> Callable[[], int]:
    return lambda: len(log.read_text().splitlines()) if log.exists() else 0


# -- pre-commit ---------------------------------------------------------------------------------

PRE_COMMIT_CONFIG = """repos:
  - repo: local
    hooks:
      - id: team-check
        name: team check
        entry: sh -c 'echo team >> "$TEAM_LOG"'
        language: system
        pass_filenames: false
        always_run: true
        stages: [pre-push]
"""


def pre_commit_clone(tmp_path: Path) -> tuple[Path, Path, Path]:
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed (it is in the test extra)")
    work, remote = pair(tmp_path)
    (work / ".pre-commit-config.yaml").write_text(PRE_COMMIT_CONFIG)
    git(work, "add", ".pre-commit-config.yaml")
    git(work, "commit", "-q", "-m", "pre-commit config")
    git(work, "push", "-q", "--no-verify", "origin", "main")
    return work, remote, tmp_path / "team.log"  # TEAM_LOG (the team_log_env fixture)


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit store for the session (each HOME would otherwise make its own)."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def team_log_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pre_commit_home: Path) -> Path:
    log = tmp_path / "team.log"
    monkeypatch.setenv("TEAM_LOG", str(log))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
    return log


def test_pre_commit_first_then_okstra(tmp_path: Path, team_log_env: Path):
    work, remote, log = pre_commit_clone(tmp_path)
    run(work, "pre-commit", "install", "-t", "pre-push")
    hooks = work / ".git" / "hooks"
    legacy_before = '#!/bin/sh\necho legacy >> "$TEAM_LOG"\n'
    (hooks / "pre-push.legacy").write_text(legacy_before)  # someone's migrated hook
    (hooks / "pre-push.legacy").chmod(0o755)
    before = snapshot(work)
    pre_commit_script = (hooks / "pre-push").read_bytes()

    out = install(work)
    assert "(pre-commit)" in out and "pre-push.legacy" in out
    assert (hooks / "pre-push").read_bytes() == pre_commit_script  # never moved
    assert MARKER in (hooks / "pre-push.legacy").read_text()
    assert (hooks / "pre-push.okstra-chained").read_text() == legacy_before
    assert status(work)["runs"] and status(work)["manager"] == "pre-commit"
    gated(work, remote, log, team_counter(log))
    assert log.read_text().count("legacy") >= 1  # the chained .legacy ran too

    run(work, "pre-commit", "install", "-t", "pre-push")  # again: still no migration mode
    commit(work, "more")
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and "migration mode" not in proc.stdout + proc.stderr
    assert "refusing to update refs/heads/main" in proc.stderr

    assert okstra(work, "hooks", "uninstall").returncode == 0
    assert snapshot(work) == before


def test_okstra_first_then_pre_commit(tmp_path: Path, team_log_env: Path):
    work, remote, log = pre_commit_clone(tmp_path)
    before = snapshot(work)
    install(work)
    out = run(work, "pre-commit", "install", "-t", "pre-push")
    assert "migration mode" in out  # pre-commit moved okstra's script to pre-push.legacy
    hooks = work / ".git" / "hooks"
    assert MARKER in (hooks / "pre-push.legacy").read_text()
    assert "unchanged" in install(work)
    assert status(work)["runs"]
    gated(work, remote, log, team_counter(log))
    proc = push(work, "origin", "main")
    assert "migration mode" not in proc.stdout + proc.stderr

    # `pre-commit install -f` deletes pre-push.legacy: status says the gate is gone.
    run(work, "pre-commit", "install", "-f", "-t", "pre-push")
    assert not status(work)["runs"]
    install(work)
    assert status(work)["runs"]
    after_pre_commit = (hooks / "pre-push").read_bytes()
    assert okstra(work, "hooks", "uninstall").returncode == 0
    assert not (hooks / "pre-push.legacy").exists()
    assert (hooks / "pre-push").read_bytes() == after_pre_commit
    run(work, "pre-commit", "uninstall", "-t", "pre-push")
    assert snapshot(work) == before


def test_an_older_okstra_chaining_pre_commit_is_repaired(tmp_path: Path, team_log_env: Path):
    """The state that failed every push: okstra had moved pre-commit's script aside, then
    `pre-commit install` moved okstra's to pre-push.legacy."""
    work, _, _ = pre_commit_clone(tmp_path)
    run(work, "pre-commit", "install", "-t", "pre-push")
    hooks = work / ".git" / "hooks"
    os.replace(hooks / "pre-push", hooks / "pre-push.okstra-chained")
    (hooks / "pre-push").write_text((ROOT / "hooks" / "pre-push").read_text())
    (hooks / "pre-push").chmod(0o755)
    run(work, "pre-commit", "install", "-t", "pre-push")
    commit(work, "x")
    broken = push(work, "origin", "HEAD:refs/heads/topic")
    assert "migration mode" in broken.stdout + broken.stderr
    out = install(work)
    assert "migration mode" in out  # the note says what was removed and why
    proc = push(work, "origin", "HEAD:refs/heads/topic")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_pre_commit_hook_entry_refuses_until_the_full_gate_is_installed(
    tmp_path: Path, team_log_env: Path
):
    """The entry .pre-commit-hooks.yaml ships, run by the real pre-commit (as a local hook):
    alone it cannot see a multi-ref push, so it refuses and names the fix."""
    yaml = pytest.importorskip("yaml")
    (entry,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert entry["stages"] == ["pre-push"] and entry["always_run"] is True
    work, remote, _ = pre_commit_clone(tmp_path)
    config = PRE_COMMIT_CONFIG + (
        f"      - id: okstra-gate\n        name: okstra gate\n        entry: {entry['entry']}\n"
        "        language: system\n        pass_filenames: false\n        always_run: true\n"
        "        stages: [pre-push]\n"
    )
    (work / ".pre-commit-config.yaml").write_text(config)
    git(work, "commit", "-q", "-am", "okstra gate through pre-commit")
    run(work, "pre-commit", "install", "-t", "pre-push")
    head = commit(work, "feature work")
    proc = push(work, "origin", "HEAD:refs/heads/topic")  # unprotected, yet refused
    assert proc.returncode != 0 and "git okstra hooks install" in proc.stdout + proc.stderr
    install(work)
    add_verdict(work)
    proc = push(work, "origin", "HEAD:refs/heads/topic", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert remote_ref(remote, "main") == head


# -- husky 9 ------------------------------------------------------------------------------------

PACKAGE_JSON = {
    "name": "team",
    "private": True,
    "scripts": {"prepare": "husky"},
    "devDependencies": {"husky": "^9"},
}


@pytest.fixture(scope="session")
def husky_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """node_modules with husky 9, installed once from the npm registry."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the husky tests need node and npm")
    folder = tmp_path_factory.mktemp("husky")
    (folder / "package.json").write_text(json.dumps({"name": "x", "private": True}))
    proc = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--save-dev", "husky@9"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"npm could not install husky: {proc.stderr.strip()[-300:]}")
    return folder / "node_modules"


def husky_clone(tmp_path: Path, modules: Path) -> tuple[Path, Path, Path]:
    work, remote = pair(tmp_path)
    (work / "package.json").write_text(json.dumps(PACKAGE_JSON, indent=2))
    (work / ".gitignore").write_text("node_modules/\npackage-lock.json\n")
    (work / ".husky").mkdir()
    log = tmp_path / "team.log"
    (work / ".husky" / "pre-push").write_text(f'echo team "$@" >> "{log}"\n')
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "husky")
    git(work, "push", "-q", "origin", "main")
    shutil.copytree(modules, work / "node_modules", symlinks=True)
    return work, remote, log


def npm_install(work: Path) -> None:
    """What re-runs husky in a team: `npm install` runs the `prepare` script."""
    run(work, "npm", "install", "--offline", "--no-audit", "--no-fund")


def add_team_line(work: Path) -> None:
    team = work / ".husky" / "pre-push"
    team.write_text(f"{TEAM_LINE}\n{team.read_text()}")
    git(work, "commit", "-q", "-am", "the okstra gate in the team's pre-push")


def test_husky_first_then_okstra(tmp_path: Path, husky_modules: Path):
    work, remote, log = husky_clone(tmp_path, husky_modules)
    npm_install(work)
    assert git(work, "config", "core.hooksPath") == ".husky/_"
    before = snapshot(work)
    proc = okstra(work, "hooks", "install")
    assert proc.returncode == 1 and TEAM_LINE in proc.stderr and ".husky/pre-push" in proc.stderr
    assert snapshot(work) == before and git(work, "status", "--porcelain") == ""
    assert status(work)["manager"] == "husky" and not status(work)["runs"]

    add_team_line(work)
    before = snapshot(work)
    assert "unchanged" in install(work)
    npm_install(work)  # husky rewrites .husky/_: the gate is in the team's file, so it stays
    assert status(work)["runs"]
    gated(work, remote, log, team_counter(log))
    assert okstra(work, "hooks", "install").returncode == 0
    proc = okstra(work, "hooks", "uninstall")
    assert proc.returncode == 0 and ".husky/pre-push" in proc.stdout  # the team's line stays
    assert snapshot(work) == before

    # A linked worktree where husky never ran has no hooks at all: status says so.
    linked = tmp_path / "linked"
    git(work, "worktree", "add", "-q", "-b", "side", str(linked))
    mine = [w for w in status(work)["worktrees"] if w["path"] == str(linked)]
    assert mine and not mine[0]["runs"] and ".husky/_" in mine[0]["why"]


def test_okstra_first_then_husky(tmp_path: Path, husky_modules: Path):
    work, remote, log = husky_clone(tmp_path, husky_modules)
    before = snapshot(work)
    out = install(work)
    assert "package.json uses husky" in out and TEAM_LINE in out  # warned ahead of husky
    add_team_line(work)
    npm_install(work)  # husky repoints core.hooksPath; okstra's .git/hooks file stops running
    assert status(work)["manager"] == "husky" and status(work)["runs"]
    gated(work, remote, log, team_counter(log))
    npm_install(work)
    commit(work, "more")
    assert push(work, "origin", "main").returncode != 0
    assert okstra(work, "hooks", "uninstall").returncode == 0
    assert not (work / ".git" / "hooks" / "pre-push").exists()
    git(work, "config", "--unset", "core.hooksPath")
    shutil.rmtree(work / ".husky" / "_")
    after = snapshot(work)
    after.pop(".husky/pre-push")
    expected = dict(before)
    expected.pop(".husky/pre-push")
    assert after == expected


# -- lefthook -----------------------------------------------------------------------------------


def test_lefthook_gets_a_script_and_gates_a_push_lefthook_would_skip(tmp_path: Path):
    if shutil.which("lefthook") is None:
        pytest.skip("lefthook is not installed (the PyPI package `lefthook` ships it)")
    work, remote = pair(tmp_path)
    log = tmp_path / "team.log"
    (work / "lefthook.yml").write_text(
        f"pre-push:\n  commands:\n    team:\n      run: echo team >> {log}\n"
    )
    git(work, "add", "lefthook.yml")
    git(work, "commit", "-q", "-m", "lefthook")
    git(work, "push", "-q", "origin", "main")
    run(work, "lefthook", "install")
    before = snapshot(work)
    proc = okstra(work, "hooks", "install")
    assert proc.returncode == 1 and "use_stdin: true" in proc.stderr
    assert snapshot(work) == before

    config = (work / "lefthook.yml").read_text().replace("pre-push:\n", LEFTHOOK_CONFIG, 1)
    (work / "lefthook.yml").write_text(config)
    script = work / ".lefthook" / "pre-push" / "okstra-gate"
    script.parent.mkdir(parents=True)
    script.write_text(LEFTHOOK_SCRIPT_TEXT)
    script.chmod(0o755)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "okstra gate as a lefthook script")
    git(work, "push", "-q", "--no-verify", "origin", "main")
    assert "unchanged" in install(work) and status(work)["runs"]
    # HEAD has no diff against @{push}: lefthook skips its commands, never its scripts.
    git(work, "branch", "feature")
    git(work, "checkout", "-q", "feature")
    unverified = commit(work, "unverified")
    git(work, "checkout", "-q", "main")
    proc = push(work, "origin", "feature:main")
    assert (
        proc.returncode != 0 and "refusing to update refs/heads/main" in proc.stdout + proc.stderr
    )
    add_verdict(work, rev="feature")
    proc = push(work, "origin", "feature:main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert remote_ref(remote, "main") == unverified
    # Nothing to send: git runs pre-push with no line on stdin. okstra's script is the one
    # pre-push job given stdin, so that empty stdin is git's own, not one lefthook withheld.
    proc = push(work, "origin", "feature:main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Everything up-to-date" in proc.stderr
    assert "okstra pre-push: nothing to push, so nothing to check" in proc.stdout + proc.stderr
    # Another job taking stdin: an empty stdin could be one lefthook withheld, so it refuses.
    config = (work / "lefthook.yml").read_text()
    (work / "lefthook.yml").write_text(
        config.replace(
            "  commands:\n", "  commands:\n    reader:\n      run: cat\n      use_stdin: true\n", 1
        )
    )
    proc = push(work, "origin", "feature:main")
    assert proc.returncode != 0 and "use_stdin: true" in proc.stdout + proc.stderr


# -- git-lfs ------------------------------------------------------------------------------------


def test_git_lfs_pre_push_is_chained_and_uploads(tmp_path: Path):
    if subprocess.run(["git", "lfs", "version"], capture_output=True).returncode != 0:
        pytest.skip("git-lfs is not installed")
    work, remote = pair(tmp_path)
    run(work, "git", "lfs", "install", "--local")
    lfs_hook = (work / ".git" / "hooks" / "pre-push").read_bytes()
    run(work, "git", "lfs", "track", "*.bin")
    (work / "blob.bin").write_bytes(os.urandom(2048))
    git(work, "add", ".gitattributes", "blob.bin")
    git(work, "commit", "-q", "-m", "an LFS file")
    before = snapshot(work)
    out = install(work)
    assert "chained" in out and status(work)["manager"] == "git-lfs"
    assert (work / ".git" / "hooks" / "pre-push.okstra-chained").read_bytes() == lfs_hook
    assert push(work, "origin", "main").returncode != 0  # git-lfs ran first (and uploaded)
    add_verdict(work)
    proc = push(work, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert len(list((remote / "lfs" / "objects").rglob("*"))) >= 1  # git-lfs uploaded the blob
    # git-lfs re-installs its hooks from a checkout; ours stays (it never overwrites a foreign one)
    git(work, "checkout", "-q", "-b", "again")
    assert MARKER in (work / ".git" / "hooks" / "pre-push").read_text()
    assert okstra(work, "hooks", "uninstall").returncode == 0
    assert snapshot(work) == before


def test_okstra_first_then_git_lfs_says_how_to_chain_it(tmp_path: Path):
    """git-lfs will not install over okstra's pre-push ("Hook already exists"): install says
    so and gives the order that chains it; following it, objects upload through the gate."""
    if subprocess.run(["git", "lfs", "version"], capture_output=True).returncode != 0:
        pytest.skip("git-lfs is not installed")
    work, remote = pair(tmp_path)
    install(work)
    lfs = subprocess.run(["git", "lfs", "install", "--local"], cwd=work, capture_output=True)
    assert b"Hook already exists: pre-push" in lfs.stdout + lfs.stderr
    out = install(work)
    assert "LFS objects are not uploaded" in out and "okstra's hook was there first" in out
    proc = okstra(work, "hooks", "status")  # the gate runs, but LFS would stop uploading
    assert proc.returncode == 1 and "LFS objects are not uploaded" in proc.stderr
    assert status(work)["runs"]
    printed = out.split("Run: ", 1)[1].splitlines()[0]
    assert printed == "git okstra hooks uninstall && git lfs install && git okstra hooks install"
    run(work, "sh", "-c", printed)  # as the user would
    assert "git-lfs" in status(work)["manager"] and status(work)["runs"]
    assert "not uploaded" not in install(work) and status(work)["lfs"] is None
    run(work, "git", "lfs", "track", "*.bin")
    (work / "blob.bin").write_bytes(os.urandom(1024))
    git(work, "add", ".gitattributes", "blob.bin")
    git(work, "commit", "-q", "-m", "an LFS file")
    add_verdict(work)
    proc = push(work, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert len(list((remote / "lfs" / "objects").rglob("*"))) >= 1


def test_git_lfs_configured_for_every_repository_is_not_a_warning(tmp_path: Path):
    """Debian's git-lfs package (and `git lfs install`) set filter.lfs.* for every repository;
    only a repository that uses LFS needs LFS's pre-push in the chain."""
    work, _ = pair(tmp_path)
    git(work, "config", "--global", "filter.lfs.process", "git-lfs filter-process")
    git(work, "config", "--global", "filter.lfs.required", "true")
    assert "git-lfs" not in install(work)
    assert status(work)["lfs"] is None
    (work / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    assert "LFS objects are not uploaded" in install(work)  # now this repository uses it
    assert "LFS objects are not uploaded" in status(work)["lfs"]


# -- a later change switches the gate off: status says so, exit 1 ----------------------------


def test_status_fails_when_a_hook_written_later_replaced_the_gate(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    assert status(work)["runs"]
    hook = work / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\nexit 0\n")  # another tool overwrote it
    proc = okstra(work, "hooks", "status")
    assert proc.returncode == 1
    assert "does NOT run the gate" in proc.stdout
    assert f"{hook} is a hook that does not run the gate" in proc.stderr
    assert "git okstra hooks install" in proc.stderr
    assert not status(work)["runs"]


def test_status_fails_when_core_hooks_path_is_set_after_okstra(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    git(work, "config", "core.hooksPath", str(tmp_path / "elsewhere"))
    assert not status(work)["runs"]
    git(work, "config", "--global", "core.hooksPath", str(tmp_path / "shared"))
    git(work, "config", "--unset", "core.hooksPath")
    found = status(work)
    assert not found["runs"] and "global" in found["manager"]


def test_status_fails_after_husky_init_repoints_the_hooks(tmp_path: Path, husky_modules: Path):
    work, _ = pair(tmp_path)
    install(work)
    (work / "package.json").write_text(json.dumps({"name": "t", "private": True}))
    shutil.copytree(husky_modules, work / "node_modules", symlinks=True)
    run(work, str(work / "node_modules" / ".bin" / "husky"), "init")
    assert git(work, "config", "core.hooksPath") == ".husky/_"
    found = status(work)
    assert found["manager"] == "husky" and not found["runs"]
    assert any(".husky/pre-push" in p for p in found["problems"])
