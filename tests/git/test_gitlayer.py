"""The git layer against real repositories: refs, transactions, notes, ancestry, cleanliness."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import git

from okstra_git.git.repo import GitRepo, RefMoved, RefUpdate
from okstra_git.git.worktrees import dirty_paths


def commit_file(repo: Path, name: str, text: str) -> str:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"add {name}")
    return git(repo, "rev-parse", "HEAD")


def test_list_refs_reads_loose_and_packed(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    for name in ("refs/okstra/tasks/a/x", "refs/okstra/tasks/b/y", "refs/okstra/other/z"):
        git(repo, "update-ref", name, head)
    git(repo, "pack-refs", "--all")
    git(repo, "update-ref", "refs/okstra/tasks/c/w", head)
    found = GitRepo.open(repo).list_refs("refs/okstra/tasks/")
    assert found == {f"refs/okstra/tasks/{n}": head for n in ("a/x", "b/y", "c/w")}
    git(repo, "update-ref", "-d", "refs/okstra/tasks/a/x")
    assert "refs/okstra/tasks/a/x" not in GitRepo.open(repo).list_refs("refs/okstra/tasks/")


def test_reading_once_answers_each_ref_question_once_and_only_inside(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/okstra/tasks/a/x", head)
    opened = GitRepo.open(repo)
    with opened.reading_once():
        listed = opened.list_refs("refs/okstra/tasks/")
        listed.clear()  # a caller's copy: the next answer is whole
        assert opened.read_ref("refs/okstra/tasks/a/x") == head
        assert opened.has_refs("refs/okstra/") and opened.remote_names() == []
        git(repo, "update-ref", "-d", "refs/okstra/tasks/a/x")  # written by someone else
        git(repo, "remote", "add", "origin", str(repo))
        assert opened.list_refs("refs/okstra/tasks/") == {"refs/okstra/tasks/a/x": head}
        assert opened.read_ref("refs/okstra/tasks/a/x") == head
        assert opened.has_refs("refs/okstra/") and opened.remote_names() == []
    assert opened.list_refs("refs/okstra/tasks/") == {}
    assert opened.read_ref("refs/okstra/tasks/a/x") is None
    assert not opened.has_refs("refs/okstra/") and opened.remote_names() == ["origin"]


def test_transaction_is_all_or_nothing(repo: Path) -> None:
    g = GitRepo.open(repo)
    head = git(repo, "rev-parse", "HEAD")
    g.update_refs([RefUpdate("refs/okstra/t/a", head, None)], "create")
    with pytest.raises(RefMoved):
        g.update_refs(
            [RefUpdate("refs/okstra/t/b", head, None), RefUpdate("refs/okstra/t/a", head, None)],
            "must fail: a exists",
        )
    assert g.read_ref("refs/okstra/t/b") is None
    other = commit_file(repo, "f.txt", "1")
    g.update_refs(
        [RefUpdate("refs/okstra/t/a", other, head), RefUpdate("refs/okstra/t/b", other, None)],
        "both",
    )
    assert g.read_ref("refs/okstra/t/a") == g.read_ref("refs/okstra/t/b") == other
    assert not list((repo / ".git" / "refs" / "okstra" / "t").glob("*.lock"))


def test_notes_fan_out_merge_lines_and_read_with_plain_git(repo: Path) -> None:
    g = GitRepo.open(repo)
    head = git(repo, "rev-parse", "HEAD")
    assert g.add_note_lines("refs/notes/okstra/test", head, ['{"b":2}'], "one")
    assert g.add_note_lines("refs/notes/okstra/test", head, ['{"a":1}', '{"b":2}'], "two")
    assert not g.add_note_lines("refs/notes/okstra/test", head, ['{"a":1}'], "again")
    shown = git(repo, "notes", "--ref", "okstra/test", "show", head)
    assert shown.splitlines() == ['{"a":1}', '{"b":2}']
    tree = git(repo, "ls-tree", "-r", "--name-only", "refs/notes/okstra/test")
    assert tree == f"{head[:2]}/{head[2:]}"
    # A note git wrote flat is found and replaced, not duplicated.
    other = commit_file(repo, "g.txt", "2")
    git(repo, "notes", "--ref", "okstra/test", "add", "-m", '{"c":3}', other)
    g.add_note_lines("refs/notes/okstra/test", other, ['{"d":4}'], "three")
    assert git(repo, "notes", "--ref", "okstra/test", "show", other).splitlines() == [
        '{"c":3}',
        '{"d":4}',
    ]


def test_not_contained_walks_once_and_handles_merges(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "side")
    side = commit_file(repo, "side.txt", "s")
    git(repo, "checkout", "-q", "main")
    main_commit = commit_file(repo, "main.txt", "m")
    git(repo, "checkout", "-q", "-b", "lonely")
    lonely = commit_file(repo, "lonely.txt", "l")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "side")
    head = git(repo, "rev-parse", "HEAD")
    g = GitRepo.open(repo)
    assert g.not_contained(head, [side, main_commit, head, base], base) == set()
    assert g.not_contained(head, [side, lonely], base) == {lonely}
    assert g.not_contained(head, [lonely]) == {lonely}
    assert g.contains(head, head) and not g.contains(head, lonely)
    # A base this clone does not have (another clone's implementation base): the same answers.
    elsewhere = "1" * 40
    assert g.not_contained(head, [side, main_commit, base], elsewhere) == set()
    assert g.not_contained(head, [side, lonely], elsewhere) == {lonely}


def test_dirty_paths_ignore_okstra_and_ignored_files(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    commit_file(repo, ".gitignore", "*.log\n")
    (repo / ".okstra" / "tasks").mkdir(parents=True)
    (repo / ".okstra" / "tasks" / "x.md").write_text("workspace")
    (repo / "debug.log").write_text("ignored")
    assert dirty_paths(repo) == []
    (repo / "README.md").write_text("changed\n")
    (repo / "new.txt").write_text("untracked\n")
    assert dirty_paths(repo) == ["README.md", "new.txt"]
    git(repo, "add", "new.txt")
    git(repo, "checkout", "--", "README.md")
    assert dirty_paths(repo) == ["new.txt"]


def test_opens_from_a_linked_worktree_and_sees_shared_refs(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    head = git(repo, "rev-parse", "HEAD")
    (wt / "sub").mkdir()
    g = GitRepo.open(wt / "sub")
    assert g.common_dir == (repo / ".git").resolve()
    g.update_refs([RefUpdate("refs/okstra/x/y", head, None)], "from worktree")
    assert git(repo, "rev-parse", "refs/okstra/x/y") == head
    assert GitRepo.open(repo).list_refs("refs/okstra/x/") == {"refs/okstra/x/y": head}


def test_note_lines_holding_unicode_line_separators_stay_whole(repo: Path) -> None:
    g = GitRepo.open(repo)
    head = git(repo, "rev-parse", "HEAD")
    odd = '{"s":"a\u2028b\u0085c"}'
    g.add_note_lines("refs/notes/okstra/test", head, [odd], "one")
    g.add_note_lines("refs/notes/okstra/test", head, ['{"a":1}'], "two")
    raw = g.read_note("refs/notes/okstra/test", head)
    assert raw == ('{"a":1}\n' + odd + "\n").encode()


def test_prefix_listing_of_sorted_packed_refs_matches_a_full_scan(repo: Path) -> None:
    from okstra_git.git.repo import _packed_refs_under

    head = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "-a", "-m", "annotated", "v1")  # a peeled "^" line in packed-refs
    lines = [f"update refs/okstra/{g}/{i} {head}" for g in ("a", "b", "bb", "c") for i in range(30)]
    lines += [f"update refs/tags/z{i} {head}" for i in range(5)]
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, text=True, check=True,
                   input="\n".join(lines) + "\n")  # fmt: skip
    git(repo, "pack-refs", "--all")
    packed = repo / ".git" / "packed-refs"
    data = packed.read_text()
    assert " sorted" in data.splitlines()[0] and "\n^" in data
    every = [ln.split(" ")[1] for ln in data.splitlines() if ln[:1] not in ("#", "^")]
    prefixes = ["refs/okstra/", "refs/okstra/b/", "refs/okstra/bb/", "refs/okstra/c/"]
    prefixes += ["refs/tags/", "refs/heads/", "refs/okstra/zz/", "a", "refs/tags/v1"]
    prefixes += ["refs/okstra/b", "refs/", "", "refs/okstra/a/1", "refs/okstra/c/29", "\xff"]
    for prefix in prefixes:
        expected = {name for name in every if name.startswith(prefix)}
        assert set(_packed_refs_under(packed, prefix)) == expected, prefix
    unsorted = repo / "unsorted-packed-refs"
    unsorted.write_text("\n".join(reversed(data.splitlines()[1:])) + "\n")
    assert len(_packed_refs_under(unsorted, "refs/okstra/")) == 120
    unsorted.write_bytes(b"")
    assert _packed_refs_under(unsorted, "refs/") == {}


def test_update_packed_writes_one_sorted_file_git_reads_and_holds_back_what_it_cannot(
    repo: Path,
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    other = commit_file(repo, "b.txt", "b")
    git(repo, "tag", "-a", "-m", "annotated", "v1", head)  # keeps its "^" line
    for name in ("refs/t/packed", "refs/t/folder"):
        git(repo, "update-ref", name, head)
    git(repo, "pack-refs", "--all")
    git(repo, "update-ref", "refs/t/loose", head)  # a loose file overrides a packed value
    g = GitRepo.open(repo)
    held = g.update_packed(
        [
            RefUpdate("refs/t/new/a", other, None),
            RefUpdate("refs/t/packed", other, head),
            RefUpdate("refs/t/loose", other, head),
            RefUpdate("refs/t/folder/x", other, None),  # refs/t/folder is a ref: git refuses
            RefUpdate("refs/t/new", other, None),  # refs/t/new/a is being made: so does this
        ]
    )
    assert [u.name for u in held] == ["refs/t/loose", "refs/t/folder/x", "refs/t/new"]
    for name, value in (("refs/t/new/a", other), ("refs/t/packed", other), ("refs/t/loose", head)):
        assert git(repo, "rev-parse", name) == value
        assert g.read_ref(name) == value and g.list_refs("refs/t/")[name] == value
    data = (repo / ".git" / "packed-refs").read_text()
    names = [line.split(" ")[1] for line in data.splitlines() if line[:1] not in ("#", "^")]
    assert names == sorted(names) and " sorted" in data.splitlines()[0]
    assert git(repo, "rev-parse", "v1^{}") == head and "\n^" in data
    assert not (repo / ".git" / "packed-refs.lock").exists()
    fsck = subprocess.run(["git", "fsck", "--no-dangling"], cwd=repo, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_update_packed_is_a_compare_and_swap_that_respects_git_s_lock(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/t/a", head)
    git(repo, "pack-refs", "--all")
    packed = repo / ".git" / "packed-refs"
    before = packed.read_bytes()
    g = GitRepo.open(repo)
    with pytest.raises(RefMoved):  # refs/t/a is not absent: nothing is written
        g.update_packed([RefUpdate("refs/t/b", head, None), RefUpdate("refs/t/a", head, None)])
    assert packed.read_bytes() == before and not (repo / ".git" / "packed-refs.lock").exists()
    (repo / ".git" / "packed-refs.lock").write_text("")  # git is packing refs right now
    with pytest.raises(RefMoved) as held:
        g.update_packed([RefUpdate("refs/t/b", head, None)])
    assert held.value.lock_failed and packed.read_bytes() == before
