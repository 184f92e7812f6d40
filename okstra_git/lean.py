"""``task show`` and ``task list`` without typer.

typer 0.29 imports pydantic for every command it runs (~+70 ms here); these two are what
agents and scripts poll, so ``entry.py`` sends them here. The options mirror ``cli/task.py``
exactly (a test keeps the two in step); the output comes from ``taskviews.py`` for both.
"""

from __future__ import annotations

import argparse
import sys

from . import taskviews
from .errors import BadInput
from .services.context import open_context


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors are exit 2 with one clear line
        raise BadInput(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="git okstra task", add_help=False)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", add_help=False)
    show.prog = "git okstra task show"
    show.add_argument("key")
    show.add_argument("--write-index", action="store_true")
    show.add_argument("--json", action="store_true", dest="as_json")
    listing = sub.add_parser("list", add_help=False)
    listing.prog = "git okstra task list"
    listing.add_argument("--group")
    listing.add_argument("--json", action="store_true", dest="as_json")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv[1:])
    ctx = open_context()
    if args.command == "show":
        out, note = taskviews.show(ctx, args.key, args.write_index, args.as_json)
        sys.stderr.write(note)
    else:
        out = taskviews.list_(ctx, args.group, args.as_json)
    sys.stdout.write(out)
    return 0
