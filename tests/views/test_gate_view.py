"""What the pre-push hook and ``hooks status`` say about the gate, word for word: the hook's
notes and stops (services/gatecheck.py hands which situation, views/gate.py words it) and why a
push from a worktree runs the gate or not (services/hooks.py's Runs, worded by views/hooks.py;
issue 19). Run as git runs the hook's command line, on real repositories and hook files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import git, make_repo, okstra
from hooks_world import install

from okstra_git.logic.hooklayout import (
    LEFTHOOK_CONFIG,
    LEFTHOOK_SCRIPT_TEXT,
    MARKER,
    TEAM_LINE,
)
from okstra_git.services.hooks import hook_status
from okstra_git.views.hooks import status

HOOK = ("hooks", "run", "pre-push")
NO_REF = (
    "no pushed ref on stdin, so nothing could be checked; the push is stopped. Under "
    "lefthook, okstra's script needs `use_stdin: true` and must be the only pre-push job "
    "with it (lefthook hands stdin to one job); then a push with nothing to send passes too."
)
PRE_COMMIT_STOP = (
    "pre-commit hands this hook one ref of a push at most, so a multi-ref push, a deletion "
    "and a protected ref made of commits the remote has would pass unchecked; the push is "
    "stopped until okstra's full gate is installed in this clone (it goes in as "
    "pre-push.legacy, which pre-commit runs first with every ref): git okstra hooks install"
)


def hooks_dir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path", "hooks"))


def without_pre_commit(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT_")}
    return {**env, **more}


def test_an_empty_stdin_under_lefthook(repo: Path):
    """--require-refs (okstra's lefthook script): git's own empty stdin passes when the
    lefthook config gives stdin to okstra's script alone; otherwise the push is stopped."""
    proc = okstra(repo, *HOOK, "--require-refs", "origin", "url", input="")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"okstra pre-push: {NO_REF}\n"
    (repo / "lefthook.yml").write_text(LEFTHOOK_CONFIG)
    proc = okstra(repo, *HOOK, "--require-refs", "origin", "url", input="")
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == "okstra pre-push: nothing to push, so nothing to check\n"


def test_the_pre_commit_stage_words(repo: Path):
    """pre-commit's okstra-gate hook: not from a push, one unprotected ref, a protected ref
    without a verdict, and with okstra's full gate installed."""
    hook = hooks_dir(repo) / "pre-push"
    stop = f"okstra pre-push: {PRE_COMMIT_STOP} (there is no {hook})\n"
    proc = okstra(repo, *HOOK, "--from-env", env=without_pre_commit())
    assert proc.returncode == 1
    assert proc.stderr == (
        "okstra pre-push: no PRE_COMMIT_TO_REF (not run from a push); nothing to check\n" + stop
    )
    head = git(repo, "rev-parse", "HEAD")
    env = without_pre_commit(PRE_COMMIT_TO_REF=head, PRE_COMMIT_REMOTE_BRANCH="refs/heads/topic")
    proc = okstra(repo, *HOOK, "--from-env", env=env)
    assert (proc.returncode, proc.stderr) == (1, stop)
    env["PRE_COMMIT_REMOTE_BRANCH"] = "refs/heads/main"
    proc = okstra(repo, *HOOK, "--from-env", env=env)
    assert proc.returncode == 1
    assert proc.stderr.startswith("okstra pre-push: refusing to update refs/heads/main")
    assert proc.stderr.endswith(
        "okstra pre-push: push refused: 1 of 1 ref update(s) failed the verification gate; "
        "nothing was pushed.\n" + stop
    )
    install(repo)
    proc = okstra(repo, *HOOK, "--from-env", env=env)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == (
        f"okstra pre-push: every ref of this push was checked: git runs {hook}, which runs the "
        "gate\n"
    )


def write(path: Path, text: str, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


PRE_COMMIT_SCRIPT = "#!/usr/bin/env bash\n# ID: 138fd403232d2ddd5efb44317e38bf03\nexit 0\n"
OKSTRA_SCRIPT = f"#!/bin/sh\n# {MARKER}\nexit 0\n"


def why(repo: Path) -> str:
    """What ``hooks status`` says of a push from ``repo`` (its --json ``why``, and the text's
    line)."""
    shown = status(hook_status(repo))
    line = next(ln for ln in shown.render_text().splitlines() if ln.startswith("a push from"))
    assert line.endswith(f"the gate: {shown.data['why']}")
    return shown.data["why"]


@pytest.mark.parametrize(
    "case",
    [
        "none",
        "not-executable",
        "okstra",
        "pre-commit-legacy",
        "pre-commit",
        "husky-gate",
        "husky",
        "lefthook-gate",
        "lefthook",
        "git-lfs",
        "foreign",
    ],
)
def test_why_a_push_runs_the_gate_or_not(repo: Path, case: str):
    hooks = hooks_dir(repo)
    hook = hooks / "pre-push"
    words = {
        "none": f"there is no {hook}",
        "not-executable": f"{hook} is not executable, so git skips it",
        "okstra": f"git runs {hook}, which runs the gate",
        "pre-commit-legacy": f"pre-commit's {hook} runs pre-push.legacy first, the gate",
        "pre-commit": f"pre-commit owns {hook} and no okstra gate is in pre-push.legacy "
        "(pre-commit's own pre-push hooks see one ref of a push at most)",
        "git-lfs": f"{hook} is git-lfs's hook that does not run the gate",
        "foreign": f"{hook} is a hook that does not run the gate",
        "lefthook": f"lefthook owns {hook}, and no pre-push script okstra-gate that runs the "
        "gate is declared with use_stdin: true",
    }
    if case == "not-executable":
        write(hook, OKSTRA_SCRIPT, 0o644)
    elif case == "okstra":
        write(hook, OKSTRA_SCRIPT)
    elif case.startswith("pre-commit"):
        write(hook, PRE_COMMIT_SCRIPT)
        if case == "pre-commit-legacy":
            write(hooks / "pre-push.legacy", OKSTRA_SCRIPT)
    elif case.startswith("husky"):
        stubs = repo / ".husky" / "_"
        write(stubs / "h", "#!/bin/sh\n")
        hook = write(stubs / "pre-push", '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
        team = write(repo / ".husky" / "pre-push", f"{TEAM_LINE}\n" if case == "husky-gate" else "")
        git(repo, "config", "core.hooksPath", ".husky/_")
        words["husky-gate"] = f"husky's {hook} runs {team}, which runs the gate"
        words["husky"] = f"husky runs {team}, which does not run the gate"
    elif case.startswith("lefthook"):
        write(hook, "#!/bin/sh\n# LEFTHOOK\n")
        if case == "lefthook-gate":
            (repo / "lefthook.yml").write_text(LEFTHOOK_CONFIG)
            script = write(repo / ".lefthook" / "pre-push" / "okstra-gate", LEFTHOOK_SCRIPT_TEXT)
            words[case] = f"lefthook runs {script} from lefthook.yml"
    elif case == "git-lfs":
        write(hook, '#!/bin/sh\ngit lfs pre-push "$@"\n')
    elif case == "foreign":
        write(hook, "#!/bin/sh\nexit 0\n")
    assert why(repo) == words[case]


def test_why_in_a_bare_repository_under_lefthook(tmp_path: Path):
    bare = tmp_path / "bare.git"
    git(make_repo(tmp_path / "seed"), "clone", "-q", "--bare", ".", str(bare))
    write(bare / "hooks" / "pre-push", "#!/bin/sh\n# LEFTHOOK\n")
    assert why(bare) == "lefthook runs in a work tree; this repository is bare"
