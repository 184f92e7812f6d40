"""The ``git-okstra`` executable: error formatting, exit codes and the lean fast paths.

The pre-push hook and ``ci check`` run on every push and every build, and agents poll
``task show``/``task list`` and run ``verify target``/``verify show``, so these are
dispatched here before typer (which imports pydantic, ~+70 ms) is ever imported. ``--help``
always goes to typer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from .errors import OkstraError

_LEAN_READS = {("task", "show"), ("task", "list"), ("verify", "target"), ("verify", "show")}


def _fast_path(argv: list[str]) -> Callable[[list[str]], int] | None:
    if "--help" in argv or "-h" in argv:
        return None
    if argv[:2] == ["hooks", "run"] or argv[:2] == ["ci", "check"]:
        from . import gate_cli

        return gate_cli.main
    if tuple(argv[:2]) in _LEAN_READS:
        from . import lean

        return lean.main
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        fast = _fast_path(args)
        if fast is not None:
            return fast(args)
        from .cli.app import app

        app(args=args, prog_name="git okstra")
        return 0
    except OkstraError as exc:
        print(f"git okstra: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("OKSTRA_DEBUG") == "1":
            raise
        print(
            f"git okstra: internal error ({type(exc).__name__}: {exc}); "
            "rerun with OKSTRA_DEBUG=1 for the traceback",
            file=sys.stderr,
        )
        return 2
