"""Printing results: ``--json`` gives one JSON object on stdout and nothing else there."""

from __future__ import annotations

import sys
from typing import Any

import typer

from ..views import dump

JSON_OPTION = typer.Option(False, "--json", help="Print one JSON object on stdout.")


def emit(as_json: bool, data: dict[str, Any], text: str | None = None) -> None:
    if as_json:
        sys.stdout.write(dump(data))
    elif text is not None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def finish(code: int) -> None:
    """End a command with ``code`` (1 for the expected "no") after output was printed."""
    if code:
        raise typer.Exit(code)
