"""The command line as declared in ``okstra_git/cli/``: every declaration is complete, help
reads well, usage errors are one line, and ``--json`` gives exactly one object on stdout —
for every command, on failure too. The commands are iterated from the declarations, so a new
command is checked without anyone adding it here."""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, make_repo, okstra
from verify_world import KEY, make_world

from okstra_git import cli, entry
from okstra_git.cli import declare, dispatch
from okstra_git.core.errors import Refused
from okstra_git.core.keys import TASK_TYPES
from okstra_git.views import Output, dump

COMMANDS = declare.load_all()
NAMES = [cmd.name for cmd in COMMANDS]
FRAMEWORK = {"__init__", "declare", "dispatch", "helptext", "manpage"}
"""Modules of okstra_git/cli/ that declare no commands."""


def run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = entry.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_command_pauses_the_cycle_collector_and_resumes_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """The collector is off while a command runs (its passes cost a read command ~3 ms) and
    back on for an in-process caller afterwards, however the command ended."""
    import gc

    seen = []
    monkeypatch.setattr(
        dispatch, "dispatch", lambda args, as_json: seen.append(gc.isenabled()) or 0
    )
    assert gc.isenabled() and run("task", "list", capsys=capsys)[0] == 0
    assert seen == [False] and gc.isenabled()

    def refuse(args: list[str], as_json: bool) -> int:
        raise Refused("no")

    monkeypatch.setattr(dispatch, "dispatch", refuse)
    assert run("task", "list", capsys=capsys)[0] == 1 and gc.isenabled()


def test_every_group_module_is_listed_and_declares_commands():
    folder = Path(cli.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - FRAMEWORK
    assert modules == set(cli.GROUP_MODULES)
    assert {cmd.path[0] for cmd in COMMANDS} == set(cli.GROUP_MODULES)


@pytest.mark.parametrize("cmd", COMMANDS, ids=NAMES)
def test_the_declaration_is_complete(cmd: declare.Command):
    """Help on every argument, KEY-style placeholders, handler parameters = the arguments."""
    assert cmd.help and "\n" not in cmd.help
    for arg in cmd.all_args:
        assert arg.help.strip(), (cmd.name, arg.name)
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*|auto\|N", arg.placeholder), arg.placeholder
        assert arg.complete in ("", "task", "file", "dir", "remote"), arg.complete
        if arg.choices and arg.default is not None:
            assert arg.default in arg.choices
    names = [a.name for a in cmd.all_args]
    assert len(names) == len(set(names)), names
    params = list(inspect.signature(cmd.handler).parameters)
    assert params == [a.key for a in cmd.args], cmd.name


@pytest.mark.parametrize("cmd", COMMANDS, ids=NAMES)
def test_command_help_documents_every_argument(cmd: declare.Command, capsys):
    code, out, err = run(*cmd.path, "-h", capsys=capsys)
    assert (code, err) == (0, "")
    assert out.startswith(f"usage: git okstra {cmd.name}")
    flat = " ".join(out.split())
    for arg in cmd.all_args:
        assert arg.spelling in out, arg.name
        assert " ".join(arg.help.split()) in flat, arg.name
        for choice in arg.choices:
            assert choice in flat
    assert not re.search(r"\{\w+\}|<str>|<list|\[x>=|required\]", out), out


def test_type_lists_the_six_task_types(capsys):
    code, out, _ = run("task", "new", "--help", capsys=capsys)
    assert code == 0
    assert f"One of: {', '.join(TASK_TYPES)}." in " ".join(out.split())


def test_root_and_group_help_list_the_commands(capsys):
    code, out, _ = run("-h", capsys=capsys)
    assert code == 0 and out.startswith("usage: git okstra COMMAND")
    for name in NAMES:
        assert f"  {name} " in out or f"  {name}\n" in out, name
    code, out, _ = run("stage", "--help", capsys=capsys)
    assert code == 0 and "stage claim" in out and "task new" not in out
    code, out, _ = run("hooks", "run", "-h", capsys=capsys)
    assert code == 0 and "hooks run update" in out and "hooks install" not in out
    # A bare group or no command at all is incomplete usage: the help, exit 2.
    assert run("stage", capsys=capsys)[:2] == (2, run("stage", "-h", capsys=capsys)[1])
    assert run(capsys=capsys)[0] == 2


def test_version_is_the_package_version_its_metadata_carries(capsys):
    from importlib.metadata import version

    from okstra_git import __version__

    assert version("okstra-git") == __version__  # pyproject.toml takes it from the package

    for flag in ("--version", "-V"):
        assert run(flag, capsys=capsys) == (0, f"okstra-git {version('okstra-git')}\n", "")
    out = run("--version", "--json", capsys=capsys)[1]
    assert json.loads(out) == {"ok": True, "version": version("okstra-git")}


def test_json_may_come_before_the_command_words(tmp_path: Path, capsys):
    """As a global option (``git -C DIR status``): the same output as after the words, and
    what follows ``--`` stays an argument."""
    from plans import plan_text

    plan = tmp_path / "plan.md"
    plan.write_text(plan_text([(1, [], ["src/a.py"])], 2))
    after = run("plan", "validate", str(plan), "--json", capsys=capsys)
    assert after[0] == 0 and json.loads(after[1])["ok"] is True
    assert run("--json", "plan", "validate", str(plan), capsys=capsys) == after
    assert run("--json", "--version", capsys=capsys) == run("--version", "--json", capsys=capsys)
    code, out, err = run("--json", "plan", "validate", "--", "--json", capsys=capsys)
    assert code == 2 and json.loads(out)["ok"] is False and "--json" in err


USAGE_ERRORS = [
    ("stage claim", "stage claim: the following arguments are required: KEY", "stage claim"),
    ("task new p:g:i --type nope", "task new: --type 'nope': expected one of", "task new"),
    ("stage done k --stage two", "stage done: --stage 'two': expected a stage", "stage done"),
    ("verify show --bogus", "verify show: unrecognized arguments: --bogus", "verify show"),
    ("stag", "'stag' is not a git okstra command; did you mean 'stage'?", ""),
    ("stage clam", "stage: 'clam' is not a git okstra stage command; did you mean", "stage"),
    ("hooks run", "hooks run: which command? one of pre-push, pre-receive, update", "hooks run"),
]


@pytest.mark.parametrize(("line", "message", "hint"), USAGE_ERRORS)
def test_usage_errors_are_one_line_with_the_help_command(line, message, hint, capsys):
    """One line naming the command, exit 2; the hint (its own line) is the help to read."""
    code, out, err = run(*line.split(), "--json", capsys=capsys)
    first, second = err.splitlines()
    assert code == 2 and first.startswith(f"git okstra: {message}")
    assert second == " ".join(["hint: git okstra", *hint.split(), "-h"])
    expected = {"ok": False, "exitCode": 2, "hint": second.removeprefix("hint: ")}
    assert json.loads(out) == {**expected, "error": first.removeprefix("git okstra: ")}
    if line != "hooks run":  # without --json, a bare group prints its help instead
        assert run(*line.split(), capsys=capsys) == (2, "", err)


# -- the quick parser agrees with argparse ---------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _words(cmd: declare.Command) -> st.SearchStrategy[list[str]]:
    """Command lines made of the command's own options, values, positional words and the
    words argparse treats specially."""
    options = [name for arg in cmd.all_args if not arg.positional for name in arg.names]
    valued = [arg.name for arg in cmd.all_args if not arg.positional and not arg.flag]
    tricky = ["", "-", "--", "-1", "--bogus", "a=b", "--json=1", "-h x", "two words"]
    plain = st.sampled_from(["x", "y", "z"])
    return st.lists(
        plain | st.sampled_from([*options, *(f"{name}=v" for name in valued), *tricky]),
        max_size=7,
    )


def _argparse(cmd: declare.Command, rest: list[str]) -> dict[str, object] | str:
    try:
        namespace = dispatch._parser(cmd).parse_args(rest)
    except dispatch.BadInput as exc:
        return f"error: {exc}"
    return {arg.key: getattr(namespace, arg.key) for arg in cmd.all_args}


def _normal(given: dict[str, object]) -> dict[str, object]:
    """An absent repeated argument is None to argparse and [] to the quick parser: the handler
    gets [] from both."""
    return {key: value or [] if isinstance(value, list) else value for key, value in given.items()}


@pytest.mark.parametrize("cmd", COMMANDS, ids=NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_quick_parser_answers_as_argparse_or_not_at_all(cmd: declare.Command, data):
    rest = data.draw(_words(cmd))
    quick = dispatch.quick_parse(cmd, rest)
    if quick is not None:
        parsed = _argparse(cmd, rest)
        assert isinstance(parsed, dict), (rest, parsed)
        assert _normal(quick) == _normal(parsed), rest


def test_the_quick_parser_takes_plain_lines():
    """The lines hooks and agents type never need argparse."""
    plain = {
        ("hooks", "run", "pre-push"): ["origin", "https://example.invalid/r.git"],
        ("stage", "claim"): ["p:g:i", "--stage", "2", "--lease=2h", "--json"],
        ("task", "list"): ["--json"],
        ("ci", "check"): ["HEAD", "--format", "junit"],
    }
    for path, rest in plain.items():
        assert dispatch.quick_parse(declare.COMMANDS[path], rest) is not None, path
    # argparse fills both optional positionals from the first run of words, then refuses "y"
    assert (
        dispatch.quick_parse(declare.COMMANDS["hooks", "run", "pre-push"], ["x", "--json", "y"])
        is None
    )


# -- --json on every command, on failure -----------------------------------------------------


def _failing_argv(cmd: declare.Command, tmp: Path) -> list[str]:
    """Arguments that make ``cmd`` fail outside a repository (or on a missing file)."""
    special = {
        ("demo",): ["--dir", str(tmp)],  # not empty: refused
        ("hooks", "run", "update"): ["refs/heads/main", "0" * 40, "1" * 40],
        ("completion",): ["tcsh"],  # not a shell it knows
        ("docs",): ["no-such-document"],  # not a document it ships (none: it lists them)
        ("mcp",): ["--print-config", "emacs"],  # not a host it knows (else it serves stdin)
        ("completion", "words"): ["ls"],  # not a git okstra command line
        ("wizard", "start"): ["--state-file", str(tmp / "no-such-folder" / "state.json")],
    }
    if cmd.path in special:
        return [*cmd.path, *special[cmd.path]]
    argv = list(cmd.path)
    for arg in cmd.args:
        if not (arg.positional and arg.needed) and not arg.required:
            continue
        value = (
            arg.choices[0]
            if arg.choices
            else {"KEY": "p:g:i", "N": "1", "FILE": "missing.md", "REPORT": "missing.md"}.get(
                arg.placeholder, "x"
            )
        )
        argv += [value] if arg.positional else [arg.name, value]
    return argv


@pytest.mark.parametrize("cmd", COMMANDS, ids=NAMES)
def test_every_command_fails_with_one_json_object(cmd: declare.Command, tmp_path: Path):
    """Outside a repository (or on a missing file, a non-empty demo folder, garbage on a
    hook's stdin, an unknown shell) every command fails; with --json stdout holds exactly one
    object."""
    (tmp_path / "occupied").write_text("x")
    argv = [*_failing_argv(cmd, tmp_path), "--json"]
    env = {**os.environ, "OKSTRA_DEBUG": "", "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    proc = okstra(tmp_path, *argv, input="garbage\n", env=env)
    assert proc.returncode in (1, 2, 3), (argv, proc.returncode, proc.stderr)
    data = json.loads(proc.stdout)  # the whole of stdout: one object and nothing else
    assert isinstance(data, dict), proc.stdout
    assert data["ok"] is False and data["exitCode"] == proc.returncode, data
    assert isinstance(data["error"], str) and data["error"].strip(), data
    assert "hint" in data and "internal error" not in data["error"], data
    assert proc.stderr.strip(), "the human message still goes to stderr"


def probe(monkeypatch: pytest.MonkeyPatch, name: str, handler: Callable[[], Output]) -> None:
    """Declare ``git okstra task NAME`` for one test."""
    path = ("task", name)
    monkeypatch.setitem(declare.COMMANDS, path, declare.Command(path, "A probe.", (), handler))


def test_a_refusal_with_a_hint_shows_it(capsys, monkeypatch):
    """OkstraError.hint: its own line in text mode, "hint" in --json."""

    def handler() -> Output:
        raise Refused("not now", hint="git okstra task show p:g:i")

    probe(monkeypatch, "probe", handler)
    assert run("task", "probe", capsys=capsys) == (
        1,
        "",
        "git okstra: not now\nhint: git okstra task show p:g:i\n",
    )
    out = run("task", "probe", "--json", capsys=capsys)[1]
    hint = "git okstra task show p:g:i"
    assert json.loads(out) == {"ok": False, "error": "not now", "exitCode": 1, "hint": hint}


def test_under_json_a_handler_printing_cannot_break_stdout(capsys, monkeypatch):
    def handler() -> Output:
        print("chatter")
        return Output({"n": 1}, "text")

    probe(monkeypatch, "probe", handler)
    code, out, err = run("task", "probe", "--json", capsys=capsys)
    assert (code, json.loads(out), err) == (0, {"n": 1, "ok": True}, "chatter\n")
    assert run("task", "probe", capsys=capsys) == (0, "chatter\ntext\n", "")


@pytest.mark.parametrize("as_json", [False, True])
def test_interrupt_is_130_and_internal_errors_keep_tracebacks_on_demand(
    as_json, capsys, monkeypatch
):
    def interrupted() -> Output:
        raise KeyboardInterrupt

    def broken() -> Output:
        raise ZeroDivisionError("boom")

    flag = ["--json"] if as_json else []
    for name, handler in (("interrupted", interrupted), ("broken", broken)):
        probe(monkeypatch, name, handler)
    code, out, _ = run("task", "interrupted", *flag, capsys=capsys)
    assert code == 130 and (json.loads(out)["exitCode"] == 130 if as_json else out == "")
    monkeypatch.setenv("OKSTRA_DEBUG", "")
    code, out, err = run("task", "broken", *flag, capsys=capsys)
    assert code == 2 and "internal error (ZeroDivisionError: boom)" in err
    assert json.loads(out)["error"].startswith("internal error") if as_json else out == ""
    monkeypatch.setenv("OKSTRA_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        entry.main(["task", "broken", *flag])


# -- what each command imports ----------------------------------------------------------------


def loaded(cwd: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "okstra_git", *argv],
        cwd=cwd,
        text=True,
        capture_output=True,
    )
    names = {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
    return proc, {name.split(".")[0] for name in names} | names


WRITE_SIDE = {
    "okstra_git.services.sync.engine",
    "okstra_git.services.sync.reconcile",
    "okstra_git.logic.replay",
    "okstra_git.services.claims",
    "okstra_git.services.worktrees",
    "okstra_git.services.runs",
    "okstra_git.records.run",
    "subprocess",
}
"""What no read command loads: writing, syncing and provisioning (each once came in through an
import at module level; their dataclasses and regexes were most of a read's start-up)."""
NO_PLAN = {
    "okstra_git.services.plans",
    "okstra_git.logic.clarify",
    "okstra_git.logic.stagemap",
    "hashlib",
}
"""The approval gate and the Stage Map parser: only for the commands that judge a plan."""
NOT_LOADED = {
    ("task", "show"): WRITE_SIDE | NO_PLAN | {"okstra_git.services.tasks", "datetime"},
    ("task", "list"): WRITE_SIDE | NO_PLAN | {"datetime"},
    ("stage", "ready"): WRITE_SIDE,
    ("stage", "list"): WRITE_SIDE | NO_PLAN | {"datetime"},
    ("verify", "target"): WRITE_SIDE
    | {"okstra_git.services.plans", "okstra_git.logic.clarify", "hashlib", "datetime"},
    ("verify", "show"): WRITE_SIDE | NO_PLAN | {"datetime"},
    ("plan", "status"): WRITE_SIDE,
    ("plan", "show"): WRITE_SIDE
    | {"okstra_git.services.plans", "okstra_git.logic.clarify", "datetime"},
}


def _with_dataclasses(names: set[str]) -> list[str]:
    """The okstra modules among ``names`` that declare a dataclass: each costs ~0.4 ms to
    build at import (values.Value and values.Record do not)."""
    root = Path(__file__).resolve().parents[2]
    found = []
    for name in sorted(n for n in names if n.startswith("okstra_git.")):
        path = root.joinpath(*name.split("."))
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if source.exists() and re.search(r"^@dataclass", source.read_text("utf-8"), re.M):
            found.append(name)
    return found


def test_read_commands_stay_lean(tmp_path: Path):
    """Agents poll these: with --json none loads jinja2 or jsonschema, and plan validate and
    clarify status (files alone), and ci check, task show, task list, stage ready, stage list,
    verify target, verify show, plan status and plan show (git's plumbing, issue 25) do not
    load pygit2; none loads
    what NOT_LOADED names for it, nor a module that declares a dataclass; nor does the text of
    task show and verify target load jinja2. Each really ran (its output is there)."""
    repo = make_repo(tmp_path / "repo")
    world = make_world(repo, 2)
    world.do_stage(1)
    head = world.do_stage(2)
    world.merge(1, 2)
    assert okstra(repo, "plan", "approve", KEY).returncode == 0
    reads = [
        ("task", "show", KEY),
        ("task", "list"),
        ("stage", "ready", KEY),
        ("stage", "list", KEY),
        ("verify", "target", KEY),
        ("verify", "show", head),
        ("plan", "status", KEY),
        ("plan", "show", KEY),
        ("plan", "validate", "docs/plan.md"),
        ("clarify", "status", "docs/plan.md"),
        ("ci", "check"),
    ]
    for argv in reads:
        proc, names = loaded(repo, *argv, "--json")
        assert "ok" in json.loads(proc.stdout), (argv, proc.stdout)
        assert not {"jinja2", "jsonschema", "typer", "click", "pydantic", "mcp"} & names, argv
        assert not NOT_LOADED.get(argv[:2], set()) & names, (argv, NOT_LOADED[argv[:2]] & names)
        # task list's own records are tuned for 100k tasks (bench_tasks), where they are built
        # per task: left to that bench.
        tuned = {"okstra_git.services.tasks", "okstra_git.records.taskindex"}
        assert not _with_dataclasses(names - tuned), (argv, _with_dataclasses(names - tuned))
        wanted = {"pygit2"} <= names  # ci check reads through git's plumbing, as the hook does
        lean = (("plan", "validate"), ("clarify", "status"), ("ci", "check"), ("task", "show"))
        lean += (("stage", "ready"), ("stage", "list"), ("verify", "target"), ("verify", "show"))
        lean += (("plan", "status"), ("plan", "show"), ("task", "list"))
        assert wanted == (argv[:2] not in lean), argv
    for argv in (("task", "show", KEY), ("verify", "target", KEY)):
        proc, names = loaded(repo, *argv)
        assert proc.returncode == 0 and proc.stdout.strip(), (argv, proc.stderr)
        assert "jinja2" not in names, argv
        # The text's next step asks whose each claim is (services/ownership.py), which once
        # loaded the claim, done and release machinery through the claims package.
        assert not WRITE_SIDE & names, (argv, WRITE_SIDE & names)
    proc, names = loaded(repo, "--help")
    # --help loads every group module, cli/mcp.py too: the MCP SDK only when it serves.
    assert proc.returncode == 0 and not {"pygit2", "jinja2", "jsonschema", "mcp", "anyio"} & names
    git(repo, "status")  # the repository is still usable


def test_a_claim_on_this_clone_loads_no_sync_engine(tmp_path: Path):
    """``stage claim --no-worktree`` with no task branch yet (so it works out where the task
    worktree would start, from the remote-tracking refs): sync, reconcile and replay, and
    the subprocess module, stay unloaded. ``task_start`` once imported ``tracking_name``
    through ``services.sync``, a third of a claim's start-up."""
    from plans import plan_text

    from okstra_git.services import plans, tasks
    from okstra_git.services.context import open_context

    repo = make_repo(tmp_path / "repo")
    ctx = open_context(repo)
    key = ctx.key(KEY)
    tasks.new_task(ctx, key, "implementation-planning", "feature", None)
    (repo / "plan.md").write_text(plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])]))
    plans.submit_plan(ctx, key, str(repo / "plan.md"))
    assert okstra(repo, "plan", "approve", KEY).returncode == 0
    proc, names = loaded(repo, "stage", "claim", KEY, "--no-worktree", "--json")
    assert json.loads(proc.stdout)["stages"] == [1, 2], proc.stderr
    syncing = {
        "okstra_git.services.sync.engine",
        "okstra_git.services.sync.reconcile",
        "okstra_git.logic.replay",
    }
    assert not (syncing | {"subprocess"}) & names


# -- the man page -----------------------------------------------------------------------------

MAN_PAGE = Path(__file__).resolve().parents[2] / "man" / "git-okstra.1"


def test_the_committed_man_page_is_the_generated_one():
    """Regenerate with: python -m okstra_git.cli.manpage > man/git-okstra.1"""
    from okstra_git.cli import manpage

    page = manpage.render()
    assert MAN_PAGE.read_bytes() == page.encode("utf-8"), "the man page is stale: regenerate it"
    for cmd in COMMANDS:
        assert f"\\fBgit okstra {manpage._escape(cmd.name)}\\fR" in page, cmd.name
        for arg in cmd.args:
            assert manpage._escape(arg.name if not arg.positional else arg.placeholder) in page


@pytest.mark.skipif(not (shutil.which("man") and shutil.which("groff")), reason="no man/groff")
def test_git_okstra_help_shows_the_page_from_a_prefix_on_path(tmp_path: Path):
    """Where the wheel puts it (<prefix>/share/man/man1) man-db finds it from a bin/ on PATH,
    with MANPATH unset: `git okstra --help` (git runs `man git-okstra`) shows it, and groff
    renders it without a warning."""
    lint = subprocess.run(
        ["groff", "-man", "-ww", "-z", "-k", str(MAN_PAGE)],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    assert (lint.returncode, lint.stderr) == (0, "")
    (tmp_path / "share" / "man" / "man1").mkdir(parents=True)
    shutil.copy(MAN_PAGE, tmp_path / "share" / "man" / "man1" / "git-okstra.1")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "git-okstra").write_text(
        f'#!/bin/sh\nexec {sys.executable} -m okstra_git "$@"\n'
    )
    (tmp_path / "bin" / "git-okstra").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
    env.update(
        PATH=f"{tmp_path / 'bin'}:{env['PATH']}", MANPAGER="cat", PAGER="cat", MANWIDTH="100"
    )
    proc = subprocess.run(["git", "okstra", "--help"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "GIT-OKSTRA(1)" in proc.stdout and "git okstra stage claim KEY" in proc.stdout


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=6)
    | st.dictionaries(st.none() | st.integers(), st.integers(), max_size=2),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=25,
)


@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=5))
def test_json_output_is_exactly_what_json_would_write(data: dict) -> None:
    """views.dump writes indented JSON itself (for speed): byte for byte json.dumps's, and
    the same TypeError for what json cannot write (keys it cannot sort, other objects)."""

    def outcome(write: Callable[[], str]) -> str:
        try:
            return write()
        except TypeError:
            return "TypeError"

    expected = outcome(lambda: json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))
    assert outcome(lambda: dump(data)) == (expected if expected == "TypeError" else expected + "\n")
    with pytest.raises(TypeError):
        dump({"a": [object()]})
