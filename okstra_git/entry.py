"""The ``git-okstra`` executable: error formatting and exit codes (SPEC §13).

Commands are declared in ``okstra_git/cli/`` (see ``cli/declare.py``); running one imports only
its group's module, which imports its services only when the command runs. With ``--json`` a
failure is one JSON object on stdout too, and the message a person reads still goes to stderr.
"""

from __future__ import annotations

import os
import sys

from .core.errors import OkstraError


def wants_json(argv: list[str]) -> bool:
    """``--json`` among the options (not after ``--``)."""
    return "--json" in (argv[: argv.index("--")] if "--" in argv else argv)


def main(argv: list[str] | None = None) -> int:
    import gc

    args = sys.argv[1:] if argv is None else argv
    as_json = wants_json(args)
    # A command is one short process: the cycle collector's passes over a heap that only grows
    # (pygit2's and typing's objects, every record read) were ~3 ms of a read command and more
    # at 50 stages, for no cycle worth freeing (reference counting frees what a command drops).
    # Resumed afterwards for in-process callers.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from .cli.declare import dispatch

        return dispatch(args, as_json)
    except OkstraError as exc:
        return _fail(str(exc), exc.exit_code, exc.hint, as_json, exc.next)
    except KeyboardInterrupt:
        if as_json:
            _fail("interrupted", 130, None, as_json)
        return 130
    except Exception as exc:
        if os.environ.get("OKSTRA_DEBUG") == "1":
            raise
        from .cli.declare import describe_failure

        message, code = describe_failure(exc)
        return _fail(message, code, None, as_json)
    finally:
        if collecting:
            gc.enable()


def _fail(
    message: str, code: int, hint: str | None, as_json: bool, step: dict | None = None
) -> int:
    """Say why on stderr (and as the one ``--json`` object on stdout); return ``code``. A
    refusal about a task carries the task's next step (``step``) in ``--json``."""
    text = f"git okstra: {message}\n" + (f"hint: {hint}\n" if hint else "")
    sys.stderr.write(text)
    if as_json:
        from .cli.declare import failure_json

        sys.stdout.write(failure_json(message, code, hint, step))
    return code
