"""Declaring ``git okstra`` commands: one declaration per command drives argparse parsing,
``-h`` help, the man page (``manpage.py``) and shell completion (``completion.py``).

How to declare a command
------------------------
A group of commands is one module, ``okstra_git/cli/<group>.py``, named in
``okstra_git.cli.GROUP_MODULES`` (the order help lists them in). It only parses, calls a
service and formats output. Import services *inside* handlers: running a command imports only
its group's module, and ``--help`` imports them all, so module level stays cheap::

    from ..errors import BadInput
    from ..views import Output
    from .declare import KEY, Arg, command, group

    group("report", "Reports: the canonical Markdown and HTML views of a run's data.")


    @command(
        "report render",                       # group, then the command's name
        "Write the canonical Markdown and the HTML view of a report.",   # one line
        Arg("data", "The report data (data.json).", metavar="DATA", complete="file"),
        Arg("--lang", "The label language.", metavar="LANG", choices=("ko", "en"), default="en"),
        KEY,                                   # shared declarations: KEY, STAGE, ...
        about="Longer description; paragraphs separated by blank lines.",
    )
    def render(data: str, lang: str, key: str) -> Output:
        from ..services import reports        # inside the handler: keeps the group cheap

        done = reports.render(data, lang)     # raises BadInput (exit 2) / Refused (exit 1)
        return Output({"markdown": done.markdown}, f"wrote {done.markdown}")

- A name starting with ``-`` is an option, else a positional. The handler gets one keyword
  argument per ``Arg`` (its ``key``: the name without dashes, ``-`` → ``_``, or ``dest=``).
- ``metavar`` is the placeholder help shows (KEY, PATH, N; default: the name upper-cased);
  ``choices`` are checked and listed in help and completion; ``default`` is shown;
  ``flag=True`` makes a switch (False/True); ``repeat=True`` collects a list;
  ``required=True`` for options, ``optional=True`` for positionals; ``convert`` turns the text
  into a value and raises ``ValueError`` saying what was expected (the CLI names the option).
- ``--json`` is added to every command: the CLI prints ``Output.data`` plus ``"ok": true``.
  A refusal or error gives ``{"ok": false, "error", "exitCode", "hint"}``: raise ``BadInput``,
  ``Refused`` or ``Conflict`` (``hint=`` the command that fixes it, built with
  ``okstra_git.core.shell``), or return ``Output(..., code=1, error=...)`` for an expected "no"
  that still prints its data. During the handler stdout is stderr under ``--json``, so a
  stray ``print`` can never break the one JSON object.
- ``Output.text`` may be a callable: it runs only without ``--json`` (e.g. Jinja rendering).
- After adding or changing a declaration, regenerate the committed man page:
  ``python -m okstra_git.cli.manpage > man/git-okstra.1``. ``tests/test_cli.py`` checks every
  declaration (help on every argument, handler parameters = the arguments, a ``--json``
  failure of every command, the man page current); completion needs nothing more.
"""

from __future__ import annotations

import os
import sys

from ..core.errors import BadInput, Refused
from ..core.values import Value
from ..views import Output, dump

# Every command starts here, the pre-push hook too: ``typing`` (~3 ms with what it pulls in) is
# for the type checker only, and argparse is loaded only for a command line the quick parser
# leaves to it (an error, ``--``, an option value starting with ``-``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from datetime import timedelta
    from typing import Any, TextIO

PROG = "git okstra"
WIDTH = 100
"""Help is wrapped to this many columns, or to a narrower terminal's width."""
_COLUMN = 25
"""Where argument and command help starts in ``-h`` listings."""


class Arg(Value):
    """One positional argument or option of a command.

    ``name``: ``key`` for a positional, ``--stage`` for an option. ``help``: one or two
    sentences (choices and the default are appended by the help printer). ``metavar``: the
    placeholder in help (KEY, PATH, N; default: the name upper-cased). ``choices``: the values
    accepted, checked before the handler runs. ``default``: the value when not given (None:
    absent). ``flag``: an option without a value (False, or True when given). ``repeat``: may
    be given several times, the handler gets a list. ``required``: an option that must be
    given. ``optional``: a positional that may be left out. ``convert``: text → value, raising
    ValueError saying what was expected. ``dest``: the handler's parameter name when the
    option's is not a good one. ``complete``: what shell completion offers: ``task`` (task
    keys), ``file``, ``dir`` or ``remote``. ``short``: a one-letter spelling of a flag (``-v``
    for ``--verbose``), as git's commands have.
    """

    name: str
    help: str
    metavar: str = ""
    choices: tuple[str, ...] = ()
    default: Any = None
    flag: bool = False
    repeat: bool = False
    required: bool = False
    optional: bool = False
    convert: Callable[[str], Any] | None = None
    dest: str = ""
    complete: str = ""
    short: str = ""

    def __repr__(self) -> str:
        return f"Arg({self.name!r})"

    @property
    def positional(self) -> bool:
        return not self.name.startswith("-")

    @property
    def key(self) -> str:
        """The handler's keyword argument."""
        return self.dest or self.name.lstrip("-").replace("-", "_")

    @property
    def placeholder(self) -> str:
        return self.metavar or self.name.lstrip("-").replace("-", "_").upper()

    @property
    def needed(self) -> bool:
        return not self.optional if self.positional else self.required

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling of an option: its name, and its short one if it has one."""
        return (self.short, self.name) if self.short else (self.name,)

    @property
    def spelling(self) -> str:
        """How help names it: ``KEY``, ``--force``, ``-v, --verbose``, ``--stage N``."""
        if self.positional:
            return self.placeholder
        return ", ".join(self.names) if self.flag else f"{self.name} {self.placeholder}"

    def usage(self) -> str:
        if self.positional:
            word = self.placeholder + ("..." if self.repeat else "")
        else:
            word = self.name if self.flag else f"{self.name} {self.placeholder}"
        return word if self.needed else f"[{word}]"

    def full_help(self) -> str:
        """The help text with the choices, the default and repeatability spelled out."""
        parts = [self.help]
        if self.choices:
            parts.append(f"One of: {', '.join(self.choices)}.")
        if self.default is not None and not self.flag:
            parts.append(f"Default: {self.default}.")
        if self.repeat and not self.positional:
            parts.append("Repeatable.")
        return " ".join(parts)


JSON = Arg(
    "--json",
    "Print one JSON object on stdout and nothing else there; on failure "
    '{"ok": false, "error": …, "exitCode": N, "hint": …}.',
    flag=True,
    dest="as_json",
)
"""Added to every command by the framework (handlers never see it)."""
KEY = Arg(
    "key",
    "The task: project:group:id, or group:id within okstra.projectId.",
    complete="task",
)
"""The task key positional most commands take."""


class Command(Value):
    """One ``git okstra`` command."""

    path: tuple[str, ...]
    """Its words: ``("stage", "claim")``, or ``("init",)`` for a command without a group."""
    help: str
    """One line."""
    args: tuple[Arg, ...]
    """In declaration order (``--json`` is added by the framework)."""
    handler: Callable[..., Output]
    """Called with one keyword argument per ``Arg``."""
    about: str = ""
    """More paragraphs for ``-h`` and the man page."""

    def __repr__(self) -> str:
        return f"Command({self.name!r})"

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def all_args(self) -> tuple[Arg, ...]:
        return (*self.args, JSON)

    def usage(self) -> str:
        return " ".join([PROG, self.name, *(arg.usage() for arg in self.all_args)])


class Group(Value):
    """A group of commands (one module): ``task``, ``stage``…, with its help."""

    name: str
    help: str
    about: str = ""


GROUPS: dict[str, Group] = {}
COMMANDS: dict[tuple[str, ...], Command] = {}


def group(name: str, help: str, about: str = "") -> None:
    """Declare a group; its commands are declared with ``command("NAME CMD", …)``."""
    GROUPS[name] = Group(name, help, about)


def command(
    path: str, help: str, *args: Arg, about: str = ""
) -> Callable[[Callable[..., Output]], Callable[..., Output]]:
    """Declare the decorated function as the handler of ``git okstra PATH``."""

    def declare(handler: Callable[..., Output]) -> Callable[..., Output]:
        words = tuple(path.split())
        assert all(arg.flag for arg in args if arg.short), "only a flag has a short spelling"
        COMMANDS[words] = Command(words, help, args, handler, about)
        return handler

    return declare


# The converters of options: the strict parsers (ASCII digits only, bounded; their ValueError
# says what was expected), imported when a value is converted — not to declare a command.


def number(text: str) -> int:
    """A stage number."""
    from ..core.strict import stage_number

    return stage_number(text)


def auto_or_number(text: str) -> int | None:
    """``auto`` (``None``) or a stage number."""
    from ..core.strict import stage_choice

    return stage_choice(text)


def duration(text: str) -> timedelta:
    """A duration such as ``90m`` or ``2h``."""
    from ..core.strict import duration

    return duration(text)


def lease(text: str) -> timedelta | str:
    """A lease: a duration, or ``none`` (kept as the word: no lease, said explicitly)."""
    from ..core.strict import NO_LEASE
    from ..core.strict import lease as parse_lease

    return parse_lease(text) or NO_LEASE


def run_seq(text: str) -> str:
    """A run number such as ``001``."""
    from ..core.strict import run_seq

    return run_seq(text)


# -- loading ----------------------------------------------------------------------------------


def load(word: str) -> bool:
    """Import the group module ``word`` names; False when no such group exists."""
    from . import GROUP_MODULES

    if word not in GROUP_MODULES:
        return False
    import importlib

    importlib.import_module(f"{__package__}.{word}")
    return True


def load_all() -> list[Command]:
    """Every declared command, in help order (module order, then declaration order)."""
    from . import GROUP_MODULES

    for word in GROUP_MODULES:
        load(word)
    order = {word: n for n, word in enumerate(GROUP_MODULES)}
    return sorted(COMMANDS.values(), key=lambda cmd: order[cmd.path[0]])


def subcommands(prefix: tuple[str, ...]) -> list[Command]:
    """The declared commands whose words start with ``prefix``."""
    return [cmd for path, cmd in COMMANDS.items() if path[: len(prefix)] == prefix]


# -- running ----------------------------------------------------------------------------------


def usage_error(where: str, message: str) -> BadInput:
    """A one-line usage error naming the command, with the help command as its hint."""
    from ..core.shell import okstra

    return BadInput(f"{where}: {message}" if where else message, hint=okstra(*where.split(), "-h"))


def dispatch(argv: list[str], as_json: bool) -> int:
    """Run ``git okstra ARGV``; returns the exit code (errors are raised as OkstraError)."""
    if argv[:1] == ["--json"] and len(argv) > 1:
        # A global option before the command words, as git takes ``git -C DIR status``:
        # ``git okstra --json task show KEY`` is ``git okstra task show KEY --json``.
        rest = argv[1:]
        cut = rest.index("--") if "--" in rest else len(rest)
        argv = [*rest[:cut], "--json", *rest[cut:]]
    words = argv[: argv.index("--")] if "--" in argv else argv
    wants_help = "-h" in words or "--help" in words
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(root_help())
        return 0 if argv else 2
    if argv[0] in ("--version", "-V"):
        return _print_version(as_json)
    if not load(argv[0]):
        raise _unknown((), argv[0], [cmd.path[0] for cmd in load_all()])
    cmd, depth = _match(argv)
    if cmd is None:
        prefix, rest = tuple(argv[:depth]), argv[depth:]
        if wants_help or (not rest and not as_json):  # a bare group: its help, exit 2
            sys.stdout.write(group_help(prefix))
            return 0 if wants_help else 2
        choices = [c.path[depth] for c in subcommands(prefix)]
        if not rest or rest[0].startswith("-"):
            where = " ".join(prefix)
            raise usage_error(where, f"which command? one of {', '.join(dict.fromkeys(choices))}")
        raise _unknown(prefix, rest[0], choices)
    if wants_help:
        sys.stdout.write(command_help(cmd))
        return 0
    return _call(cmd, argv[len(cmd.path) :], as_json)


def _match(argv: list[str]) -> tuple[Command | None, int]:
    """The command ``argv`` names (the longest match), or None and how many of its first words
    match some command's."""
    best = 0
    for path, cmd in sorted(COMMANDS.items(), key=lambda item: -len(item[0])):
        if tuple(argv[: len(path)]) == path:
            return cmd, len(path)
        same = 0
        while same < min(len(argv), len(path)) and argv[same] == path[same]:
            same += 1
        best = max(best, same)
    return None, best


def _unknown(prefix: tuple[str, ...], word: str, choices: list[str]) -> BadInput:
    import difflib

    where = " ".join(prefix)
    names = sorted(set(choices))
    close = difflib.get_close_matches(word, names, n=1)
    guess = f"; did you mean {close[0]!r}?" if close else f"; one of {', '.join(names)}"
    what = f"{PROG} {where}".rstrip()
    return usage_error(where, f"{word!r} is not a {what} command{guess}")


def _call(cmd: Command, rest: list[str], as_json: bool) -> int:
    given = quick_parse(cmd, rest)
    if given is None:  # argparse decides, and words the usage error
        namespace = _parser(cmd).parse_args(rest)
        given = {arg.key: getattr(namespace, arg.key) for arg in cmd.all_args}
    kwargs = {arg.key: checked_value(cmd, arg, given[arg.key]) for arg in cmd.args}
    stdout = sys.stdout
    if as_json:  # whatever the handler prints goes to stderr: stdout holds one JSON object
        sys.stdout = sys.stderr
    try:
        out = run_handler(cmd, kwargs)
    finally:
        sys.stdout = stdout
    _print(out, as_json, stdout)
    return out.code


def run_handler(cmd: Command, kwargs: dict[str, Any]) -> Output:
    """``cmd``'s handler on checked arguments, as the command line and the MCP server
    (cli/mcp.py) both run it: a refusal about a task carries the task's next step."""
    try:
        return cmd.handler(**kwargs)
    except Refused as exc:
        if exc.next is None and isinstance(kwargs.get("key"), str):
            from ..services.status import refusal_step

            exc.next = refusal_step(kwargs["key"])
        raise


def quick_parse(cmd: Command, rest: list[str]) -> dict[str, Any] | None:
    """What argparse makes of ``rest`` (each argument's raw value by key) for a plain command
    line; ``None`` leaves the line to argparse.

    Plain: every word starting with ``-`` is exactly one of the command's options (or
    ``--option=value``), no value starts with ``-``, and the positional words are one run that
    fills the positionals: all of them after one ``--`` (what the completion scripts send on
    every TAB), or none of them before it. Nearly every line agents and hooks type is plain,
    and parsing it costs no argparse import (~3 ms, on every push). Anything else, a usage
    error above all, goes to argparse; a property test holds this parser to argparse's answers.
    """
    options = {name: arg for arg in cmd.all_args if not arg.positional for name in arg.names}
    given: dict[str, Any] = {}
    for arg in cmd.all_args:
        if arg.flag:
            given[arg.key] = False
        elif arg.repeat:
            given[arg.key] = [] if arg.positional else None
        else:
            given[arg.key] = arg.default
    words: list[str] = []
    runs = 0  # separate runs of positional words
    in_run = False
    index = 0
    while index < len(rest):
        word = rest[index]
        index += 1
        if word == "--":
            after = rest[index:]
            if runs or not after or "--" in after:  # argparse's answers differ by version
                return None
            words, runs = after, 1
            break
        if not word.startswith("-"):
            runs += not in_run
            in_run = True
            words.append(word)
            continue
        in_run = False
        name, equals, value = word.partition("=")
        opt = options.get(name)
        if opt is None or (equals and opt.flag):
            return None
        if opt.flag:
            given[opt.key] = True
            continue
        if not equals:
            if index == len(rest) or rest[index].startswith("-"):
                return None
            value = rest[index]
            index += 1
        given[opt.key] = [*(given[opt.key] or ()), value] if opt.repeat else value
    if runs > 1:  # argparse may fill an optional positional from the first run: its call
        return None
    if any(arg.required and given[arg.key] is None for arg in options.values()):
        return None
    return _place([arg for arg in cmd.args if arg.positional], words, given)


def _place(
    positionals: list[Arg], words: list[str], given: dict[str, Any]
) -> dict[str, Any] | None:
    """The positional words onto ``positionals`` when they are shaped as argparse fills them
    in order (required ones, then optional ones, then one repeated one); else ``None``."""
    single = positionals[:-1] if positionals and positionals[-1].repeat else positionals
    needed = [arg.needed for arg in single]
    if any(arg.repeat for arg in single) or needed != sorted(needed, reverse=True):
        return None
    for arg in positionals:
        if arg.repeat:
            given[arg.key], words = words, []
            if arg.needed and not given[arg.key]:
                return None
        elif words:
            given[arg.key], words = words[0], words[1:]
        elif arg.needed:
            return None
    return None if words else given


def _parser(cmd: Command) -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # one line, exit 2 (argparse would exit itself)
            raise usage_error(cmd.name, message)

        def _parse_optional(self, arg_string: str) -> Any:
            # No option name holds ':', and every task key does: a word with a ':' before any
            # '=' that names no option is the KEY, however it starts (`-p:g:i`), so a key
            # never lands where an option goes in a printed command.
            found = super()._parse_optional(arg_string)
            head = arg_string.split("=", 1)[0]
            if found is not None and found[0] is None and ":" in head:
                return None
            return found

    parser = Parser(prog=f"{PROG} {cmd.name}", add_help=False, allow_abbrev=False)
    for arg in cmd.all_args:
        if arg.positional:
            nargs = ("+" if arg.needed else "*") if arg.repeat else (None if arg.needed else "?")
            parser.add_argument(arg.key, nargs=nargs, default=arg.default, metavar=arg.placeholder)
        elif arg.flag:
            parser.add_argument(*arg.names, dest=arg.key, action="store_true")
        else:
            parser.add_argument(
                arg.name,
                dest=arg.key,
                action="append" if arg.repeat else "store",
                default=None if arg.repeat else arg.default,
                required=arg.required,
                metavar=arg.placeholder,
            )
    return parser


def checked_value(cmd: Command, arg: Arg, value: Any) -> Any:
    """Check choices and convert; the error names the command, the option and the value."""
    if arg.repeat:
        return [checked_value(cmd, _one(arg), item) for item in value or []]
    if not isinstance(value, str):  # absent (None), a flag, or already a list
        return value
    label = arg.name if not arg.positional else arg.placeholder
    if arg.choices and value not in arg.choices:
        raise usage_error(cmd.name, f"{label} {value!r}: expected one of {', '.join(arg.choices)}")
    if arg.convert is None:
        return value
    try:
        return arg.convert(value)
    except ValueError as exc:
        raise usage_error(cmd.name, f"{label} {value!r}: {exc}") from None


def _one(arg: Arg) -> Arg:
    """One occurrence of a repeatable argument."""
    return Arg(arg.name, arg.help, choices=arg.choices, convert=arg.convert)


def _print(out: Output, as_json: bool, stdout: TextIO) -> None:
    sys.stderr.write(out.err)
    if as_json:
        stdout.write(dump(json_data(out)))
        return
    text = out.render_text()
    if text:
        stdout.write(text if text.endswith("\n") else text + "\n")


def json_data(out: Output) -> dict[str, Any]:
    """The ``--json`` object of a handler's result: its data, ``ok``, and on a non-zero exit
    code ``error``, ``exitCode`` and ``hint``."""
    data: dict[str, Any] = {**out.data, "ok": out.code == 0}
    if out.code:
        error = out.error or out.err.strip() or f"exit status {out.code}"
        data.update(error=error, exitCode=out.code, hint=out.hint)
    return data


def describe_failure(exc: Exception) -> tuple[str, int]:
    """What to say (and the exit code) for an exception no command named: the operating
    system refusing (a full disk, a name too long), libgit2 meeting damage, or an internal
    error."""
    from ..core.errors import system_problem

    system = system_problem(exc)
    if system is not None:
        return (
            f"stopped by the system: {system}. okstra writes each record atomically, so none "
            "was left half-written",
            2,
        )
    if type(exc).__module__ == "_pygit2":
        return (
            f"git could not read this repository ({exc}); `git fsck` names damaged or missing "
            "objects",
            2,
        )
    return (
        f"internal error ({type(exc).__name__}: {exc}); rerun with OKSTRA_DEBUG=1 for the "
        "traceback",
        2,
    )


def failure_json(
    message: str, code: int, hint: str | None, step: dict[str, Any] | None = None
) -> str:
    """The ``--json`` object of an error raised before or by a handler; a refusal about a
    task carries the task's next step as ``next``."""
    data = {"ok": False, "error": message, "exitCode": code, "hint": hint}
    if step is not None:
        data["next"] = step
    return dump(data)


def version() -> str:
    """This installation's version: the package's own ``__version__``, which its metadata is
    built from (pyproject.toml, ``tool.hatch.version``). Reading the metadata instead loads
    ``importlib.metadata``, which cost ``--version`` more than all of ``-h``."""
    from .. import __version__

    return __version__


def _print_version(as_json: bool) -> int:
    found = version()
    sys.stdout.write(dump({"ok": True, "version": found}) if as_json else f"okstra-git {found}\n")
    return 0


# -- help -------------------------------------------------------------------------------------

EXIT_CODES = (
    (0, "done; the gate passed"),
    (1, 'refused or a check failed: the expected "no"'),
    (2, "bad usage or bad input (a malformed key, file or record)"),
    (3, "conflict: lost a race after retries, or a stale lock (named with its fix)"),
)
ABOUT = "okstra-git: tasks, plans, stage claims and verification verdicts kept in git."


def _width() -> int:
    try:
        return max(60, min(WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns))
    except (OSError, ValueError):  # not a terminal
        return WIDTH


def _wrap(text: str, indent: str = "", first: str | None = None) -> str:
    import textwrap

    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    wrapped = []
    for n, paragraph in enumerate(paragraphs):
        start = first if first is not None and n == 0 else indent
        wrapped.append(
            textwrap.fill(
                " ".join(paragraph.split()),
                _width(),
                initial_indent=start,
                subsequent_indent=indent,
                break_on_hyphens=False,
            )
        )
    return "\n\n".join(wrapped)


def _row(left: str, right: str) -> str:
    """``  left    right`` with ``right`` wrapped in its column (below ``left`` if too wide)."""
    pad = " " * _COLUMN
    head = f"  {left}"
    if len(head) + 2 > _COLUMN:
        return f"{head}\n{_wrap(right, pad)}"
    return _wrap(right, pad, head.ljust(_COLUMN))


def _usage(line: str) -> str:
    import textwrap

    return textwrap.fill(
        line,
        _width(),
        initial_indent="usage: ",
        subsequent_indent=" " * 11,
        break_on_hyphens=False,
        break_long_words=False,
    )


def command_help(cmd: Command) -> str:
    blocks = [_usage(cmd.usage()), _wrap(cmd.help)]
    if cmd.about:
        blocks.append(_wrap(cmd.about))
    positionals = [a for a in cmd.args if a.positional]
    if positionals:
        blocks.append(
            "\n".join(["arguments:", *(_row(a.spelling, a.full_help()) for a in positionals)])
        )
    options = [a for a in cmd.all_args if not a.positional]
    rows = [_row(a.spelling, a.full_help()) for a in options]
    blocks.append("\n".join(["options:", *rows, _row("-h, --help", "Show this help.")]))
    return "\n\n".join(blocks) + "\n"


def group_help(prefix: tuple[str, ...]) -> str:
    cmds = subcommands(prefix)
    where = " ".join(prefix)
    info = GROUPS.get(prefix[0])
    blocks = [_usage(f"{PROG} {where} COMMAND [ARGS] [--json]")]
    if info is not None:
        blocks.append(_wrap(info.help))
        if info.about:
            blocks.append(_wrap(info.about))
    blocks.append(_listing(cmds))
    blocks.append(f"Run `{PROG} {where} COMMAND -h` for a command's arguments.")
    return "\n\n".join(blocks) + "\n"


def root_help() -> str:
    cmds = load_all()
    blocks = [
        _usage(f"{PROG} COMMAND [ARGS] [--json]") + f"\n       {PROG} [COMMAND] -h | --version",
        ABOUT,
        _listing(cmds, by_group=True),
        "\n".join(["exit status:", *(_row(str(code), what) for code, what in EXIT_CODES)]),
        _wrap(
            f"Run `{PROG} COMMAND -h` for a command's arguments, `man git-okstra` for the "
            "manual. Coding agents: `git okstra mcp` serves these commands as MCP tools, and "
            "claims carry leases to renew (docs/agents.md). The plan format: docs/plan-format.md "
            "(`git okstra plan init` writes a plan to fill in). OKSTRA_DEBUG=1 shows the traceback "
            "of an internal error."
        ),
    ]
    return "\n\n".join(blocks) + "\n"


def _listing(cmds: list[Command], by_group: bool = False) -> str:
    lines = ["commands:"]
    previous = None
    for cmd in cmds:
        if by_group and previous is not None and cmd.path[0] != previous:
            lines.append("")
        previous = cmd.path[0]
        lines.append(_row(cmd.name, cmd.help))
    return "\n".join(lines)
