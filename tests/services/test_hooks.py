"""The pre-push hook through real `git push` to a local bare remote (docs/hooks.md)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import KEY, add_verdict, commit, install, pair, push, remote_ref, snapshot
from reports_data import verdict_report
from verify_world import World, make_world

import okstra_git
from okstra_git.core.errors import BadInput
from okstra_git.core.resources import installed_executable
from okstra_git.git.repo import GitRepo
from okstra_git.logic.hooklayout import MARKER, TEAM_LINE
from okstra_git.records.verdict import VERDICTS_REF
from okstra_git.services import gatecheck as gate_cli
from okstra_git.services import hooks as hookinstall
from okstra_git.views import Output
from okstra_git.views.gate import hook_ran


def test_push_refused_before_the_verdict_and_accepted_after_verify_record(tmp_path: Path):
    # The real lifecycle: stages done and merged in the task worktree, then `verify record`.
    work, remote = pair(tmp_path)
    world = make_world(work, stages=2)
    world.do_stage(1)
    world.do_stage(2)
    head = world.merge(1, 2)
    install(work)
    git(work, "merge", "-q", "--ff-only", head)

    refused = push(work, "origin", "main")
    assert refused.returncode != 0
    err = refused.stderr
    assert f"refusing to update refs/heads/main to {head[:12]}" in err
    assert "needs an accepted whole-task verdict" in err
    # No verdict names the task: its task branch at the pushed commit does, and the fix runs
    # in its worktree from any folder: the task's next step, which names the run's report.
    status = f"`git -C {world.task_wt} okstra task status {KEY}`"
    assert f"in the task worktree {world.task_wt} (its HEAD is {head[:12]})" in err
    assert f"run {status}, then the next command it prints" in err
    assert "REPORT.json" not in err and " KEY" not in err
    assert remote_ref(remote, "main") != head
    argv = shlex.split(status.strip("`"))  # what the fix says to run, as git runs it
    assert argv[:2] == ["git", "-C"] and argv[3] == "okstra"
    shown = okstra(Path(argv[2]), *argv[4:])
    assert shown.returncode == 0, shown.stderr
    assert f"git -C {work} okstra run start {KEY} --type final-verification" in shown.stdout

    report = verdict_report(world.ctx, world.key, tmp_path / "data.json")
    recorded = okstra(
        work, "verify", "record", KEY, "--verdict", "accepted", "--report", str(report)
    )
    assert recorded.returncode == 0, recorded.stderr

    accepted = push(work, "origin", "main")
    assert accepted.returncode == 0, accepted.stderr
    assert "gate open" in accepted.stderr and KEY in accepted.stderr
    assert remote_ref(remote, "main") == head


def _fix_line(said: str) -> str:
    """The refusal's ``Fix:`` line (a hook's or ci check's)."""
    return next(line for line in said.splitlines() if "Fix: " in line)


def _verified_world(tmp_path: Path) -> tuple[Path, Path, World, str]:
    """A clone (hook installed) whose task's stages are done and merged in its task worktree,
    and main there at the task's HEAD: what the last step pushes. No verdict yet."""
    work, remote = pair(tmp_path)
    world = make_world(work, stages=1)
    world.do_stage(1)
    head = world.merge(1)
    install(work)
    git(work, "merge", "-q", "--ff-only", head)
    return work, remote, world, head


def test_with_no_verdict_the_refusal_names_the_task_of_its_branch_on_every_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # No verdict on the commit names the task: the task branch pointing at it does (its key
    # read from the task's record), and the worktree it is checked out in. Pushed from the
    # main worktree, the fix runs from anywhere: `git -C <task worktree> okstra …`.
    work, remote, world, head = _verified_world(tmp_path)
    status = f"`git -C {world.task_wt} okstra task status {KEY}`"
    refused = push(work, "origin", "main")
    assert refused.returncode != 0 and remote_ref(remote, "main") != head
    fix = _fix_line(refused.stderr)
    assert f"in the task worktree {world.task_wt} (its HEAD is {head[:12]}): run {status}" in fix
    assert "KEY" not in fix and "REPORT.json" not in fix

    # ci check here says the same fix, after fetching (this clone never fetched notes).
    checked = okstra(work, "ci", "check")
    assert checked.returncode == 1
    assert f"If no verdict was recorded yet: verify it in the task worktree {world.task_wt}" in (
        _fix_line(checked.stdout)
    )
    assert status in checked.stdout

    # A verdict that names the task (one that does not open the gate) finds the same worktree.
    add_verdict(work, verdict="blocked", stages=(1,))
    fix = _fix_line(push(work, "origin", "main").stderr)
    assert f"in the task worktree {world.task_wt} (its HEAD is {head[:12]}): run {status}" in fix

    # Server side: the task and its branch as `sync` and `integrate` publish them; the
    # server names the task, and no folder (its worktrees are not the pusher's).
    monkeypatch.setenv("OKSTRA_EXE", installed_executable() or "git-okstra")
    # The server's okstra is this package (not whichever one the executable was installed from).
    monkeypatch.setenv("PYTHONPATH", str(Path(okstra_git.__file__).resolve().parent.parent))
    assert okstra(remote, "hooks", "install", "--server", str(remote)).returncode == 0
    task_ref = "refs/okstra/tasks/grp/feat"
    branch = f"refs/heads/{world.branch('task')}:refs/okstra/branches/grp/feat/task"
    published = push(work, "--no-verify", "origin", task_ref, branch)
    assert published.returncode == 0, published.stderr
    refused = push(work, "--no-verify", "origin", "main")
    assert refused.returncode != 0 and remote_ref(remote, "main") != head
    fix = _fix_line(refused.stderr)
    assert "remote: okstra pre-receive: Fix: verify it in the task worktree whose HEAD is " in fix
    assert f"run `git okstra task status {KEY}`, then the next" in fix and str(tmp_path) not in fix


def test_a_commit_of_no_task_gets_the_general_fix(tmp_path: Path):
    # A task branch exists, at another commit: the refused commit is of no task, so the fix
    # names none (KEY, and how to find it) and no worktree.
    work, _remote, world, _head = _verified_world(tmp_path)
    other = commit(work, "not the task's")
    refused = push(work, "origin", "main")
    assert refused.returncode != 0
    fix = _fix_line(refused.stderr)
    general = f"in the task worktree whose HEAD is {other[:12]}: run `git okstra task status KEY`"
    assert general in fix
    assert "(KEY: the task's key, as `git okstra task list` lists them)" in fix
    assert KEY not in fix and str(world.task_wt) not in fix and "-C" not in fix

    # Two tasks' branches at the commit: which one is not for the refusal to guess.
    git(work, "update-ref", f"refs/heads/{world.branch('task')}", other)
    git(work, "update-ref", "refs/heads/okstra/grp/other/task", other)
    _record(work, "refs/okstra/tasks/grp/other", "proj:grp:other")
    fix = _fix_line(push(work, "origin", "main").stderr)
    assert "`git okstra task status KEY`" in fix and "proj:grp:" not in fix
    git(work, "update-ref", "-d", "refs/heads/okstra/grp/other/task")
    fix = _fix_line(push(work, "origin", "main").stderr)
    assert f"`git -C {world.task_wt} okstra task status {KEY}`" in fix  # the one left


def _record(repo: Path, ref: str, key: str) -> None:
    """A task record at ``ref`` whose task.json names ``key`` (as a fetched, hostile one
    might: nothing checks it on the way in here)."""
    text = json.dumps({"schemaVersion": 1, "taskKey": key})
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=text, text=True,
        capture_output=True, check=True,
    ).stdout.strip()  # fmt: skip
    tree = subprocess.run(
        ["git", "mktree"], cwd=repo, input=f"100644 blob {blob}\ttask.json\n", text=True,
        capture_output=True, check=True,
    ).stdout.strip()  # fmt: skip
    made = git(repo, "commit-tree", tree, "-m", f"task new\n\nOkstra-Task: {key}")
    git(repo, "update-ref", ref, made)


@pytest.mark.parametrize(
    ("suffix", "key", "shown"),
    [
        # Each under the refs its key slugs to, so only the key's own check stops it.
        ("grp/feat-0-owned", "proj:grp:feat\x1b]0;owned\x07", False),  # control characters
        ("grp/feat-rm--rf", "proj:grp:feat\nrm -rf ~", False),  # a second line
        ("grp/feat-x", "proj:grp:feat\u2028x", False),  # a line separator
        ("grp/feat", "proj:other:thing", False),  # another task's key under this task's refs
        ("grp/feat", "proj:grp", False),  # not three parts
        ("grp/feat-touch-pwned", "proj:grp:feat';touch PWNED;'", True),  # shown, quoted
    ],
)
def test_a_key_read_from_a_task_record_is_untrusted(
    tmp_path: Path, suffix: str, key: str, shown: bool
):
    work, _remote = pair(tmp_path)
    install(work)
    head = commit(work, "feature")
    git(work, "update-ref", f"refs/heads/okstra/{suffix}/task", head)
    _record(work, f"refs/okstra/tasks/{suffix}", key)
    refused = push(work, "origin", "main")
    assert refused.returncode != 0
    fix = _fix_line(refused.stderr)
    if not shown:
        assert "`git okstra task status KEY`" in fix and "proj:" not in fix
        assert "\x1b" not in refused.stderr and "rm -rf" not in refused.stderr
        assert "\u2028" not in refused.stderr
        return
    said = fix.split("run `", 1)[1].split("`", 1)[0]
    assert said == shlex.join(["git", "okstra", "task", "status", key])
    assert shlex.split(said)[-1] == key  # one word, as typed
    assert not (work / "PWNED").exists()


def test_conditional_accept_and_single_stage_verdicts_do_not_open_the_gate(tmp_path: Path):
    work, remote = pair(tmp_path)
    install(work)
    head = commit(work, "feature")
    add_verdict(work, verdict="conditional-accept")
    add_verdict(work, scope="single-stage", stages=(2,))
    add_verdict(work, verdict="blocked")

    proc = push(work, "origin", "main")
    assert proc.returncode != 0
    assert "conditional-accept whole-task verdict for proj:grp:feat is conditional-accept" in (
        proc.stderr
    )
    assert "covers stage 2 only (single-stage)" in proc.stderr
    assert "is blocked, not accepted" in proc.stderr
    # A known task key is filled into the fix command.
    assert f"`git okstra task status {KEY}`" in proc.stderr
    assert remote_ref(remote, "main") != head

    add_verdict(work)
    assert push(work, "origin", "main").returncode == 0
    assert remote_ref(remote, "main") == head


def test_rebase_that_keeps_the_tree_keeps_the_gate_open_only_in_tree_mode(tmp_path: Path):
    work, remote = pair(tmp_path)
    install(work)
    verified = commit(work, "feature")
    add_verdict(work)
    # Same tree, new commit: reword it (as a rebase that changes nothing would).
    git(work, "commit", "-q", "--amend", "-m", "feature, reworded")
    rebased = git(work, "rev-parse", "HEAD")
    assert rebased != verified

    git(work, "config", "okstra.gate.match", "commit")
    proc = push(work, "origin", "main")
    assert proc.returncode != 0
    assert f"was recorded on {verified[:12]}, a commit with the identical tree" in proc.stderr
    assert "okstra.gate.match=commit demands this exact commit" in proc.stderr

    git(work, "config", "okstra.gate.match", "tree")
    proc = push(work, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert f"on {verified[:12]} (identical tree" in proc.stderr
    assert remote_ref(remote, "main") == rebased

    # A commit whose tree differs is not covered by that verdict.
    commit(work, "more work")
    assert push(work, "origin", "main").returncode != 0


def test_every_ref_of_one_push_is_checked_and_deletions_are_guarded(tmp_path: Path):
    work, remote = pair(tmp_path)
    install(work)
    verified = commit(work, "verified")
    add_verdict(work)
    git(work, "branch", "release/1.0")
    unverified = commit(work, "unverified")
    git(work, "branch", "feature")

    # main (verified) first, release/1.0 (verified too), a protected ref without a verdict
    # last: the last line must be checked, not only the first.
    proc = push(
        work,
        "origin",
        f"{verified}:refs/heads/main",
        "release/1.0",
        "feature",
        f"{unverified}:refs/heads/release/2.0",
    )
    assert proc.returncode != 0
    assert f"refusing to update refs/heads/release/2.0 to {unverified[:12]}" in proc.stderr
    assert "refs/heads/main" not in proc.stderr.split("refusing")[1]
    assert "1 of 4 ref update(s)" in proc.stderr
    for ref in ("main", "release/1.0", "feature", "release/2.0"):  # all or nothing
        assert remote_ref(remote, ref) in (None, git(work, "rev-parse", "origin/main"))

    proc = push(work, "origin", f"{verified}:refs/heads/main", "release/1.0", "feature")
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "main") == verified

    # okstra's own refs and notes pass untouched, even with every ref protected.
    git(work, "config", "--add", "okstra.protect", "refs/*")
    proc = push(work, "origin", VERDICTS_REF)
    assert proc.returncode == 0, proc.stderr

    proc = push(work, "origin", "--delete", "release/1.0")
    assert proc.returncode != 0
    assert "refusing to delete the protected ref refs/heads/release/1.0" in proc.stderr
    assert "okstra.allowDelete" in proc.stderr
    git(work, "config", "okstra.allowDelete", "true")
    assert push(work, "origin", "--delete", "release/1.0").returncode == 0
    assert remote_ref(remote, "release/1.0") is None


def test_custom_protect_globs(tmp_path: Path):
    work, remote = pair(tmp_path)
    install(work)
    head = commit(work, "x")
    git(work, "config", "okstra.protect", "refs/heads/prod")
    assert push(work, "origin", "main").returncode == 0  # main is no longer protected
    proc = push(work, "origin", "main:prod")
    assert proc.returncode != 0 and "refs/heads/prod" in proc.stderr
    assert remote_ref(remote, "main") == head


FOREIGN = """#!/bin/sh
# someone else's pre-push hook
echo "$@" > "{log}.args"
cat > "{log}.stdin"
exit {code}
"""


def test_foreign_hook_is_chained_first_and_restored_byte_identical(tmp_path: Path):
    work, remote = pair(tmp_path)
    hooks = work / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    log = tmp_path / "foreign"
    original = FOREIGN.format(log=log, code=3).encode()
    (hooks / "pre-push").write_bytes(original)
    (hooks / "pre-push").chmod(0o750)

    out = install(work)
    assert "chained" in out
    chained = hooks / "pre-push.okstra-chained"
    assert chained.read_bytes() == original
    assert MARKER in (hooks / "pre-push").read_text()
    # Reinstalling is idempotent: the kept hook stays the foreign one, not our script.
    assert "unchanged" in install(work)
    assert chained.read_bytes() == original

    head = commit(work, "feature")
    add_verdict(work)
    proc = push(work, "origin", "main", "HEAD:refs/heads/topic")
    assert proc.returncode != 0, "the failing foreign hook must fail the push"
    assert "chained hook" in proc.stderr and "exit 3" in proc.stderr
    assert remote_ref(remote, "main") != head
    # It ran with git's arguments and the full stdin (both lines).
    assert (tmp_path / "foreign.args").read_text().split()[0] == "origin"
    stdin_lines = (tmp_path / "foreign.stdin").read_text().splitlines()
    assert [line.split()[2] for line in stdin_lines] == ["refs/heads/main", "refs/heads/topic"]

    # A passing foreign hook lets okstra decide, on the same stdin.
    chained.write_bytes(FOREIGN.format(log=log, code=0).encode())
    proc = push(work, "origin", "main", "HEAD:refs/heads/topic")
    assert proc.returncode == 0, proc.stderr
    assert remote_ref(remote, "main") == head
    chained.write_bytes(original)

    proc = okstra(work, "hooks", "uninstall")
    assert proc.returncode == 0, proc.stderr
    restored = hooks / "pre-push"
    assert restored.read_bytes() == original
    assert stat.S_IMODE(restored.stat().st_mode) == 0o750
    assert not chained.exists()
    # Uninstall leaves a foreign hook alone (and does not refuse: there is nothing of ours).
    proc = okstra(work, "hooks", "uninstall")
    assert proc.returncode == 0 and proc.stdout.startswith("not installed"), proc.stderr
    assert restored.read_bytes() == original


def test_uninstall_keeps_an_okstra_hook_the_user_added_lines_to(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    hook = work / ".git" / "hooks" / "pre-push"
    mine = hook.read_bytes().replace(b"\nchained=", b'\necho "my own check"\nchained=', 1)
    hook.write_bytes(mine)
    proc = okstra(work, "hooks", "uninstall")
    assert proc.returncode == 0, proc.stderr
    kept = hook.with_name("pre-push.okstra-modified")
    assert kept.read_bytes() == mine and not hook.exists()
    assert str(kept) in proc.stdout and "changes" in proc.stdout
    # A second one is never overwritten; an unmodified script is simply removed.
    install(work)
    hook.write_bytes(mine + b"# more\n")
    assert okstra(work, "hooks", "uninstall").returncode == 0
    assert kept.read_bytes() == mine
    (again,) = [p for p in hook.parent.iterdir() if p.name.startswith(kept.name + ".")]
    assert again.read_bytes() == mine + b"# more\n"
    install(work)
    out = okstra(work, "hooks", "uninstall").stdout
    assert not hook.exists() and "modified" not in out
    assert len([p for p in hook.parent.iterdir() if "okstra-modified" in p.name]) == 2


def test_reinstalling_keeps_an_okstra_hook_the_user_added_lines_to(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    hook = work / ".git" / "hooks" / "pre-push"
    fresh = hook.read_bytes()
    mine = fresh.replace(b"\nchained=", b'\necho "my own check"\nchained=', 1)
    hook.write_bytes(mine)
    proc = okstra(work, "hooks", "install")
    assert proc.returncode == 0, proc.stderr
    kept = hook.with_name("pre-push.okstra-modified")
    assert kept.read_bytes() == mine and hook.read_bytes() == fresh
    assert kept.name in proc.stdout and "changes" in proc.stdout
    # The script as okstra wrote it (another installation's paths at most) is simply rewritten.
    proc = okstra(work, "hooks", "install")
    assert proc.returncode == 0 and proc.stdout.startswith("unchanged"), proc.stdout
    assert [p.name for p in hook.parent.iterdir() if "okstra-modified" in p.name] == [kept.name]


def test_install_refuses_to_choose_between_two_foreign_hooks_unless_forced(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    hooks = work / ".git" / "hooks"
    (hooks / "pre-push.okstra-chained").write_text("#!/bin/sh\nexit 0\n")
    (hooks / "pre-push").write_text("#!/bin/sh\n# another manager\nexit 0\n")
    proc = okstra(work, "hooks", "install")
    assert proc.returncode == 1 and "will not choose" in proc.stderr
    assert "another manager" in (hooks / "pre-push").read_text()
    install(work, "--force")
    assert "another manager" in (hooks / "pre-push.okstra-chained").read_text()
    kept = [p.name for p in hooks.iterdir() if p.name.startswith("pre-push.okstra-chained.")]
    assert len(kept) == 1  # the older kept hook was renamed, never deleted


def test_linked_worktree_shares_the_hook_of_the_common_dir(tmp_path: Path):
    work, remote = pair(tmp_path)
    linked = tmp_path / "linked"
    git(work, "worktree", "add", "-q", "-b", "side", str(linked))
    install(linked)
    assert (work / ".git" / "hooks" / "pre-push").is_file()
    assert not (work / ".git" / "worktrees" / "linked" / "hooks").exists()
    head = commit(linked, "from the linked worktree")
    proc = push(linked, "origin", "side:main")
    assert proc.returncode != 0 and "refs/heads/main" in proc.stderr
    add_verdict(linked)  # recorded from the linked worktree, into the shared notes
    assert push(linked, "origin", "side:main").returncode == 0
    assert remote_ref(remote, "main") == head
    status = json.loads(okstra(linked, "hooks", "status", "--json").stdout)
    assert status["runs"] and status["manager"] == "none"
    assert [w["runs"] for w in status["worktrees"]] == [True, True]


def test_a_hooks_path_in_the_work_tree_gets_the_team_line_not_a_file(tmp_path: Path):
    """A tracked, relative core.hooksPath resolves in each worktree: okstra writes nothing there
    (no untracked file) and prints the one line; once committed, every worktree is gated."""
    work, remote = pair(tmp_path)
    team = work / ".githooks" / "pre-push"
    team.parent.mkdir()
    log = tmp_path / "team"
    team.write_text(FOREIGN.format(log=log, code=0))
    team.chmod(0o755)
    git(work, "add", ".githooks")
    git(work, "commit", "-q", "-m", "team hooks")
    git(work, "config", "core.hooksPath", ".githooks")
    before = snapshot(work)

    proc = okstra(work, "hooks", "install")
    assert proc.returncode == 1 and TEAM_LINE in proc.stderr, proc.stderr
    # The file is named, absolute: core.hooksPath is relative to the top, not to the user.
    assert f"add this line as the first command of {team} and commit it" in proc.stderr
    assert snapshot(work) == before and git(work, "status", "--porcelain") == ""
    status = json.loads(okstra(work, "hooks", "status", "--json").stdout)
    assert status["runs"] is False and status["manager"] == "core.hooksPath in the work tree"

    team.write_text(f"#!/bin/sh\n{TEAM_LINE}\n" + team.read_text().split("\n", 1)[1])
    git(work, "commit", "-q", "-am", "run the okstra gate")
    linked = tmp_path / "linked"
    git(work, "worktree", "add", "-q", "-b", "side", str(linked))
    assert "unchanged" in install(work)
    head = commit(linked, "from the linked worktree")
    proc = push(linked, "origin", "side:main")
    assert proc.returncode != 0 and "refusing to update refs/heads/main" in proc.stderr
    assert not (tmp_path / "team.args").exists()  # the gate goes first and stopped it
    add_verdict(linked)
    assert push(linked, "origin", "side:main").returncode == 0
    assert remote_ref(remote, "main") == head
    assert (tmp_path / "team.args").read_text().split()[0] == "origin"  # the team's hook ran
    status = json.loads(okstra(linked, "hooks", "status", "--json").stdout)
    assert status["runs"] and [w["runs"] for w in status["worktrees"]] == [True, True]
    assert git(work, "status", "--porcelain") == git(linked, "status", "--porcelain") == ""


def test_hook_falls_back_to_git_okstra_on_path_and_fails_closed_without_it(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    hook = work / ".git" / "hooks" / "pre-push"
    text = hook.read_text()
    hook.write_text(
        "\n".join(
            "OKSTRA_EXE='/nonexistent/git-okstra'" if line.startswith("OKSTRA_EXE=") else line
            for line in text.splitlines()
        )
        + "\n"
    )
    commit(work, "x")
    exe = Path(installed_executable() or "")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git-okstra").symlink_to(exe)
    git_dir = Path(os.popen("command -v git").read().strip()).parent
    on_path = push(work, "origin", "main", env={"PATH": f"{bin_dir}:{git_dir}"})
    assert on_path.returncode != 0 and "refusing to update refs/heads/main" in on_path.stderr
    missing = push(work, "origin", "HEAD:refs/heads/topic", env={"PATH": str(git_dir)})
    assert missing.returncode != 0 and "git-okstra is not installed" in missing.stderr


@pytest.mark.parametrize(("chained", "left"), [(False, "shim"), (True, "shim"), (False, "exe")])
def test_a_hook_left_by_an_uninstalled_okstra_says_exactly_what_to_do(
    tmp_path: Path, chained: bool, left: str
):
    """`pip uninstall okstra-git` removes the recorded executable; a version manager's shim
    may still answer to `git-okstra` (exit 127), or the executable stays while its Python
    cannot load okstra_git. The hook stops the push and prints both ways out: reinstall, or
    the one command that removes the gate (putting back what it chained)."""
    work, _ = pair(tmp_path)
    hooks = work / ".git" / "hooks"
    theirs = b"#!/bin/sh\necho theirs ran >&2\n"
    if chained:
        hooks.mkdir(exist_ok=True)
        (hooks / "pre-push").write_bytes(theirs)
        (hooks / "pre-push").chmod(0o755)
    install(work)
    hook = hooks / "pre-push"
    lines = hook.read_text().splitlines()
    python = tmp_path / "python-without-okstra"  # what ENTRY says and does then
    python.write_text(
        '#!/bin/sh\necho "okstra pre-push: okstra-git cannot be loaded (No module named '
        "'okstra_git')\" >&2\nexit 127\n"
    )
    python.chmod(0o755)
    swap = {"OKSTRA_EXE=": "OKSTRA_EXE='/nonexistent/git-okstra'"}
    if left == "exe":
        swap = {"OKSTRA_PYTHON=": f"OKSTRA_PYTHON='{python}'"}
    gone = [next((new for old, new in swap.items() if ln.startswith(old)), ln) for ln in lines]
    hook.write_text("\n".join(gone) + "\n")
    bin_dir = tmp_path / "shims"
    bin_dir.mkdir()
    shim = bin_dir / "git-okstra"
    shim.write_text("#!/bin/sh\necho 'pyenv: git-okstra: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    git_dir = Path(os.popen("command -v git").read().strip()).parent
    env = {"PATH": f"{bin_dir}:{git_dir}:/usr/bin:/bin"}
    proc = push(work, "origin", "HEAD:refs/heads/topic", env=env)
    assert proc.returncode != 0 and "the push is stopped" in proc.stderr
    assert left != "exe" or "cannot be loaded (No module named 'okstra_git')" in proc.stderr
    assert "install okstra-git again, then run: git okstra hooks install" in proc.stderr
    removal = proc.stderr.split("to remove the gate instead, run: ", 1)[1].splitlines()[0]
    sub = work / "sub"
    sub.mkdir()
    subprocess.run(["sh", "-c", removal], cwd=sub, check=True)  # as the user would, anywhere
    if chained:
        assert hook.read_bytes() == theirs and not (hooks / "pre-push.okstra-chained").exists()
    else:
        assert not hook.exists()
    proc = push(work, "origin", "HEAD:refs/heads/topic", env=env)
    assert proc.returncode == 0, proc.stderr


def test_the_hook_runs_the_recorded_python_and_nothing_in_the_pushed_repository(
    tmp_path: Path,
):
    """The hook starts the Python the installed git-okstra runs on (no console-script imports
    on every push); a folder named okstra_git in the work tree, where git runs hooks, is never
    imported in okstra's place."""
    work, _ = pair(tmp_path)
    install(work)
    script = (work / ".git" / "hooks" / "pre-push").read_text()
    python = hookinstall._interpreter(installed_executable() or "")
    assert python and f"OKSTRA_PYTHON={python}" in script
    fake = work / "okstra_git"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise SystemExit(0)  # would let every push through\n")
    (fake / "entry.py").write_text("def main():\n    return 0\n")
    commit(work, "x")
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and "refusing to update refs/heads/main" in proc.stderr
    # okstra_git moved away from the recorded folder: found where the Python's site looks.
    hook = work / ".git" / "hooks" / "pre-push"
    lines = hook.read_text().splitlines()
    hook.write_text(
        "\n".join(
            "OKSTRA_PATH=/nonexistent" if ln.startswith("OKSTRA_PATH=") else ln for ln in lines
        )
        + "\n"
    )
    proc = push(work, "origin", "main", env={"PYTHONPATH": ""})
    assert proc.returncode != 0 and "refusing to update refs/heads/main" in proc.stderr


def test_pre_commit_stage_passes_only_with_the_full_gate_installed(repo: Path, monkeypatch):
    """pre-commit's okstra-gate hook sees one ref at most: without okstra's full gate it checks
    that one and refuses anyway; with it, every ref was already checked."""
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.chdir(repo)
    ran: list[Output] = []

    def pre_commit_hook() -> Output:  # what the hook decided, as its view says it
        ran.append(hook_ran(gate_cli.pre_push(from_env=True)))
        return ran[-1]

    def said() -> str:
        return ran[-1].err

    monkeypatch.setenv("PRE_COMMIT_TO_REF", head)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "0" * 40)
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main")
    assert pre_commit_hook().code == 1
    err = said()
    assert "refusing to update refs/heads/main" in err and "git okstra hooks install" in err
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/topic")
    assert pre_commit_hook().code == 1
    assert "refusing" not in (err := said()) and "hooks install" in err
    # A push carrying the root commit: pre-commit names only the local ref, no range.
    monkeypatch.delenv("PRE_COMMIT_TO_REF")
    monkeypatch.delenv("PRE_COMMIT_FROM_REF")
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "HEAD")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/main")
    assert pre_commit_hook().code == 1
    assert f"refusing to update refs/heads/main to {head[:12]}" in said()
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "no-such-branch")
    with pytest.raises(BadInput, match="PRE_COMMIT_LOCAL_BRANCH 'no-such-branch'"):
        gate_cli.pre_push(from_env=True)
    install(repo)
    assert pre_commit_hook().code == 0
    assert "every ref of this push was checked" in said()


def test_bad_stdin_and_bad_config_are_exit_2(repo: Path):
    proc = okstra(repo, "hooks", "run", "pre-push", "origin", "url", input="garbage\n")
    assert proc.returncode == 2 and "pre-push stdin line 1" in proc.stderr
    git(repo, "config", "okstra.gate.match", "nearly")
    head = git(repo, "rev-parse", "HEAD")
    line = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"
    proc = okstra(repo, "hooks", "run", "pre-push", "origin", "url", input=line)
    assert proc.returncode == 2 and "okstra.gate.match" in proc.stderr


def test_verdicts_ref_constant_matches_the_record_module():
    assert gate_cli.VERDICTS_REF == VERDICTS_REF


def test_unreadable_note_lines_never_count(tmp_path: Path):
    work, _ = pair(tmp_path)
    install(work)
    head = commit(work, "x")
    GitRepo.open(work).add_note_lines(VERDICTS_REF, head, ["{not json"], "garbage")
    proc = push(work, "origin", "main")
    assert proc.returncode != 0 and "Unreadable note lines" in proc.stderr


def loaded_modules(repo: Path, *args: str, stdin: str | None = None) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "okstra_git", *args],
        cwd=repo,
        input=stdin,
        text=True,
        capture_output=True,
    )
    return {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}


def test_a_protected_push_loads_neither_json_nor_re(repo: Path):
    """The hook reads and checks a verdict (JSON Lines, a schema with patterns, the notes
    commit's headers) on every protected push without json or re, which would load enum and
    functools with them; run as the installed hook runs it, without site (-S)."""
    head = git(repo, "rev-parse", "HEAD")
    add_verdict(repo)
    root = str(Path(okstra_git.__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {root!r}); from okstra_git.entry import main; main()"
    hook = ("hooks", "run", "pre-push", "o", "u")
    proc = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", code, *hook],
        cwd=repo,
        input=f"refs/heads/main {head} refs/heads/main {'0' * 40}\n",
        text=True,
        capture_output=True,
    )
    assert proc.returncode == 0 and "gate open" in proc.stderr, proc.stderr[-2000:]
    names = {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
    assert "okstra_git.records.verdict" in names and "okstra_git.core.schemacheck" in names
    assert not {"json", "re", "enum", "functools"} & names


def test_an_unprotected_push_loads_neither_os_nor_select(repo: Path):
    """The hook's Python starts without site (-S), so os is not loaded yet: a push of an
    unprotected ref reads the config (one git) and decides without loading it (os and what it
    loads are an eighth of that process), nor select (git's output goes to an in-memory file);
    and a hostile config still stops the push there."""
    head = git(repo, "rev-parse", "HEAD")
    root = str(Path(okstra_git.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {root!r}); from okstra_git.entry import main; "
        "sys.exit(main())"
    )
    hook = ("hooks", "run", "pre-push", "o", "u")
    line = f"refs/heads/topic {head} refs/heads/topic {'0' * 40}\n"

    def run() -> tuple[subprocess.CompletedProcess[str], set[str]]:
        proc = subprocess.run(
            [sys.executable, "-S", "-X", "importtime", "-c", code, *hook],
            cwd=repo,
            input=line,
            text=True,
            capture_output=True,
        )
        return proc, {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}

    proc, names = run()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "okstra_git.gate.config" in names and not {"os", "select"} & names
    git(repo, "config", "okstra.protect", "refs/heads/{a,b}")
    proc, names = run()
    assert proc.returncode == 2 and "okstra.protect = 'refs/heads/{a,b}'" in proc.stderr
    assert f"({repo / '.git' / 'config'})" not in proc.stderr  # git's file: origin, made absolute
    assert f"(file:{repo / '.git' / 'config'})" in proc.stderr, proc.stderr[-2000:]


def test_a_protected_push_and_ci_check_load_no_os(repo: Path):
    """Reading and checking a verdict (its schema found in the package's data folder, through
    core/lightos) loads no os, which with what it loads was ~6M instructions of a protected
    push and of ci check; run without site (-S), as the installed hook runs, and refused
    without a verdict the same way."""
    head = git(repo, "rev-parse", "HEAD")
    root = str(Path(okstra_git.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {root!r}); from okstra_git.entry import main; "
        "sys.exit(main())"
    )
    line = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, set[str]]:
        proc = subprocess.run(
            [sys.executable, "-S", "-X", "importtime", "-c", code, *args],
            cwd=repo,
            input=stdin,
            text=True,
            capture_output=True,
        )
        names = {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
        return proc.returncode, proc.stdout + proc.stderr, names

    hook = ("hooks", "run", "pre-push", "o", "u")
    code_, said, _ = run(*hook, stdin=line)
    assert code_ == 1 and "refusing to update refs/heads/main" in said, said[-2000:]
    add_verdict(repo)
    for args, stdin, words in ((hook, line, "gate open"), (("ci", "check"), None, "passed")):
        code_, said, names = run(*args, stdin=stdin)
        assert code_ == 0 and words in said, said[-2000:]
        assert "okstra_git.core.schemacheck" in names and "os" not in names, args


def test_the_hook_and_ci_check_stay_lean(repo: Path):
    """They run on every push and build: they read through git's plumbing, never pygit2,
    jsonschema or jinja2; and a push of unprotected refs alone loads no more of the stdlib
    than it needs to read the config (no typing, argparse, subprocess, dataclasses or json)."""
    head = git(repo, "rev-parse", "HEAD")
    add_verdict(repo)
    heavy = {"jsonschema", "jinja2", "pygit2"}
    protected = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"
    for args, stdin in (
        (("hooks", "run", "pre-push", "origin", "url"), protected),
        (("ci", "check"), None),
        (("ci", "check", "--format", "junit"), None),
    ):
        names = loaded_modules(repo, *args, stdin=stdin)
        assert "okstra_git.records.verdict" in names  # the check really ran: a verdict was read
        assert not heavy & {n.split(".")[0] for n in names}, args
    unprotected = f"refs/heads/topic {head} refs/heads/topic {'0' * 40}\n"
    names = loaded_modules(repo, "hooks", "run", "pre-push", "o", "u", stdin=unprotected)
    assert "okstra_git.gate.decision" in names
    startup = subprocess.run(  # what this interpreter's site (.pth files) loads anyway
        [sys.executable, "-X", "importtime", "-c", "pass"], text=True, capture_output=True
    ).stderr
    names -= {ln.split("|")[-1].strip() for ln in startup.splitlines() if "|" in ln}
    lean = {"pygit2", "typing", "argparse", "subprocess", "dataclasses", "json", "re"}
    assert not lean & names, lean & names
    # ci check prints its report: pathlib (and the urllib.parse it loads) only for --output.
    # Without site (-S), as the hook runs: an editable install's .pth loads pathlib itself.
    root = str(Path(okstra_git.__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {root!r}); from okstra_git.entry import main; main()"
    proc = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", code, "ci", "check"],
        cwd=repo,
        text=True,
        capture_output=True,
    )
    names = {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
    assert proc.returncode == 0 and "okstra_git.views.ci" in names, proc.stderr[-2000:]
    assert "pathlib" not in names


def test_the_hooks_command_line_runs_without_the_dispatcher(repo: Path):
    """The installed hook's command line (`hooks run pre-push REMOTE URL`) runs its handler
    without the dispatcher and the declarations (entry._pre_push), and says and exits exactly
    what the dispatcher says for it: an unprotected ref, a protected one with its verdict, one
    refused without, an unusable stdin. Options still go through the dispatcher."""
    head = git(repo, "rev-parse", "HEAD")
    add_verdict(repo)
    (repo / "unverified.txt").write_text("not verified\n")
    git(repo, "add", "unverified.txt")
    git(repo, "commit", "-q", "-m", "unverified")
    new = git(repo, "rev-parse", "HEAD")
    zero = "0" * 40
    dispatcher = (  # the same main, every command line through the dispatcher
        "import sys; from okstra_git import entry; entry._is_hook_push = lambda argv: False; "
        "sys.exit(entry.main())"
    )
    hook = ("hooks", "run", "pre-push", "origin", "url")
    for stdin, code in (
        (f"refs/heads/topic {new} refs/heads/topic {zero}\n", 0),
        (f"refs/heads/main {head} refs/heads/main {zero}\n", 0),
        (f"refs/heads/main {new} refs/heads/main {zero}\n", 1),
        ("three bad fields\n", 2),
    ):
        runs = [
            subprocess.run(argv, cwd=repo, input=stdin, text=True, capture_output=True)
            for argv in (
                [sys.executable, "-m", "okstra_git", *hook],
                [sys.executable, "-c", dispatcher, *hook],
            )
        ]
        fast, full = ((r.returncode, r.stdout, r.stderr) for r in runs)
        assert fast == full and fast[0] == code, (fast, full)
    names = loaded_modules(repo, *hook, stdin=f"refs/heads/main {head} refs/heads/main {zero}\n")
    assert "okstra_git.records.verdict" in names  # the gate ran
    assert not {n for n in names if n.startswith("okstra_git.cli")}, names
    names = loaded_modules(repo, *hook, "--require-refs", stdin="")
    assert "okstra_git.cli.dispatch" in names
