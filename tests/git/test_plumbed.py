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


def _commit_all(where: Path, message: str) -> str:
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", message)
    return git(where, "rev-parse", "HEAD")


def test_ancestry_trees_and_diff_stats_answer_alike(repo: Path) -> None:
    root = git(repo, "rev-parse", "HEAD")
    (repo / "sub").mkdir()
    (repo / "sub" / "long.txt").write_text("".join(f"line {n}\n" for n in range(40)))
    (repo / "gone.txt").write_text("bye\n")
    (repo / "moved.txt").write_text("".join(f"same {n}\n" for n in range(30)))
    (repo / "tool.sh").write_text("echo\n")
    (repo / "empty-old.txt").write_text("")
    base = _commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    side = _commit_all(repo, "side")
    git(repo, "checkout", "-q", "main")
    (repo / "sub" / "long.txt").write_text("".join(f"line {n}\n" for n in range(3, 45)))
    (repo / "gone.txt").unlink()
    (repo / "moved.txt").rename(repo / "sub" / "renamed.txt")  # a rename, edited a little
    text = (repo / "sub" / "renamed.txt").read_text()
    (repo / "sub" / "renamed.txt").write_text(text + "one more\n")
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (repo / "tool.sh").chmod(0o755)
    (repo / "empty.txt").write_text("")
    (repo / "new.txt").write_text("")
    (repo / "tool.sh").rename(repo / "sub" / "tool.sh")  # a rename as is, its mode changed
    (repo / "sub" / "long.txt").rename(repo / "long.txt")  # moved up, and edited
    (repo / "empty-old.txt").unlink()  # an empty file, renamed
    head = _commit_all(repo, "head")
    git(repo, "merge", "-q", "--no-edit", "side")
    merged = git(repo, "rev-parse", "HEAD")
    unknown = "1" * 40
    pygit2_repo, plumbed = both(repo)
    assert len(plumbed.diff_stat(base, head)) == 7  # each kind of change is there
    for old, new in ((base, head), (head, base), (root, merged), (side, head), (base, base)):
        assert plumbed.diff_stat(old, new) == pygit2_repo.diff_stat(old, new), (old, new)
    assert any(" => " in e.path for e in plumbed.diff_stat(base, head))
    assert any(e.binary for e in plumbed.diff_stat(base, head))
    for sha in (root, base, side, head, merged):
        assert plumbed.tree_id(sha) == pygit2_repo.tree_id(sha)
    with pytest.raises(KeyError):
        pygit2_repo.tree_id(unknown)
    with pytest.raises(KeyError):
        plumbed.tree_id(unknown)
    cases: list[tuple[str, list[str], str | None]] = [
        (merged, [side, head, base, root], None),
        (head, [side, head, base, root], None),
        (head, [side, base, root], base),
        (head, [side, root], head),  # base == head
        (side, [head, base, root], base),
        (merged, [side, root], unknown),  # a base not here: walked without it
        (base, [side, head], root),
        (merged, [], base),
    ]
    for at, commits, since in cases:
        want = pygit2_repo.not_contained(at, commits, since)
        assert plumbed.not_contained(at, commits, since) == want, (at, commits, since)
    assert plumbed.not_contained(head, [side, base], base) == {side}
    assert plumbed._opened is None


def test_worktree_reads_answer_alike(repo: Path, tmp_path: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("".join(f"b {n}\n" for n in range(20)))
    (repo / "sub").mkdir()
    (repo / "sub" / "c.txt").write_text("c\n")
    _commit_all(repo, "files")
    linked, gone, locked = tmp_path / "linked", tmp_path / "gone", tmp_path / "locked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    git(repo, "worktree", "add", "-q", "-b", "gone", str(gone))
    git(repo, "worktree", "add", "-q", "--detach", str(locked))
    git(repo, "worktree", "lock", "--reason", "kept", str(locked))
    import shutil

    shutil.rmtree(gone)
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    orphan = tmp_path / "orphan"
    git(repo, "worktree", "add", "-q", "--detach", str(orphan))
    git(orphan, "checkout", "-q", "--orphan", "unborn")
    # Dirt of every kind in the linked worktree: staged, unstaged, a staged rename, untracked
    # files and folders, ignored files, and okstra's own folder.
    (linked / "a.txt").write_text("changed\n")
    git(linked, "mv", "b.txt", "sub/b-moved.txt")
    (linked / "sub" / "c.txt").unlink()
    (linked / "new.txt").write_text("new\n")
    (linked / "fresh" / "deep").mkdir(parents=True)
    (linked / "fresh" / "deep" / "x.txt").write_text("x\n")
    (linked / "debug.log").write_text("ignored\n")
    (linked / ".okstra" / "tasks").mkdir(parents=True)
    (linked / ".okstra" / "tasks" / "t.md").write_text("mine\n")
    git(linked, "add", "new.txt")
    (linked / "new.txt").write_text("new, then edited\n")
    from okstra_git.git.worktrees import (
        dirty_paths,
        merge_in_progress,
        worktree_at,
        worktree_head,
    )

    pygit2_repo, plumbed = both(repo)
    folders = [repo, linked, linked / "sub", gone, locked, other, orphan, tmp_path / "none"]
    folders.append(tmp_path)  # a plain folder, in no repository
    for folder in folders:
        assert worktree_head(folder, plumbed) == worktree_head(folder, pygit2_repo), folder
        assert worktree_at(plumbed, folder) == worktree_at(pygit2_repo, folder), folder
        assert merge_in_progress(folder, plumbed) == merge_in_progress(folder), folder
    assert worktree_head(orphan, plumbed) is None
    assert worktree_at(plumbed, gone) is not None and worktree_at(plumbed, gone).prunable
    assert worktree_at(plumbed, locked).locked == "kept"  # type: ignore[union-attr]
    for folder in (repo, linked, linked / "sub", locked, orphan):
        assert dirty_paths(folder, plumbed) == dirty_paths(folder), folder
    assert dirty_paths(linked, plumbed) == [
        "a.txt", "b.txt", "fresh/", "new.txt", "sub/b-moved.txt", "sub/c.txt",
    ]  # fmt: skip
    with pytest.raises(BadInput):
        dirty_paths(tmp_path, plumbed)  # no work tree: as GitRepo says it
    # A merge stopped on a conflict, then the conflict resolved but not committed.
    git(linked, "reset", "-q", "--hard")
    git(linked, "clean", "-qfd")
    (linked / "a.txt").write_text("side\n")
    _commit_all(linked, "side")
    (repo / "a.txt").write_text("main\n")
    _commit_all(repo, "main")
    subprocess.run(["git", "-C", str(linked), "merge", "-q", "main"], capture_output=True)
    assert merge_in_progress(linked, plumbed) == merge_in_progress(linked) == ("a.txt",)
    git(linked, "add", "a.txt")
    assert merge_in_progress(linked, plumbed) == merge_in_progress(linked) == ()
    assert plumbed._opened is None  # libgit2 read the merge's index, not the repository
