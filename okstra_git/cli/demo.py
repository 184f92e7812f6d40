"""``git okstra demo``: the lifecycle on a throw-away repository."""

from __future__ import annotations

from pathlib import Path

import typer


def demo(
    directory: Path | None = typer.Option(
        None, "--dir", help="An empty or new folder to build the demo in (default: a temp dir)."
    ),
) -> None:
    """Run the whole okstra lifecycle on a throw-away repository with a local bare remote."""
    from ..demo import run_demo

    raise typer.Exit(run_demo(directory))
