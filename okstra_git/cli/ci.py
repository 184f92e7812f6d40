"""``git okstra ci check``: the verification gate for CI jobs (docs/hooks.md)."""

from __future__ import annotations

from ..views import Output
from ..views.ci import CI_FORMATS
from .declare import Arg, command, group

group("ci", "Checks for CI jobs.")


@command(
    "ci check",
    "Exit 0 only for an accepted whole-task verdict on REV (or on a commit with its tree).",
    Arg("rev", "The commit to check.", metavar="REV", optional=True, default="HEAD"),
    Arg(
        "--format",
        "text; json; junit; github (::error lines, Markdown to $GITHUB_STEP_SUMMARY).",
        metavar="FORMAT",
        choices=CI_FORMATS,
        default="text",
        dest="fmt",
    ),
    Arg(
        "--fetch",
        "First fetch refs/notes/okstra/* from REMOTE into refs/notes/okstra-remotes/REMOTE/.",
        metavar="REMOTE",
        complete="remote",
    ),
    Arg("--task", "Only a verdict for this task counts.", metavar="KEY", complete="task"),
    Arg("--output", "Write the report to FILE instead of stdout.", metavar="FILE", complete="file"),
    about="--json prints the report as one object on stdout, with ok/exitCode/error; "
    "--format and --output are then not used.",
)
def check(rev: str, fmt: str, fetch: str | None, task: str | None, output: str | None) -> Output:
    from ..services import cicheck
    from ..views.ci import checked

    return checked(cicheck.ci_report(rev, fetch, task), fmt, output)
