"""The lean entry (no typer) takes exactly the options of the typer commands it stands in for."""

from __future__ import annotations

import argparse

import typer.main

from okstra_git.cli.app import app
from okstra_git.entry import _LEAN_READS
from okstra_git.lean import parsers


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], int]:
    """Option strings and the number of positional arguments."""
    options = {o for action in parser._actions for o in action.option_strings}
    positionals = sum(1 for action in parser._actions if not action.option_strings)
    return options, positionals


def test_every_lean_command_mirrors_its_typer_command() -> None:
    root = typer.main.get_command(app)
    seen = set()
    for group, parser in parsers().items():
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, lean in sub.choices.items():
            seen.add((group, name))
            typed = root.commands[group].commands[name]
            typer_options = {o for p in typed.params for o in p.opts if o.startswith("-")}
            typer_positionals = sum(1 for p in typed.params if not p.opts[0].startswith("-"))
            assert _options(lean) == (typer_options - {"--help"}, typer_positionals), name
    assert seen == _LEAN_READS


HEAVY = """
import sys
from okstra_git.entry import main
code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"typer", "pydantic", "jsonschema", "rich"})
print("HEAVY", heavy, code)
"""


def test_lean_reads_never_import_typer_or_jsonschema(repo) -> None:
    import subprocess
    import sys

    from conftest import okstra

    okstra(repo, "task", "new", "p:g:i", "--type", "implementation")
    for args in (["task", "show", "p:g:i", "--json"], ["task", "list"], ["verify", "show"]):
        proc = subprocess.run(
            [sys.executable, "-c", HEAVY, *args], cwd=repo, text=True, capture_output=True
        )
        assert "HEAVY [] 0" in proc.stdout, (args, proc.stdout[-500:], proc.stderr)
