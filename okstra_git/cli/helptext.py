"""``-h`` help: the root's, a group's and a command's, from the declarations (``declare.py``);
the man page (``manpage.py``) shares its exit codes and its line about okstra."""

from __future__ import annotations

import os
import sys

from .declare import GROUPS, PROG, Command, load_all, subcommands

WIDTH = 100
"""Help is wrapped to this many columns, or to a narrower terminal's width."""
_COLUMN = 25
"""Where argument and command help starts in ``-h`` listings."""


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

    # `-- CMD...` is one word of the usage: never wrapped between the dashes and what follows.
    return textwrap.fill(
        line.replace(" -- ", " --\x00"),
        _width(),
        initial_indent="usage: ",
        subsequent_indent=" " * 11,
        break_on_hyphens=False,
        break_long_words=False,
    ).replace("\x00", " ")


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
            "manual, `git okstra docs plan-format` for the plan format (`git okstra docs` lists "
            "every document: the workflow, agents, storage…). Coding agents: `git okstra mcp` "
            "serves these commands as MCP tools, and claims carry leases to renew (`git okstra "
            "docs agents`); `git okstra plan init` writes a plan to fill in. OKSTRA_DEBUG=1 "
            "shows the traceback of an internal error."
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
