"""``git okstra ci check``: the verification gate for CI jobs.

The real work is in ``gate_cli`` (``entry.py`` sends ``ci check`` there before typer is
imported); this declaration gives ``--help``.
"""

from __future__ import annotations

import typer

from .. import gate_cli

app = typer.Typer(help="Checks for CI jobs.", no_args_is_help=True)


@app.command("check")
def check(
    rev: str = typer.Argument("HEAD", help="The commit to check."),
    fmt: str = typer.Option(
        "text",
        "--format",
        help="text | json | junit | github (::error lines, Markdown to $GITHUB_STEP_SUMMARY).",
    ),
    fetch: str | None = typer.Option(
        None,
        "--fetch",
        metavar="REMOTE",
        help="First fetch refs/notes/okstra/* from REMOTE into refs/notes/okstra-remotes/REMOTE/.",
    ),
    task: str | None = typer.Option(
        None, "--task", metavar="KEY", help="Only a verdict for this task counts."
    ),
    output: str | None = typer.Option(
        None, "--output", metavar="FILE", help="Write the report to FILE instead of stdout."
    ),
) -> None:
    """Exit 0 only for an accepted whole-task verdict on REV (or on a commit with its tree)."""
    argv = ["ci", "check", rev, "--format", fmt]
    for flag, value in (("--fetch", fetch), ("--task", task), ("--output", output)):
        if value is not None:
            argv += [flag, value]
    raise typer.Exit(gate_cli.main(argv))
