"""Shell completion from the command declarations: the answers, and the bash/zsh/fish scripts
run by the real shells (git's own bash completion included)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, okstra
from hypothesis import given
from hypothesis import strategies as st

from okstra_git.cli.completion import candidates
from okstra_git.core import shell
from okstra_git.core.keys import TASK_TYPES
from okstra_git.core.resources import install_folder, okstra_command

GIT_BASH_COMPLETION = Path("/usr/share/bash-completion/completions/git")


def words(line: str) -> list[str]:
    """The words ``candidates`` offers for ``line`` (a trailing space starts a new word)."""
    found = candidates([*line.split(), *([""] if line.endswith(" ") else [])])
    return found if isinstance(found, str) else [word for word, _ in found]


def test_groups_commands_options_and_choices():
    assert words("git-okstra st") == ["stage"]
    assert words("git okstra stage cl") == ["claim"]
    assert words("git -C somewhere okstra stage cl") == ["claim"]
    assert set(words("git okstra hooks run ")) == {"pre-push", "pre-receive", "update"}
    assert words("git okstra task new p:g:i --ty") == ["--type"]
    assert words("git okstra task new p:g:i --type ") == list(TASK_TYPES)
    assert words("git okstra task new p:g:i --type impl") == ["implementation-planning",
                                                              "implementation"]  # fmt: skip
    assert words("git okstra ci check --format j") == ["json", "junit"]
    assert words("git okstra completion ") == ["bash", "zsh", "fish"]
    # Options already given are not offered again, repeatable ones are.
    offered = words("git okstra init --hooks --protect x -")
    assert "--hooks" not in offered and "--protect" in offered and "--json" in offered
    assert words("git-okstra --v") == ["--version"]


def test_paths_remotes_and_task_keys(repo: Path, monkeypatch):
    assert words("git okstra plan validate ") == "file"
    assert words("git okstra demo --dir ") == "dir"
    assert words("git okstra task show p:g:i ") == []  # no second positional
    monkeypatch.chdir(repo)
    git(repo, "remote", "add", "upstream", "https://example.invalid/r.git")
    assert words("git okstra sync up") == ["upstream"]
    for key in ("p:Grp:one", "p:grp:two"):
        assert okstra(repo, "task", "new", key, "--type", "implementation").returncode == 0
    assert sorted(words("git okstra task show ")) == ["p:Grp:one", "p:grp:two"]
    assert words("git okstra stage claim p:grp:t") == ["p:grp:two"]


def test_task_keys_are_kept_for_the_task_refs_names_and_offered_without_pygit2(repo: Path):
    """On every TAB the task refs' names are listed (git for-each-ref) and, while they are the
    ones the kept keys were made for, the keys come without loading pygit2: a task event
    changes no name; a new task does, and the keys are made again (from the task-list index
    when it knows every task's commit, else by the full listing) and kept."""
    from plans import plan_text

    loads = (
        "import sys; from okstra_git.entry import main; main(sys.argv[1:]); "
        "print('pygit2' in sys.modules, file=sys.stderr)"
    )
    line = ["completion", "words", "--", "git-okstra", "task", "show", "p:"]

    def complete() -> tuple[list[str], bool]:
        proc = subprocess.run(
            [sys.executable, "-c", loads, *line], cwd=repo, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        return [row.split("\t")[0] for row in proc.stdout.splitlines()], "True" in proc.stderr

    def ok(*args: str) -> None:
        proc = okstra(repo, *args)
        assert proc.returncode == 0, proc.stderr

    for key in ("p:G:one", "p:g:two"):
        ok("task", "new", key, "--type", "implementation-planning")
    two = ["p:G:one", "p:g:two"]
    assert complete() == (two, True)  # nothing kept yet: the full listing
    cache = repo / ".git" / "okstra-cache"
    assert (cache / "task-keys.txt").is_file() and (cache / "task-list.json").is_file()
    assert complete() == (two, False)
    (repo / "plan.md").write_text(plan_text([(1, [], ["src/a.py"])], 2))
    ok("plan", "submit", "p:g:two", "plan.md")  # a new commit on a task ref: same names
    assert complete() == (two, False)
    ok("task", "new", "p:h:three", "--type", "implementation-planning")
    three = [*two, "p:h:three"]
    assert complete() == (three, True)  # new names, and commits the index lacks
    assert complete() == (three, False)
    (cache / "task-keys.txt").write_text("damaged")
    assert complete() == (three, False)  # the index knows every commit
    (cache / "task-keys.txt").unlink()
    (cache / "task-list.json").write_text("{not json")
    assert complete() == (three, True)  # a damaged cache only costs a TAB its speed
    assert complete() == (three, False)


def test_task_keys_come_by_a_few_stats_while_the_ref_files_stay_the_same(repo: Path, tmp_path):
    """Once the files holding the task refs (packed-refs, the loose refs' folders) are older
    than the file system clock's tick, a TAB stats them instead of running git for-each-ref;
    any change to them (a new task) sends it back to listing the names, and a change made a
    moment ago is not vouched for."""
    import time

    line = ["completion", "words", "--", "git-okstra", "task", "show", "p:"]
    trace = tmp_path / "trace.txt"

    def age() -> None:
        old = time.time() - 60
        for path in [repo / ".git" / "packed-refs", *(repo / ".git/refs/okstra").rglob("*")]:
            if path.is_dir() or path.name == "packed-refs":
                os.utime(path, (old, old))

    def complete() -> tuple[list[str], bool]:
        trace.unlink(missing_ok=True)
        env = {**os.environ, "GIT_TRACE": str(trace)}
        proc = subprocess.run(
            [sys.executable, "-m", "okstra_git", *line],
            cwd=repo,
            capture_output=True,
            text=True,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        listed = trace.exists() and "for-each-ref" in trace.read_text()
        # Kept keys: no git at all (the repository is found by its .git, as git finds it).
        assert listed or not trace.exists(), trace.read_text()
        return [row.split("\t")[0] for row in proc.stdout.splitlines()], listed

    for key in ("p:g:one", "p:h:two"):
        assert okstra(repo, "task", "new", key, "--type", "implementation").returncode == 0
    git(repo, "pack-refs", "--all")
    assert complete() == (["p:g:one", "p:h:two"], True)  # nothing kept yet
    age()
    assert complete() == (["p:g:one", "p:h:two"], True)  # kept now, with the files' mark
    assert complete() == (["p:g:one", "p:h:two"], False)
    assert okstra(repo, "task", "new", "p:g:three", "--type", "implementation").returncode == 0
    assert complete() == (["p:g:one", "p:g:three", "p:h:two"], True)
    age()
    assert complete() == (["p:g:one", "p:g:three", "p:h:two"], True)
    assert complete() == (["p:g:one", "p:g:three", "p:h:two"], False)
    git(repo, "update-ref", "-d", "refs/okstra/tasks/h/two")  # by hand: okstra never deletes
    age()
    assert complete() == (["p:g:one", "p:g:three"], True)


def test_completion_words_is_a_command_with_json(repo: Path):
    proc = okstra(repo, "completion", "words", "--", "git-okstra", "stage", "cl")
    assert proc.returncode == 0
    assert proc.stdout.startswith("claim\tClaim the ready batch")
    assert okstra(repo, "completion", "words", "--", "git-okstra", "plan", "validate",
                  "").stdout == ":file\n"  # fmt: skip


LAUNCH = "import sys; sys.path.insert(0, sys.argv.pop(1)); from okstra_git.entry import main; "
LAUNCH += "sys.exit(main())"
"""The console script's stand-in: this Python, with its site, on okstra_git from the folder
given first (no quote or backslash: fish reads those inside '...')."""


def script(name: str) -> str:
    """The script as printed, calling the code under test (not whatever is on PATH, nor the
    okstra_git an editable install or PYTHONPATH names from another folder)."""
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", "completion", name],
        capture_output=True,
        text=True,
        check=True,
    )
    baked = shell.command(*okstra_command())
    assert baked in proc.stdout  # the script runs the installation that printed it
    return proc.stdout.replace(baked, shell.command(sys.executable, "-c", LAUNCH, install_folder()))


@pytest.mark.parametrize(
    ("name", "check"),
    [("bash", ["bash", "-n"]), ("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])],
)
def test_each_script_passes_its_shells_syntax_check(name: str, check: list[str], tmp_path):
    if shutil.which(check[0]) is None:
        pytest.skip(f"{check[0]} is not installed (apt-get install {check[0]})")
    path = tmp_path / f"okstra.{name}"
    path.write_text(script(name))
    proc = subprocess.run([*check, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


BASH_DRIVER = """
source {git_completion}
eval "$(cat {ours})"
complete_line() {{  # what bash does on TAB: $1 the function, $2 the line, then its words
	local func=$1
	COMP_LINE=$2 COMP_POINT=${{#2}}
	shift 2
	COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMPREPLY=()
	"$func"
	printf '%s|' "${{COMPREPLY[@]}}"
	echo
}}
"""


def bash_words(line: str) -> list[str]:
    """``line`` split as bash splits it for completion (``:`` is a word of its own)."""
    return re.findall(r"[^\s:]+|:", line) + ([""] if line.endswith((" ", ":")) else [])


def test_bash_completes_git_okstra_through_gits_own_completion(repo: Path):
    """`git okstra st<TAB>` through git's completion (which calls _git_okstra), and the
    git-okstra executable; a task key's colons are kept whole."""
    if not GIT_BASH_COMPLETION.is_file():
        pytest.skip(f"git's bash completion is not installed ({GIT_BASH_COMPLETION})")
    assert okstra(repo, "task", "new", "p:grp:two", "--type", "implementation").returncode == 0
    ours = repo.parent / "okstra.bash"
    ours.write_text(script("bash"))
    (repo / "plan.md").write_text("# plan\n")
    cases = {
        "git okstra st": "__git_wrap__git_main",
        "git okstra stage cl": "__git_wrap__git_main",
        "git okstra task new k --type final": "__git_wrap__git_main",
        "git okstra task show p:gr": "__git_wrap__git_main",
        "git-okstra stage cl": "_git_okstra_main",
        "git-okstra plan validate pl": "_git_okstra_main",
        "git-okstra task show p:grp:": "_git_okstra_main",
    }
    driver = BASH_DRIVER.format(git_completion=GIT_BASH_COMPLETION, ours=ours) + "".join(
        f"complete_line {func} {shlex.quote(line)} {shell.command(*bash_words(line))}\n"
        for line, func in cases.items()
    )
    proc = subprocess.run(["bash", "-c", driver], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "stage |",  # git's completion runs -o nospace: whole words carry their space
        "claim |",
        "final-verification |",
        "grp:two |",  # bash replaces only the word after the last ':'
        "claim|",
        "plan.md|",
        "two|",
    ]


def test_fish_completes_git_okstra(tmp_path: Path):
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed (apt-get install fish)")
    ours = tmp_path / "okstra.fish"
    ours.write_text(script("fish"))
    proc = subprocess.run(
        ["fish", "--no-config", "-c",
         f"source {ours}; complete -C 'git-okstra stage cl'; complete -C 'git okstra st'"],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("claim\tClaim the ready batch"), lines
    assert any(line.startswith("stage\tStage claims") for line in lines), lines


def test_kept_keys_are_picked_by_their_first_letters_in_any_order():
    """A TAB's prefix finds its keys in the kept block's bytes, wherever they are in it."""
    from okstra_git.records.taskindex import _keys

    block = "p:h:two\np:g:one\nq:x:é\np:g:three\n".encode()
    assert _keys(block) == ["p:h:two", "p:g:one", "q:x:é", "p:g:three"]
    assert _keys(block, "p:g:") == ["p:g:one", "p:g:three"]
    assert _keys(block, "p:h") == ["p:h:two"]
    assert _keys(block, "q:x:é") == ["q:x:é"]
    assert _keys(block, "g:") == [] and _keys(b"", "p") == []
    assert _keys(block[:-1], "p:g:th") == ["p:g:three"]  # no newline after the last
    assert _keys(b"p:\xff\n", "p") is None  # not UTF-8: not the kept file's


SHELL_WORDS = {  # run the script's __git_okstra_words on the words after the script's path
    "bash": ["bash", "-c", 'source "$1"; shift; __git_okstra_words "$@"', "bash"],
    "zsh": ["zsh", "-fc", 'compdef() { :; }; source "$1"; shift; __git_okstra_words "$@"', "zsh"],
    "fish": ["fish", "--no-config", "-c", "source $argv[1]; __git_okstra_words $argv[2..]"],
}


def shell_words(name: str, text: str, where: Path, marker: Path, *line: str) -> tuple[str, bool]:
    """What the ``name`` script's words function prints for ``line`` in ``where``, and whether
    the Python it started loaded its site (a ``sitecustomize`` on PYTHONPATH leaves
    ``marker``). PYTHONPATH is that folder alone: one of the suite's own (a checkout) would
    hand the site-less Python an okstra_git the script does not name."""
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed (apt-get install {name})")
    path = where.parent / f"okstra.{name}"
    path.write_text(text)
    custom = marker.parent / "custom"
    custom.mkdir(exist_ok=True)
    (custom / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').close()\n")
    marker.unlink(missing_ok=True)
    proc = subprocess.run(
        [*SHELL_WORDS[name], str(path), *line],
        cwd=where,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(custom)},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, marker.exists()


@pytest.mark.parametrize("name", ["bash", "zsh", "fish"])
def test_a_tab_starts_python_without_its_site_and_falls_back_to_the_console_script(
    name: str, repo: Path, tmp_path: Path
):
    """A TAB runs ``completion words`` on the Python that printed the script, without its site
    (the .pth files) or the console script's imports; the first time, with nothing kept, the
    full listing loads site to find pygit2. When that Python is gone,
    or okstra_git is not in the folder named, the console script answers."""
    assert okstra(repo, "task", "new", "p:grp:two", "--type", "implementation").returncode == 0
    text = script(name)
    marker = tmp_path / "site-was-loaded"
    line = ("git-okstra", "task", "show", "p:gr")
    # Nothing kept yet: the full listing loads site for pygit2. Then the kept keys, without.
    assert shell_words(name, text, repo, marker, *line) == ("p:grp:two\ttask\n", True)
    assert shell_words(name, text, repo, marker, *line) == ("p:grp:two\ttask\n", False)
    assert shell_words(name, text, repo, marker, "git-okstra", "stage", "cl")[0].startswith(
        "claim\tClaim the ready batch"
    )
    python, folder = shlex.quote(sys.executable), shlex.quote(install_folder())
    assert f"{python} -S -P -c " in text and f" {folder} completion words" in text
    nothing = shlex.quote(str(tmp_path / "no-python"))
    gone = text.replace(f"-x {python}", f"-x {nothing}").replace(f"{python} -S", f"{nothing} -S")
    assert shell_words(name, gone, repo, marker, *line) == ("p:grp:two\ttask\n", True)
    (tmp_path / "empty").mkdir()
    moved = text.replace(f" {folder} completion words", f" {tmp_path / 'empty'} completion words")
    assert moved != text
    assert shell_words(name, moved, repo, marker, *line) == ("p:grp:two\ttask\n", True)


@given(
    keys=st.lists(st.text(alphabet="ab:é", min_size=1, max_size=4), max_size=8),
    ordered=st.booleans(),
    cut=st.booleans(),
    prefix=st.text(alphabet="ab:é\n", min_size=1, max_size=3),
)
def test_kept_keys_by_prefix_are_those_a_filter_finds(keys, ordered, cut, prefix):
    """Sorted (as kept) the keys of a prefix are one run of lines, cut out whole; in any
    other order, found one by one: the same keys either way, in the block's order."""
    from okstra_git.records.taskindex import _keys

    keys = sorted(keys) if ordered else keys
    block = "".join(f"{key}\n" for key in keys).encode()
    block = block[:-1] if cut else block
    assert _keys(block, prefix) == [key for key in keys if key.startswith(prefix)]
