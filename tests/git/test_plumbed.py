"""The plumbing backend (git/plumbed.py) against GitRepo (pygit2) on the same repositories:
the same paths, refs, config, objects written byte for byte, and the same transactions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git

from okstra_git.core.errors import BadInput
from okstra_git.git.plumbed import PlumbedRepo, open_plumbed
from okstra_git.git.repo import GitRepo, Ident, RefMoved, RefUpdate


def both(where: Path) -> tuple[GitRepo, PlumbedRepo]:
    plumbed = open_plumbed(where)
    assert isinstance(plumbed, PlumbedRepo)
    return GitRepo.open(where), plumbed


def test_it_finds_the_repository_as_libgit2_does(repo: Path, tmp_path: Path) -> None:
    (repo / "sub" / "deeper").mkdir(parents=True)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    (tmp_path / "through").symlink_to(repo)
    for where in (repo, repo / "sub" / "deeper", linked, tmp_path / "through" / "sub"):
        pygit2_repo, plumbed = both(where)
        assert plumbed.git_dir == pygit2_repo.git_dir, where
        assert plumbed.common_dir == pygit2_repo.common_dir, where
        assert plumbed.workdir == pygit2_repo.workdir, where
        assert plumbed.main_checkout() == pygit2_repo.main_checkout(), where
        assert plumbed.worktree_for_branch("side") == pygit2_repo.worktree_for_branch("side")
    assert plumbed._opened is None  # none of it opened pygit2


def test_a_repository_it_does_not_read_as_libgit2_does_is_a_gitrepo(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    assert type(open_plumbed(tmp_path / "bare.git")) is GitRepo
    git(repo, "config", "core.sharedRepository", "group")
    assert type(open_plumbed(repo)) is GitRepo
    git(repo, "config", "--unset", "core.sharedRepository")
    assert type(open_plumbed(repo)) is PlumbedRepo
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert type(open_plumbed(repo)) is GitRepo


def test_refs_and_config_read_alike(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/okstra/tasks/g/packed", head)
    git(repo, "pack-refs", "--all")
    git(repo, "update-ref", "refs/okstra/tasks/g/loose", head)
    git(repo, "symbolic-ref", "refs/okstra/alias", "refs/okstra/tasks/g/loose")
    git(repo, "remote", "add", "zeta", "/nowhere")
    git(repo, "remote", "add", "Alpha", "/nowhere")
    git(repo, "config", "okstra.Mixed", "one")
    git(repo, "config", "--add", "okstra.multi", "a")
    git(repo, "config", "--add", "okstra.multi", "b")
    pygit2_repo, plumbed = both(repo)
    names = ["refs/okstra/tasks/g/packed", "refs/okstra/tasks/g/loose", "refs/okstra/alias"]
    names += ["refs/okstra/none", "HEAD", "refs/heads/main", "refs/bad..name", "refs/x y"]
    for name in names:
        assert plumbed.read_ref(name) == pygit2_repo.read_ref(name), name
    assert plumbed.list_refs("refs/okstra/") == pygit2_repo.list_refs("refs/okstra/")
    assert plumbed.remote_names() == pygit2_repo.remote_names() == ["Alpha", "zeta"]
    for name in ("okstra.mixed", "okstra.Mixed", "okstra.multi", "user.name", "okstra.none"):
        assert plumbed.config_get(name) == pygit2_repo.config_get(name), name
        assert plumbed.local_config_get(name) == pygit2_repo.local_config_get(name), name
    assert plumbed.config_get_all("okstra.multi") == ["a", "b"]
    plumbed.local_config_set("okstra.cloneId", "c1")
    assert plumbed.local_config_get("okstra.cloneId") == "c1"
    assert GitRepo.open(repo).local_config_get("okstra.cloneId") == "c1"


def test_objects_are_written_byte_for_byte_as_libgit2_writes_them(repo: Path) -> None:
    pygit2_repo, plumbed = both(repo)
    who = Ident("A Person", "a@example.invalid", 1_700_000_000, -150)
    for backend in (pygit2_repo, plumbed):
        backend._pinned_signature = who
    head = git(repo, "rev-parse", "HEAD")
    changes: dict[str, bytes | None] = {
        "task.json": b"{}\n",
        "runs/implementation/001.json": b'{"a": 1}\n',
        "runs/impl": b"a file beside a folder of the same prefix\n",
        "a-b/c": b"x",
        "a/c": b"y",
    }
    made = [b.tree_with(None, changes) for b in (pygit2_repo, plumbed)]
    assert made[0] == made[1]
    on_base = [b.tree_with(head, changes) for b in (pygit2_repo, plumbed)]
    assert on_base[0] == on_base[1]
    emptied = {"runs/implementation/001.json": None, "a/c": None, "task.json": b"[]\n"}
    again = [b.tree_with(made[0], emptied) for b in (pygit2_repo, plumbed)]
    assert again[0] == again[1]
    assert "runs/implementation" not in git(repo, "ls-tree", "-r", "-t", "--name-only", again[0])
    message = "subject  \n\n\n\nbody\x00 line\n\n"
    commits = [b.commit(again[0], [head], message) for b in (pygit2_repo, plumbed)]
    assert commits[0] == commits[1]
    kept = [
        b.commit(made[0], [commits[0]], "replayed", author_of=head) for b in (pygit2_repo, plumbed)
    ]
    assert kept[0] == kept[1]
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    for backend in (pygit2_repo, plumbed):
        backend._pinned_signature = None
    assert plumbed.read_path(commits[0], "task.json") == b"[]\n"
    for path in ("runs", "a-b", "missing", "task.json"):
        assert plumbed.dir_entries(commits[0], path) == pygit2_repo.dir_entries(commits[0], path)
        assert plumbed.list_dir(commits[0], path) == pygit2_repo.list_dir(commits[0], path)
        assert plumbed.read_path(commits[0], path) == pygit2_repo.read_path(commits[0], path)
    assert plumbed.resolve_commit("HEAD") == pygit2_repo.resolve_commit("HEAD") == head
    assert plumbed.contains(commits[0], head) and not plumbed.contains(head, commits[0])
    assert plumbed.history_readable([kept[0]], [head])


def test_a_transaction_is_all_or_nothing_and_compared_and_swapped(repo: Path) -> None:
    plumbed = open_plumbed(repo)
    head = git(repo, "rev-parse", "HEAD")
    plumbed.update_refs([RefUpdate("refs/okstra/t/a", head, None)], "create")
    with pytest.raises(RefMoved) as moved:
        plumbed.update_refs(
            [RefUpdate("refs/okstra/t/b", head, None), RefUpdate("refs/okstra/t/a", head, None)],
            "must fail: a exists",
        )
    assert moved.value.refname == "refs/okstra/t/a" and not moved.value.lock_failed
    assert str(moved.value) == f"refs/okstra/t/a: expected None, found {head}"
    assert plumbed.read_ref("refs/okstra/t/b") is None
    lock = repo / ".git" / "refs" / "okstra" / "t" / "a.lock"
    lock.write_text("")
    with pytest.raises(RefMoved) as held:
        plumbed.update_refs([RefUpdate("refs/okstra/t/a", None, head)], "blocked by a lock")
    assert held.value.lock_failed and held.value.refname == "refs/okstra/t/a"
    lock.unlink()

    # The guard, read before ``build`` decides, must still hold that value when the
    # transaction lands, though it is not among the refs moved.
    def build() -> tuple[list[RefUpdate], str]:
        git(repo, "update-ref", "refs/okstra/t/a", git(repo, "rev-parse", "HEAD^{tree}"))
        return [RefUpdate("refs/okstra/t/c", head, None)], "built"

    with pytest.raises(RefMoved):
        plumbed.update_refs_guarded("refs/okstra/t/a", build, "guard moved meanwhile")
    assert plumbed.read_ref("refs/okstra/t/c") is None
    assert plumbed.update_refs_guarded("refs/okstra/t/c", lambda: ([], 1), "nothing") == 1
    plumbed.update_refs(
        [RefUpdate("refs/okstra/t/a", None, plumbed.read_ref("refs/okstra/t/a"))], "d"
    )
    assert plumbed.list_refs("refs/okstra/t/") == {}
    assert list((repo / ".git" / "okstra-locks" / "writers").iterdir()) == []


def test_a_history_that_does_not_parse_is_told_as_libgit2_tells_it(repo: Path) -> None:
    pygit2_repo, plumbed = both(repo)
    head = git(repo, "rev-parse", "HEAD")
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    body = f"tree {tree}\nparent {head}\nauthor no email here 1 +0000\n"
    body += "committer C <c@x> 1 +0000\n\nbroken\n"
    bad = subprocess.run(
        ["git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin"],
        cwd=repo, input=body, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    on_top = git(repo, "commit-tree", tree, "-p", bad, "-m", "on top")
    fine = git(repo, "commit-tree", tree, "-p", head, "-m", "fine")
    for backend in (pygit2_repo, plumbed):
        assert backend.history_readable([fine], [head])
        assert not backend.history_readable([fine, on_top], [head])
        assert not backend.history_readable([on_top], [bad])  # libgit2 parses what it hides
        with pytest.raises(BadInput, match="refs/x holds a commit"):
            backend.check_history(on_top, [head], "refs/x")
    # Past the few commits walked here, git rev-list lists them: the same answers.
    long = fine
    for n in range(20):
        long = git(repo, "commit-tree", tree, "-p", long, "-m", f"c{n}")
    assert plumbed.history_readable([long], [head])
    assert not plumbed.history_readable([long, on_top], [head])
