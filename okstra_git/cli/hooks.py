"""``git okstra hooks``: install, remove and inspect the pre-push hook; ``run`` is its entry.

``hooks run …`` runs on every push: it imports the gate alone (``gate_cli``), and pygit2 only
when a protected ref needs its verdict looked up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..views import Output
from .declare import Arg, command, group

if TYPE_CHECKING:
    from ..gate_cli import Outcome
    from ..hookinstall import HookState

group("hooks", "The pre-push hook that enforces the verification gate.")


@command(
    "hooks install",
    "Install the pre-push hook (core.hooksPath, else the common git dir's hooks/).",
    Arg(
        "--force",
        "When a foreign hook AND an earlier kept-aside hook both exist, chain the current one "
        "and keep the older under a timestamped name.",
        flag=True,
    ),
    about="An existing foreign hook is kept as pre-push.okstra-chained and runs first, with "
    "the same arguments and stdin.",
)
def install(force: bool) -> Output:
    from .. import hookinstall
    from ..services.context import open_context

    action, state = hookinstall.install(open_context().repo, force)
    return Output({"action": action, **state.to_data()}, _describe(action, state))


@command(
    "hooks uninstall", "Remove okstra's pre-push hook and put back the hook it chained, unchanged."
)
def uninstall() -> Output:
    from .. import hookinstall
    from ..services.context import open_context

    action, state = hookinstall.uninstall(open_context().repo)
    return Output({"action": action, **state.to_data()}, f"pre-push hook {action}: {state.path}")


@command(
    "hooks status", "Where the hook is, whether okstra's is installed, and the gate's settings."
)
def status() -> Output:
    from .. import hookinstall
    from ..gate import GateConfig
    from ..services.context import open_context

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
    return Output(
        {**state.to_data(), "gate": gate}, "\n".join(line for line in lines if line is not None)
    )


def _describe(action: str, state: HookState) -> str:
    lines = [f"pre-push hook {action}: {state.path}"]
    if state.has_chained:
        lines.append(f"runs first, with the same arguments and stdin: {state.chained}")
    lines.append(f"runs: {state.executable or 'git-okstra on PATH'}")
    return "\n".join(lines)


# -- the hook entries: stdin in, exit 1 when a ref update fails the gate --------------------


@command(
    "hooks run pre-push",
    "Check the refs git is about to push; exit 1 when one fails the gate.",
    Arg(
        "remote",
        "The remote's name, as git passes it.",
        metavar="REMOTE",
        optional=True,
        default="",
    ),
    Arg("url", "The remote's URL, as git passes it.", metavar="URL", optional=True, default=""),
    Arg(
        "--from-env",
        "Read the one pushed ref from pre-commit's PRE_COMMIT_* variables, not stdin.",
        flag=True,
    ),
    about="stdin: '<local ref> <local sha> <remote ref> <remote sha>' lines. The entry the "
    "installed hook script calls.",
)
def pre_push(remote: str, url: str, from_env: bool) -> Output:
    from .. import gate_cli

    return _hook(gate_cli.pre_push(from_env))


@command(
    "hooks run pre-receive",
    "Server side: check every ref update of a push being received.",
    about="stdin: '<old> <new> <ref>' lines. On GitLab, messages start with GL-HOOK-ERR:.",
)
def pre_receive() -> Output:
    from .. import gate_cli

    return _hook(gate_cli.pre_receive())


@command(
    "hooks run update",
    "Server side, one ref: the update hook's REF OLD NEW.",
    Arg("ref", "The ref being updated.", metavar="REF"),
    Arg("old", "Its current value (zeros: created).", metavar="OLD"),
    Arg("new", "Its new value (zeros: deleted).", metavar="NEW"),
)
def update(ref: str, old: str, new: str) -> Output:
    from .. import gate_cli

    return _hook(gate_cli.update(ref, old, new))


def _hook(outcome: Outcome) -> Output:
    decisions = [
        {
            "ref": d.ref,
            "commit": d.commit,
            "allowed": d.allowed,
            "reason": d.reason,
            "message": d.message,
        }
        for d in outcome.decisions
    ]
    return Output({"decisions": decisions}, code=outcome.code, error=outcome.error)
