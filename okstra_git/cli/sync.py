"""``git okstra sync``: exchange okstra's refs and notes with a remote."""

from __future__ import annotations

import re

from ..views import Output
from .declare import Arg, command


def _unit(text: str) -> str:
    if re.fullmatch(r"task|plan-[0-9]{3,9}|[a-z-]+-[0-9]{3,9}", text) is None:
        raise ValueError("expected a run id such as error-analysis-001, plan-002 or task")
    return text


@command(
    "sync",
    "Fetch refs/okstra/* and refs/notes/okstra/*, bring local refs in step, push what is ahead.",
    Arg(
        "remote",
        "The remote (default: the branch's remote, else origin, else the only one).",
        metavar="REMOTE",
        optional=True,
        complete="remote",
    ),
    Arg("--fetch-only", "Fetch and bring local refs in step; push nothing.", flag=True),
    Arg("--push-only", "Push what is ahead since the last fetch; fetch nothing.", flag=True),
    Arg(
        "--task",
        "The task whose true conflict --take-theirs or --renumber settles.",
        metavar="KEY",
        complete="task",
    ),
    Arg(
        "--take-theirs",
        "Settle the conflict by keeping the remote's side of UNIT and dropping yours (your old "
        "tip is kept under refs/okstra-dropped/).",
        metavar="UNIT",
        convert=_unit,
    ),
    Arg(
        "--verbose",
        "List every ref sync fetched, moved or pushed (by default, one line per kind of ref "
        "with the counts, and only the refs that need you by name).",
        flag=True,
        short="-v",
    ),
    Arg(
        "--renumber",
        "Settle a run or plan started on both sides by keeping both: yours moves to the next "
        "free number.",
        metavar="UNIT",
        convert=_unit,
    ),
    about="Remote records are checked (schema, ref names, branch and path fields) before they "
    "are adopted. Local-only task events are replayed on the remote's chain, like `git pull "
    "--rebase`; notes merge line by line (cat_sort_uniq). Only a true conflict — the same run "
    "or plan started on both sides, the same stage claimed on both — stops, for that task "
    "alone, naming both sides and one command per choice (exit 1). The push is atomic and "
    "never forced: each ref is a fast-forward of what was fetched.",
)
def sync(
    remote: str | None,
    fetch_only: bool,
    push_only: bool,
    task: str | None,
    take_theirs: str | None,
    verbose: bool,
    renumber: str | None,
) -> Output:
    from ..core.errors import BadInput
    from ..services.context import open_context
    from ..services.sync import engine as sync_service
    from ..services.sync.state import Choice
    from ..views.sync import synced

    if fetch_only and push_only:
        raise BadInput("--fetch-only and --push-only exclude each other; give at most one")
    if take_theirs and renumber:
        raise BadInput("--take-theirs and --renumber exclude each other; give one")
    if (task is None) != (take_theirs is None and renumber is None):
        raise BadInput("--take-theirs and --renumber settle one task's conflict: give --task KEY")
    if renumber == "task":
        raise BadInput("--renumber task: only a run or a plan snapshot can be renumbered")
    ctx = open_context()
    choice = None
    if task is not None:
        if push_only:
            raise BadInput("--push-only cannot settle a conflict: it needs the remote's side")
        action, unit = ("renumber", renumber) if renumber else ("take-theirs", take_theirs)
        assert unit is not None
        choice = Choice(ctx.key(task), action, unit)
    report = sync_service.sync(
        ctx, remote, do_fetch=not push_only, do_push=not fetch_only, choice=choice
    )
    from ..services.branches import branch_steps, held_back

    steps = branch_steps(ctx.repo, report.remote, report.branches, ctx.clone_dir)
    return synced(report, held_back(report.remote, report.branches, steps), verbose, steps)
