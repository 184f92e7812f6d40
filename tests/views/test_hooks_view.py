"""What ``hooks install``, ``uninstall`` and ``status`` say of what the hooks service did:
services/hooks.py hands typed values (Placed, Removed, Note) and views/hooks.py words each as
the service wrote it (issue 19). The CLI tests (test_hooks, test_hook_managers,
test_hooks_server) see some of these on real repositories; this pins every kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_git.logic.hooklayout import TEAM_LINE
from okstra_git.services.hooks import Note, Outcome, Placed, Removed, Runs
from okstra_git.views.hooks import action, installed, note

HOOKS = Path("/r/.git/hooks")
WHY = "there is no /w/.git/hooks/pre-push"
NOT_RUN = Runs(False, (), "no-hook", Path("/w/.git/hooks/pre-push"))

LFS = (
    "this repository uses git-lfs but no hook a push runs calls `git lfs pre-push`, so LFS "
    "objects are not uploaded"
)


@pytest.mark.parametrize(
    ("said", "words"),
    [
        (
            Note("pre-commit-restored", HOOKS / "pre-push"),
            "moved pre-commit's script back to /r/.git/hooks/pre-push (an older okstra had "
            "moved it aside)",
        ),
        (
            Note("pre-commit-copy", HOOKS / "pre-push.okstra-chained"),
            "removed /r/.git/hooks/pre-push.okstra-chained: a copy of pre-commit's script that "
            "okstra's hook ran from inside pre-commit, which fails every push in 'migration "
            "mode'",
        ),
        (
            Note("pre-commit-legacy", HOOKS / "pre-push.legacy"),
            "pre-commit owns pre-push: the gate is pre-push.legacy, which pre-commit runs first "
            "on every push (`pre-commit install -f` deletes it; run this again after one)",
        ),
        (
            Note("husky-ahead", Path("/r/.husky/pre-push")),
            "package.json uses husky: once it runs (npm install), core.hooksPath moves to "
            ".husky/_ and this hook stops running. Add this line as the first command of "
            f"/r/.husky/pre-push and commit it:\n  {TEAM_LINE}",
        ),
        (
            Note("lfs-okstra-first"),
            f"{LFS} (okstra's hook was there first, so git-lfs did not install it). Run: git "
            "okstra hooks uninstall && git lfs install && git okstra hooks install",
        ),
        (
            Note("lfs-not-run"),
            f"{LFS}. The hook that runs the gate must also run git-lfs with the same stdin, "
            'e.g. input=$(cat); printf \'%s\\n\' "$input" | git lfs pre-push "$@" || exit 1; '
            'printf \'%s\\n\' "$input" | git okstra hooks run pre-push "$@" || exit 1 (`git '
            "lfs update --manual` prints git-lfs's own lines)",
        ),
        (
            Note("not-gated", Path("/w2"), NOT_RUN),
            f"a push from the worktree /w2 is not gated: {WHY}",
        ),
        (
            Note("still-runs", Path("/r/.husky/pre-push")),
            "the gate still runs from /r/.husky/pre-push, which is not okstra's to change",
        ),
        (
            Note("gitolite", Path("/srv/my repo.git/hooks")),
            "gitolite: `gitolite setup` keeps this pre-receive unless a pre-receive in "
            "~/.gitolite/hooks/common (or a repo-specific hook) is installed over it; check with "
            "ls -l '/srv/my repo.git/hooks' after one",
        ),
        (Note("here-not-run", runs=NOT_RUN), f"a push from here does not run the gate: {WHY}"),
        (
            Note("worktree-not-run", Path("/w2"), NOT_RUN),
            f"a push from the worktree /w2 does not run the gate: {WHY}",
        ),
    ],
)
def test_each_note_in_the_words_the_service_wrote(said: Note, words: str):
    assert note(said) == words


def test_a_note_of_no_known_kind_has_no_words():
    with pytest.raises(AssertionError, match="no words: what"):
        note(Note("what"))


@pytest.mark.parametrize(
    ("done", "words"),
    [
        ([Placed("unchanged")], "unchanged"),
        ([Placed("updated")], "updated"),
        ([Placed("installed")], "installed"),
        (
            [Placed("kept-changes", "pre-push.okstra-modified")],
            "updated (the script held changes of yours, or another okstra's: kept as "
            "pre-push.okstra-modified)",
        ),
        (
            [Placed("chained", "pre-push.okstra-chained")],
            "installed (chained the existing hook, kept as pre-push.okstra-chained)",
        ),
        (
            [Placed("installed", hook="pre-receive"), Placed("unchanged", hook="update")],
            "pre-receive installed; update unchanged",
        ),
    ],
)
def test_what_install_did(done: list[Placed], words: str):
    assert action(Outcome("none", HOOKS / "pre-push", done)) == words


def test_what_uninstall_did():
    assert action(Outcome("none", None, [], [])) == "not installed"
    gone = [
        Removed(HOOKS / "pre-push", restored=True),
        Removed(HOOKS / "pre-push.legacy", HOOKS / "pre-push.legacy.okstra-modified"),
    ]
    assert action(Outcome("pre-commit", None, [], gone)) == (
        "removed /r/.git/hooks/pre-push (restored the hook it chained), "
        "/r/.git/hooks/pre-push.legacy (it holds changes of yours, or another okstra's script: "
        "kept as /r/.git/hooks/pre-push.legacy.okstra-modified)"
    )


def test_install_s_output_carries_the_words_in_text_and_json():
    out = installed(
        Outcome("git-lfs", HOOKS / "pre-push", [Placed("installed")], None, [Note("lfs-not-run")])
    )
    assert out.data["action"] == "installed" and out.data["gate"] == "/r/.git/hooks/pre-push"
    assert out.data["notes"] == [note(Note("lfs-not-run"))]
    assert out.render_text().splitlines()[:3] == [
        "installed (git-lfs)",
        "gate: /r/.git/hooks/pre-push",
        f"note: {LFS}. The hook that runs the gate must also run git-lfs with the same stdin, "
        'e.g. input=$(cat); printf \'%s\\n\' "$input" | git lfs pre-push "$@" || exit 1; '
        'printf \'%s\\n\' "$input" | git okstra hooks run pre-push "$@" || exit 1 (`git lfs '
        "update --manual` prints git-lfs's own lines)",
    ]
