"""Read commands that agents poll, without typer: ``task show``/``task list`` and
``verify target``/``verify show``.

typer 0.29 imports pydantic for every command it runs (~+70 ms here), several times the work
of these commands, so ``entry.py`` sends them here. The options mirror the typer commands
exactly (tests keep them in step); the output comes from ``views/`` for both front ends.
"""

from __future__ import annotations

import argparse
import sys

from .errors import BadInput
from .services.context import open_context


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors are exit 2 with one clear line
        raise BadInput(f"{self.prog.removeprefix('git okstra ')}: {message}")


def _command(sub: argparse._SubParsersAction, group: str, name: str) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, add_help=False)
    parser.prog = f"git okstra {group} {name}"
    return parser


def parsers() -> dict[str, argparse.ArgumentParser]:
    """One parser per lean command group."""
    task = _Parser(prog="git okstra task", add_help=False)
    sub = task.add_subparsers(dest="command", required=True)
    show = _command(sub, "task", "show")
    show.add_argument("key")
    show.add_argument("--write-index", action="store_true")
    show.add_argument("--json", action="store_true", dest="as_json")
    listing = _command(sub, "task", "list")
    listing.add_argument("--group")
    listing.add_argument("--json", action="store_true", dest="as_json")

    verify = _Parser(prog="git okstra verify", add_help=False)
    sub = verify.add_subparsers(dest="command", required=True)
    target = _command(sub, "verify", "target")
    target.add_argument("key")
    target.add_argument("--stage", default="auto")
    target.add_argument("--worktree")
    target.add_argument("--json", action="store_true", dest="as_json")
    shown = _command(sub, "verify", "show")
    shown.add_argument("rev", nargs="?", default="HEAD")
    shown.add_argument("--json", action="store_true", dest="as_json")
    return {"task": task, "verify": verify}


def main(argv: list[str]) -> int:
    group = argv[0]
    args = parsers()[group].parse_args(argv[1:])
    ctx = open_context()
    err, code = "", 0
    if group == "task":
        from .views import task

        if args.command == "show":
            out, err = task.show(ctx, args.key, args.write_index, args.as_json)
        else:
            out = task.list_(ctx, args.group, args.as_json)
    else:
        from .views import verify

        if args.command == "target":
            out, err, code = verify.target(ctx, args.key, args.stage, args.worktree, args.as_json)
        else:
            out, err = verify.show(ctx, args.rev, args.as_json)
    sys.stderr.write(err)
    sys.stdout.write(out)
    return code
