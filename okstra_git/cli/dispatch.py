"""Running ``git okstra ARGV``: the declared command a command line names, its arguments
parsed (a quick parser for plain lines, argparse for the rest and every usage error) and
checked, its handler called, and its result printed as text or one ``--json`` object; the
words of a failure no command named. The declarations are ``declare.py``'s; help is
``helptext.py``'s, loaded only when asked for.
"""

from __future__ import annotations

import sys

from ..core.errors import BadInput, Refused
from ..views import Output, dump
from .declare import COMMANDS, PROG, Arg, Command, load, load_all, subcommands

# Every command starts here, the pre-push hook too: ``typing`` (~3 ms with what it pulls in) is
# for the type checker only, and argparse is loaded only for a command line the quick parser
# leaves to it (an error, ``--``, an option value starting with ``-``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, TextIO


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
        from .helptext import root_help

        sys.stdout.write(root_help())
        return 0 if argv else 2
    if argv[0] in ("--version", "-V"):
        from ..views.version import version as view

        _print(view(version()), as_json, sys.stdout)
        return 0
    if not load(argv[0]):
        raise _unknown((), argv[0], [cmd.path[0] for cmd in load_all()])
    cmd, depth = _match(argv)
    if cmd is None:
        prefix, rest = tuple(argv[:depth]), argv[depth:]
        if wants_help or (not rest and not as_json):  # a bare group: its help, exit 2
            from .helptext import group_help

            sys.stdout.write(group_help(prefix))
            return 0 if wants_help else 2
        choices = [c.path[depth] for c in subcommands(prefix)]
        if not rest or rest[0].startswith("-"):
            where = " ".join(prefix)
            raise usage_error(where, f"which command? one of {', '.join(dict.fromkeys(choices))}")
        raise _unknown(prefix, rest[0], choices)
    if wants_help:
        from .helptext import command_help

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
    (cli/mcp.py) both run it: a refusal about a task carries the task's next step, and its
    hint is that step's command (``logic/nextstep.py``'s ``refusal_hint``: every printed
    "what now" is the engine's, so a refusal names the command ``task status`` does)."""
    try:
        return cmd.handler(**kwargs)
    except Refused as exc:
        if exc.next is None and isinstance(kwargs.get("key"), str):
            from ..services.status import refusal_step

            step = refusal_step(kwargs["key"])
            exc.next = step.to_data() if step is not None else None
        from ..logic.nextstep import refusal_hint

        exc.hint = refusal_hint(exc.next, cmd.path, exc.hint)
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
    if not as_json:
        out.print_text(stdout, sys.stderr)
        return
    sys.stderr.write(out.err)
    stdout.write(dump(json_data(out)))


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
