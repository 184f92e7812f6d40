"""``git okstra hooks``: install, remove and inspect the pre-push hook; ``run`` is its entry.

``hooks run …`` never reaches typer in practice (``entry.py`` sends it to ``gate_cli`` before
typer is imported); it is declared here so ``--help`` documents it.
"""

from __future__ import annotations

import typer

from .. import gate_cli, hookinstall
from ..gate import GateConfig
from ..services.context import open_context
from .output import JSON_OPTION, emit

app = typer.Typer(
    help="The pre-push hook that enforces the verification gate.", no_args_is_help=True
)


@app.command("install")
def install(
    force: bool = typer.Option(
        False,
        "--force",
        help="When a foreign hook AND an earlier kept-aside hook both exist, chain the current "
        "one and keep the older under a timestamped name.",
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Install the pre-push hook (core.hooksPath, else the common git dir's hooks/).

    An existing foreign hook is kept as pre-push.okstra-chained and runs first.
    """
    action, state = hookinstall.install(open_context().repo, force)
    emit(as_json, {"action": action, **state.to_data()}, _describe(action, state))


@app.command("uninstall")
def uninstall(as_json: bool = JSON_OPTION) -> None:
    """Remove okstra's pre-push hook and put back the hook it chained, unchanged."""
    action, state = hookinstall.uninstall(open_context().repo)
    emit(as_json, {"action": action, **state.to_data()}, f"pre-push hook {action}: {state.path}")


@app.command("status")
def status(as_json: bool = JSON_OPTION) -> None:
    """Where the hook is, whether okstra's is installed, and the gate's settings."""
    repo = open_context().repo
    state = hookinstall.state(repo)
    config = GateConfig.load(repo.workdir or repo.git_dir)
    gate = {
        "protect": list(config.protect),
        "match": config.match,
        "allowedSigners": config.allowed_signers,
        "allowDelete": config.allow_delete,
    }
    if state.installed:
        installed = "okstra's hook is installed"
    elif state.foreign:
        installed = "a foreign hook is installed (not okstra's)"
    else:
        installed = "no pre-push hook"
    lines = [
        f"{state.path}: {installed}",
        f"runs: {state.executable or 'git-okstra on PATH'}" if state.installed else None,
        f"chained first: {state.chained}" if state.has_chained else None,
        f"protected: {', '.join(config.protect)}",
        f"match: {config.match}",
        f"allowed signers: {config.allowed_signers or '(any verdict counts)'}",
        f"deleting protected refs: {'allowed' if config.allow_delete else 'refused'}",
    ]
    emit(
        as_json,
        {**state.to_data(), "gate": gate},
        "\n".join(line for line in lines if line is not None),
    )


@app.command(
    "run",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def run(
    ctx: typer.Context,
    kind: str = typer.Argument(
        ...,
        help="pre-push REMOTE URL (stdin: '<local ref> <sha> <remote ref> <sha>' lines), "
        "pre-receive (stdin: '<old> <new> <ref>' lines) or update REF OLD NEW.",
    ),
) -> None:
    """The entry the hook scripts call; exits 1 when a ref update fails the gate.

    pre-push also takes --from-env: the one ref pre-commit's pre-push stage names in
    PRE_COMMIT_TO_REF / PRE_COMMIT_REMOTE_BRANCH.
    """
    raise typer.Exit(gate_cli.main(["hooks", "run", kind, *ctx.args]))


def _describe(action: str, state: hookinstall.HookState) -> str:
    lines = [f"pre-push hook {action}: {state.path}"]
    if state.has_chained:
        lines.append(f"runs first, with the same arguments and stdin: {state.chained}")
    lines.append(f"runs: {state.executable or 'git-okstra on PATH'}")
    return "\n".join(lines)
