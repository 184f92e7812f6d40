"""Declaring ``git okstra`` commands: one declaration per command drives parsing and running
it (``dispatch.py``), ``-h`` help (``helptext.py``), the man page (``manpage.py``) and shell
completion (``completion.py``). This module holds the declarations and loads the group modules
that make them; it runs nothing.

How to declare a command
------------------------
A group of commands is one module, ``okstra_git/cli/<group>.py``, named in
``okstra_git.cli.GROUP_MODULES`` (the order help lists them in). It only parses, calls a
service and formats output. Import services *inside* handlers: running a command imports only
its group's module, and ``--help`` imports them all, so module level stays cheap::

    from ..core.errors import BadInput
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
  ``python -m okstra_git.cli.manpage > man/git-okstra.1``. ``tests/cli/test_cli.py`` checks every
  declaration (help on every argument, handler parameters = the arguments, a ``--json``
  failure of every command, the man page current); completion needs nothing more.
"""

from __future__ import annotations

from ..core.values import Value

# Every command starts here, the pre-push hook too: ``typing`` (~3 ms with what it pulls in) is
# for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import timedelta
    from typing import Any

    from ..views import Output

PROG = "git okstra"


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
    for ``--verbose``), as git's commands have. ``after_dashes``: a repeated positional that
    holds another command's words, given after ``--`` (``work``'s CMD): usage shows it last, as
    ``-- CMD...`` after ``[--json]``, since a ``--json`` after ``--`` is that command's.
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
    after_dashes: bool = False

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
    def word(self) -> str:
        """Its name as the command line spells it, ``-`` → ``_``: ``type`` for ``--type``
        (whatever the handler calls it), what an MCP tool names the argument."""
        return self.name.lstrip("-").replace("-", "_")

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
            if self.after_dashes:
                word = f"-- {word}"
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
        last = [arg for arg in self.all_args if arg.after_dashes]
        first = [arg for arg in self.all_args if not arg.after_dashes]
        return " ".join([PROG, self.name, *(arg.usage() for arg in (*first, *last))])


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
    __import__(f"{__package__}.{word}")  # importlib would load warnings too, on every push
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
