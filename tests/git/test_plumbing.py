"""Reading through git's plumbing (the gate's reader) and the gate's glob matcher."""

from __future__ import annotations

import fnmatch
import itertools
import re
import subprocess
from pathlib import Path

import pytest
from conftest import git, make_repo
from hypothesis import given
from hypothesis import strategies as st

from okstra_git.core.errors import BadInput
from okstra_git.gate.config import glob_match
from okstra_git.git import plumbing


def test_objects_refs_and_misses(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(repo)
    (repo / "dir").mkdir()
    (repo / "dir" / "a b.txt").write_bytes(b"line\nno newline at the end")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    git(repo, "tag", "-a", "-m", "annotated", "v1")
    head = git(repo, "rev-parse", "HEAD")
    with plumbing.ObjectReader() as objects:
        oid, kind, body = objects.read("v1^{commit}")
        assert (oid, kind) == (head, "commit") and body.startswith(b"tree ")
        assert plumbing.commit_problem(body) is None
        broken = body.replace(b"\nauthor Test User <", b"\nauthor Test\nUser <", 1)
        assert plumbing.commit_problem(broken) == "malformed author line"
        blob = objects.read(f"{head}:dir/a b.txt")
        assert blob is not None and blob[1:] == ("blob", b"line\nno newline at the end")
        assert objects.read(f"{head}:missing") is None
        assert objects.read("0" * 40) is None
        assert objects.read("HEAD")[0] == head  # still answering after misses
        with pytest.raises(ValueError):
            objects.read("HEAD\nHEAD")
    refs = plumbing.list_refs("refs/heads/", "refs/tags/v*")
    assert refs == {"refs/heads/main": head, "refs/tags/v1": git(repo, "rev-parse", "v1")}
    assert plumbing.git_output("rev-parse", "HEAD")[:2] == (0, head.encode() + b"\n")
    # Far more than a pipe holds, both ways: neither side may stall the other.
    code, out, err = plumbing.git_output("cat-file", "--batch-check", input=b"HEAD\n" * 20_000)
    assert (code, err) == (0, b"")
    assert out.count(b"\n") == 20_000 and out.startswith(head.encode())


def test_many_objects_are_read_in_one_batch_in_order(repo: Path):
    head = git(repo, "rev-parse", "HEAD")
    blob = git(repo, "rev-parse", "HEAD:README.md")
    # A replacement (refs/replace/) is not followed: the objects are the ones libgit2 reads.
    other = git(repo, "commit-tree", "-m", "replacement", f"{head}^{{tree}}")
    git(repo, "replace", head, other)
    revs = [head, f"{head}:README.md", "0" * 40, f"{head}:missing", blob] * 5_000
    found = plumbing.read_objects(revs, str(repo / ".git"))
    assert len(found) == len(revs)
    commit, readme = found[0], found[1]
    assert commit is not None and commit[0] == b"commit" and b"replacement" not in commit[1]
    assert readme == (b"blob", (repo / "README.md").read_bytes())
    assert found[2] is None and found[3] is None and found[4] == readme
    assert found[-5:] == found[:5]
    with pytest.raises(ValueError):
        plumbing.read_objects(["HEAD\nHEAD"], str(repo / ".git"))
    with pytest.raises(BadInput, match="git cat-file failed"):
        plumbing.read_objects(["HEAD"], str(repo / "no-such-dir"))


def problem_by_patterns(body: bytes) -> str | None:
    """What ``commit_problem`` decides, as the regular expressions say it."""
    headers = body.partition(b"\n\n")[0].split(b"\n")
    if not re.fullmatch(rb"tree [0-9a-f]{40,64}", headers[0]):
        return "no tree line"
    for name in (b"author", b"committer"):
        lines = [h for h in headers if h.startswith(name + b" ")]
        if len(lines) != 1 or not re.fullmatch(
            rb"[^<>\n]*<[^<>\n]*> [0-9]+ [+-][0-9]{4}", lines[0][len(name) + 1 :]
        ):
            return f"malformed {name.decode()} line"
    return None


_IDENT_PARTS = (  # "<name> <<email>> <time> <zone>": each part, and what may stand for it
    ("A U ", ["", "A<", "A>", "\xe9 ", "A\rU "]),
    ("<", ["", "<<", ">"]),
    ("a@b", ["", "a<b", "a>b"]),
    (">", ["", ">>", "<"]),
    (" ", ["", "  ", "\r"]),
    ("1700000000", ["", "1x", "\xb2", "-1"]),
    (" ", ["", "  ", "\r"]),
    ("+0000", ["-0130", "0000", "+000", "+00000", "x0000", "+00a0", "+0000 "]),
)
SOUND = "".join(sound for sound, _ in _IDENT_PARTS)


def near_idents() -> list[str]:
    """The sound line with every one or two of its parts replaced in every way."""
    found = []
    for i, j in itertools.combinations(range(len(_IDENT_PARTS)), 2):
        for a in [_IDENT_PARTS[i][0], *_IDENT_PARTS[i][1]]:
            for b in [_IDENT_PARTS[j][0], *_IDENT_PARTS[j][1]]:
                parts = [sound for sound, _ in _IDENT_PARTS]
                parts[i], parts[j] = a, b
                found.append("".join(parts))
    return found


def body_of(sha: str, authors: list[str], committers: list[str]) -> bytes:
    lines = [f"tree {sha}", *(f"author {a}" for a in authors)]
    lines += [f"committer {c}" for c in committers]
    return ("\n".join(lines) + "\n\nmessage\n").encode()


def test_signatures_are_judged_as_the_pattern_says():
    for ident in near_idents():
        for body in (body_of("a" * 40, [ident], [SOUND]), body_of("a" * 40, [SOUND], [ident])):
            assert plumbing.commit_problem(body) == problem_by_patterns(body), body


@given(
    st.text("0123456789abcdef", min_size=39, max_size=65)
    | st.text("0123456789abcdefA g", min_size=38, max_size=66),
    st.lists(st.sampled_from([SOUND, "x"]) | st.text("Ab <>@ 0123456789+-\r\xe9"), max_size=2),
    st.lists(st.sampled_from([SOUND, "x"]), max_size=2),
)
def test_commit_headers_are_judged_as_the_patterns_say(
    sha: str, authors: list[str], committers: list[str]
):
    body = body_of(sha, authors, committers)
    assert plumbing.commit_problem(body) == problem_by_patterns(body)


def test_outside_a_repository_it_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(BadInput, match="not a git repository"):
        plumbing.list_refs("refs/")
    with pytest.raises(BadInput, match="not a git repository"), plumbing.ObjectReader() as objects:
        objects.read("HEAD")


REF_CHARS = st.text(alphabet="ab/*?[]!.-x", max_size=12)


@given(glob=REF_CHARS, ref=st.text(alphabet="ab/.-x", max_size=12))
def test_glob_match_is_fnmatchcase(glob: str, ref: str):
    assert glob_match(glob, ref) == fnmatch.fnmatchcase(ref, glob)


@given(
    parts=st.lists(st.text(alphabet="ab/", max_size=3), min_size=1, max_size=4),
    ref=st.text(alphabet="ab/", max_size=10),
)
def test_glob_match_with_stars_only(parts: list[str], ref: str):
    """The path that loads no re: globs made of literal runs and stars."""
    glob = "*".join(parts)
    assert glob_match(glob, ref) == fnmatch.fnmatchcase(ref, glob)


@pytest.mark.parametrize("git_dir", [True, False], ids=["loose files", "asked of git"])
def test_symbolic_targets_follow_chains_and_dangling_refs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_dir: bool
):
    from okstra_git.git.plumbing import symbolic_targets

    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = make_repo(tmp_path / "seed")
    git(seed, "push", "-q", str(bare), "main")
    for name, target in [
        ("refs/heads/trunk", "refs/heads/main"),
        ("refs/heads/alias", "refs/heads/trunk"),
        ("refs/heads/soon", "refs/heads/release/9"),  # dangling
        ("refs/heads/later", "refs/heads/soon"),  # a chain ending dangling
    ]:
        git(bare, "symbolic-ref", name, target)
    git(bare, "pack-refs", "--all")  # direct refs packed; symbolic ones stay loose files
    monkeypatch.chdir(bare)
    if git_dir:
        monkeypatch.setenv("GIT_DIR", ".")
    else:
        monkeypatch.delenv("GIT_DIR", raising=False)
    asked = ["refs/heads/main", "refs/heads/trunk", "refs/heads/alias", "refs/heads/soon",
             "refs/heads/later", "refs/heads/new", "refs/okstra/tasks/g/i"]  # fmt: skip
    assert symbolic_targets(asked) == {
        "refs/heads/trunk": "refs/heads/main",
        "refs/heads/alias": "refs/heads/main",
        "refs/heads/soon": "refs/heads/release/9",
        "refs/heads/later": "refs/heads/release/9",
    }


def _git_common_dir(cwd: Path) -> str:
    return str((cwd / git(cwd, "rev-parse", "--git-common-dir")).resolve())


def test_the_common_dir_is_found_as_git_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without starting git where the case is plain (the top of a clone, a folder inside it, a
    linked worktree, a worktree's folder), the same folder as ``git rev-parse
    --git-common-dir``; where it is not (inside .git, a bare repository, GIT_DIR set, no
    repository), git answers, or the error is git's."""
    repo = make_repo(tmp_path / "repo")
    (repo / "src" / "deep").mkdir(parents=True)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "sub").mkdir()
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    for cwd in (repo, repo / "src" / "deep", linked, linked / "sub"):
        monkeypatch.chdir(cwd)
        assert plumbing._discovered_common_dir() == _git_common_dir(cwd) == str(repo / ".git")
        assert plumbing.common_dir() == str(repo / ".git")
    for cwd in (repo / ".git", repo / ".git" / "refs", bare):
        monkeypatch.chdir(cwd)
        assert plumbing._discovered_common_dir() is None
        assert plumbing.common_dir() == _git_common_dir(cwd)
    monkeypatch.chdir(repo / "src")
    monkeypatch.setenv("GIT_DIR", str(bare))
    assert plumbing._discovered_common_dir() is None and plumbing.common_dir() == str(bare)
    monkeypatch.delenv("GIT_DIR")
    (linked / ".git").write_text("not a gitdir line\n")
    monkeypatch.chdir(linked)
    assert plumbing._discovered_common_dir() is None
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    with pytest.raises(BadInput):
        plumbing.common_dir()


NOTES_PATTERNS = ("refs/notes/okstra/verdicts", "refs/notes/okstra-remotes/")


def test_refs_are_read_from_the_files_as_git_lists_them(
    repo: Path, monkeypatch: pytest.MonkeyPatch
):
    """Loose, packed, a loose ref over its packed value, a packed ref deleted, a remote named
    with a slash, and names that only start like the patterns: the same refs and ids as
    ``git for-each-ref``."""
    monkeypatch.chdir(repo)
    head = git(repo, "rev-parse", "HEAD")
    other = git(repo, "commit-tree", "-m", "other", f"{head}^{{tree}}")
    for ref in (
        "refs/notes/okstra/verdicts",
        "refs/notes/okstra/verdicts-old",
        "refs/notes/okstra-remotes/origin/verdicts",
        "refs/notes/okstra-remotes/a/b/verdicts",
        "refs/notes/okstra-remotes-not/x",
        "refs/heads/refs/notes/okstra/verdicts",
    ):
        git(repo, "update-ref", ref, head)

    def agree() -> dict[str, str]:
        found = plumbing.refs_in_files(*NOTES_PATTERNS)
        assert found == plumbing.list_refs(*NOTES_PATTERNS)
        return found

    assert len(agree()) == 3
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "notes" / "okstra").exists()
    assert len(agree()) == 3
    git(repo, "update-ref", "refs/notes/okstra-remotes/origin/verdicts", other)  # loose again
    assert agree()["refs/notes/okstra-remotes/origin/verdicts"] == other
    git(repo, "update-ref", "-d", "refs/notes/okstra-remotes/a/b/verdicts")  # out of packed-refs
    assert sorted(agree()) == [
        "refs/notes/okstra-remotes/origin/verdicts",
        "refs/notes/okstra/verdicts",
    ]
    (repo / ".git" / "refs" / "notes" / "okstra-remotes" / "origin" / "verdicts.lock").write_text(
        other + "\n"
    )  # a ref being written, which git does not list either
    assert len(agree()) == 2
    with plumbing.ObjectReader() as objects:
        assert objects.refs(*NOTES_PATTERNS) == plumbing.list_refs(*NOTES_PATTERNS)


def test_anything_out_of_the_plain_is_left_to_git(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    """None (git answers) for a symbolic ref, a broken ref file, a name git may judge otherwise,
    a glob or per-worktree pattern, a linked worktree, GIT_DIR, a reftable; ObjectReader still
    answers as git does."""
    monkeypatch.chdir(repo)
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/notes/okstra/verdicts", head)
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is not None
    for pattern in ("refs/notes/okstra-remotes/*", "refs/bisect/", "HEAD", "refs/a b"):
        assert plumbing.refs_in_files(pattern) is None, pattern
    remotes = repo / ".git" / "refs" / "notes" / "okstra-remotes"
    git(repo, "symbolic-ref", "refs/notes/okstra-remotes/o/verdicts", "refs/notes/okstra/verdicts")
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None
    with plumbing.ObjectReader() as objects:
        assert objects.refs(*NOTES_PATTERNS) == plumbing.list_refs(*NOTES_PATTERNS)
    git(repo, "update-ref", "-d", "--no-deref", "refs/notes/okstra-remotes/o/verdicts")
    (remotes / "o").mkdir(parents=True, exist_ok=True)
    (remotes / "o" / "verdicts").write_text("not an id\n")
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None
    (remotes / "o" / "verdicts").unlink()
    (remotes / "o" / "ver..dicts").write_text(head + "\n")  # a name git refuses
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None
    (remotes / "o" / "ver..dicts").unlink()
    assert plumbing.refs_in_files(*NOTES_PATTERNS) == {"refs/notes/okstra/verdicts": head}
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    monkeypatch.chdir(linked)
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None
    monkeypatch.delenv("GIT_DIR")
    # git 2.39 here cannot make a reftable: the folder is what tells one apart.
    (repo / ".git" / "reftable").mkdir()
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None


def test_a_large_packed_refs_is_searched_and_sha256_ids_are_read_or_left_to_git(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    """Past PACKED_REFS_READ the file is mapped and searched (2,000 task refs packed around the
    notes refs); in a SHA-256 repository a loose ref is read and a packed one left to git."""
    monkeypatch.chdir(repo)
    head = git(repo, "rev-parse", "HEAD")
    name = "refs/okstra/tasks/" + "/".join(["t" * 200] * 3) + "/"  # long: fewer refs to make
    creates = "".join(f"create {name}{n:05d} {head}\n" for n in range(2_000))
    creates += f"create refs/notes/okstra/verdicts {head}\n"
    creates += f"create refs/notes/okstra-remotes/origin/verdicts {head}\n"
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=creates, text=True, check=True)
    git(repo, "pack-refs", "--all")
    assert (repo / ".git" / "packed-refs").stat().st_size > plumbing.PACKED_REFS_READ
    found = plumbing.refs_in_files(*NOTES_PATTERNS)
    assert found == plumbing.list_refs(*NOTES_PATTERNS) and len(found) == 2
    sha256 = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(sha256))
    git(sha256, "commit", "-q", "--allow-empty", "-m", "first")
    long_id = git(sha256, "rev-parse", "HEAD")
    git(sha256, "update-ref", "refs/notes/okstra/verdicts", long_id)
    monkeypatch.chdir(sha256)
    assert plumbing.refs_in_files(*NOTES_PATTERNS) == {"refs/notes/okstra/verdicts": long_id}
    git(sha256, "pack-refs", "--all")
    assert plumbing.refs_in_files(*NOTES_PATTERNS) is None
    with plumbing.ObjectReader() as objects:
        assert objects.refs(*NOTES_PATTERNS) == {"refs/notes/okstra/verdicts": long_id}
