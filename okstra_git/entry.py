"""The ``git-okstra`` executable: error formatting and exit codes (docs/cli.md).

Commands are declared in ``okstra_git/cli/`` (see ``cli/declare.py``); running one imports only
its group's module, which imports its services only when the command runs. With ``--json`` a
failure is one JSON object on stdout too, and the message a person reads still goes to stderr.
"""

from __future__ import annotations

import sys

from .core.errors import OkstraError


def wants_json(argv: list[str]) -> bool:
    """``--json`` among the options (not after ``--``)."""
    return "--json" in (argv[: argv.index("--")] if "--" in argv else argv)


def _escape(error: UnicodeError) -> tuple[str, int]:
    """A character the output's charset lacks, as a JSON-style ``\\uXXXX`` escape (a pair for
    one beyond the BMP): readable, and inside ``--json`` strings still the same JSON."""
    assert isinstance(error, UnicodeEncodeError)
    text = error.object[error.start : error.end]
    units = text.encode("utf-16-be", "surrogatepass")
    escaped = "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )
    return escaped, error.end


def _any_locale() -> None:
    """Output survives any locale. Under a charset that cannot hold okstra's text (ISO-8859-1,
    EUC-JP: an em dash, a Korean title) a character it lacks is written escaped, not an
    error; under UTF-8 a file name that is not UTF-8 (read with surrogateescape) goes out as
    its own bytes, as git prints it."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if encoding is None or not hasattr(stream, "reconfigure"):
            continue  # replaced by a caller (pytest's capture, an in-process run)
        if codecs.lookup(encoding).name == "utf-8":
            if stream.errors == "strict":
                stream.reconfigure(errors="surrogateescape")
            continue
        try:
            codecs.lookup_error("okstra-escape")
        except LookupError:
            codecs.register_error("okstra-escape", _escape)
        stream.reconfigure(errors="okstra-escape")


def main(argv: list[str] | None = None) -> int:
    import gc

    _any_locale()
    args = sys.argv[1:] if argv is None else argv
    as_json = wants_json(args)
    # A command is one short process: the cycle collector's passes over a heap that only grows
    # (pygit2's and typing's objects, every record read) were ~3 ms of a read command and more
    # at 50 stages, for no cycle worth freeing (reference counting frees what a command drops).
    # Resumed afterwards for in-process callers.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if _is_hook_push(args):
            code = _pre_push()
            if argv is None:
                _end_now(code)
            return code
        from .cli.dispatch import dispatch

        code = dispatch(args, as_json)
        if argv is None and args[:2] == ["ci", "check"]:  # CI runs it on every build
            _end_now(code)
        return code
    except OkstraError as exc:
        return _fail(str(exc), exc.exit_code, exc.hint, as_json, exc.next, _for_github(args))
    except KeyboardInterrupt:
        if as_json:
            _fail("interrupted", 130, None, as_json)
        return 130
    except Exception as exc:
        from .core.lightos import getenv

        if getenv("OKSTRA_DEBUG") == "1":
            raise
        from .cli.dispatch import describe_failure

        message, code = describe_failure(exc)
        return _fail(message, code, None, as_json, github=_for_github(args))
    finally:
        if argv is None:
            # The process ends next (the console script, python -m okstra_git): its shutdown
            # would still run the cycle collector, three passes over every object the command
            # loaded and made (~18M instructions of a 234M claim through a remote). Frozen,
            # they are left out of those passes; finalizers and atexit hooks run as before.
            gc.freeze()
        elif collecting:
            gc.enable()


def _is_hook_push(argv: list[str]) -> bool:
    """``hooks run pre-push [REMOTE [URL]]``: the command line the installed hook script runs
    on every push (git's two arguments, no option)."""
    return (
        argv[:3] == ["hooks", "run", "pre-push"]
        and len(argv) <= 5
        and not any(word.startswith("-") for word in argv[3:])
    )


def _pre_push() -> int:
    """The installed hook's command line, run as its handler in ``cli/hooks.py`` runs it (the
    command is declared there, once) but without the dispatcher and the declarations: those
    are four modules more on every push (cli, cli.declare, cli.dispatch, cli.hooks; ~3.6M
    instructions of the hook's ~50M). Any other command line, options or help included, goes
    through the dispatcher, which parses it from the declaration."""
    from .services.gatecheck import pre_push
    from .views.gate import hook_ran

    out = hook_ran(pre_push(False, False))
    out.print_text(sys.stdout, sys.stderr)
    return out.code


def _end_now(code: int) -> None:
    """End the process of the pre-push hook or of ``ci check`` with ``code`` once its output
    is out, skipping the interpreter's shutdown (module teardown, finalizers: ~2.6M
    instructions of the ~35M an unprotected push costs). Neither leaves anything to clean up:
    their git children were waited for and closed, and they write no file and register no exit
    handler."""
    sys.stdout.flush()
    sys.stderr.flush()
    from .core.lightos import system

    system._exit(code)


def _for_github(argv: list[str]) -> bool:
    """``--format github`` among the options: failures are annotations too."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    pairs = zip(words, [*words[1:], ""], strict=True)
    return "--format=github" in words or any(a == "--format" and b == "github" for a, b in pairs)


def _fail(
    message: str,
    code: int,
    hint: str | None,
    as_json: bool,
    step: dict | None = None,
    github: bool = False,
) -> int:
    """Say why on stderr (and as the one ``--json`` object on stdout, or with ``github`` as
    a GitHub ``::error`` there); return ``code``. A refusal about a task carries the task's
    next step (``step``) in ``--json``."""
    text = f"git okstra: {message}\n" + (f"hint: {hint}\n" if hint else "")
    sys.stderr.write(text)
    if github and not as_json:
        from .views.ci import github_error

        sys.stdout.write(github_error(message + (f" (hint: {hint})" if hint else "")))
    if as_json:
        from .cli.dispatch import failure_json

        sys.stdout.write(failure_json(message, code, hint, step))
    return code
