"""The root ``git okstra`` command and its groups."""

from __future__ import annotations

import typer

from . import ci as ci_cmd
from . import clarify as clarify_cmd
from . import demo as demo_cmd
from . import hooks as hooks_cmd
from . import init as init_cmd
from . import plan as plan_cmd
from . import run, task
from . import stage as stage_cmd
from . import sync as sync_cmd
from . import verify as verify_cmd
from . import worktree as worktree_cmd

app = typer.Typer(
    name="git okstra",
    help="okstra-git: tasks, plans, stage claims and verification verdicts kept in git.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("init")(init_cmd.init)
app.command("demo")(demo_cmd.demo)
app.add_typer(task.app, name="task")
app.add_typer(run.app, name="run")
app.add_typer(stage_cmd.app, name="stage")
app.add_typer(worktree_cmd.app, name="worktree")
app.add_typer(plan_cmd.app, name="plan")
app.add_typer(clarify_cmd.app, name="clarify")
app.add_typer(verify_cmd.app, name="verify")
app.command("sync")(sync_cmd.sync)
app.add_typer(hooks_cmd.app, name="hooks")
app.add_typer(ci_cmd.app, name="ci")
