"""``git okstra hooks``: install, remove and inspect the pre-push hook; ``run`` is its entry.

``hooks run …`` runs on every push: it imports the gate alone (``services/gatecheck.py``), which
reads the repository through git's plumbing, never pygit2.
"""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command, group

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from pathlib import Path

    from ..services.gatecheck import Outcome

group("hooks", "The pre-push hook that enforces the verification gate.")


@command(
    "hooks install",
    "Install the gate where git runs it for pushes from here, beside the hook manager in use.",
    Arg(
        "--force",
        "When a foreign hook AND an earlier kept-aside hook both exist, chain the current one "
        "and keep the older under a timestamped name.",
        flag=True,
    ),
    Arg(
        "--server",
        "Install contrib's pre-receive hook into this bare repository instead.",
        metavar="BARE_REPO",
        complete="dir",
    ),
    Arg("--update", "With --server: install the per-ref update hook too.", flag=True),
    about="No core.hooksPath: pre-push in the common git dir's hooks/ (a hook already there is "
    "kept as pre-push.okstra-chained and runs first, with the same arguments and stdin); "
    "pre-commit owns pre-push: pre-push.legacy, which pre-commit runs first on every push. "
    "husky, lefthook, or a core.hooksPath inside the work tree: writes nothing and refuses, "
    "printing the exact line (or lefthook script) for the team's own hook.",
)
def install(force: bool, server: str | None, update: bool) -> Output:
    from pathlib import Path

    from ..core.errors import BadInput
    from ..services import hooks as hookinstall
    from ..views.hooks import installed

    if update and server is None:
        raise BadInput("--update goes with --server BARE_REPO")
    if server is not None:
        outcome = hookinstall.install_server(Path(server), update, force)
    else:
        outcome = hookinstall.install(Path.cwd(), force)
    return installed(outcome)


@command(
    "hooks uninstall",
    "Remove okstra's hook scripts and put back the hooks they chained, byte for byte.",
    about="Never edits a team's hook: when the gate still runs from one, says so.",
)
def uninstall() -> Output:
    from pathlib import Path

    from ..services import hooks as hookinstall
    from ..views.hooks import installed

    return installed(hookinstall.uninstall(Path.cwd()))


@command(
    "hooks status",
    "Which hook manager is in use, where the gate lives, and whether a push runs it.",
    about="Follows what git runs for a push from this worktree and from every other worktree "
    "of the repository; also prints the gate's settings. Exits 1, after saying what is wrong "
    "and how to fix it, whenever a push would not run the gate (from here or another "
    "worktree), would not upload the LFS objects of a repository that uses git-lfs, or the "
    "gate's settings cannot be read (the gate then refuses every gated push).",
)
def status() -> Output:
    from pathlib import Path

    from ..core.errors import BadInput
    from ..core.shell import okstra as okstra_command
    from ..gate.config import GateConfig
    from ..services import hooks as hookinstall

    here = Path.cwd()
    where = hookinstall.layout(here)
    runs = hookinstall.runs_gate(where)
    worktrees = hookinstall.worktree_report(here)
    try:
        config: GateConfig | None = GateConfig.load(str(where.worktree or where.common_dir))
        broken = None
    except BadInput as exc:  # what is installed still shows; the gate's state is the answer
        config, broken = None, exc
    executable = hookinstall.recorded_exe(_text(runs.via[-1])) if runs.runs else None
    problems = hookinstall.push_problems(here, where, runs, worktrees)
    lfs = hookinstall.lfs_problem(here, where, runs)
    data = {
        "manager": where.manager,
        "hooksDir": str(where.hooks_dir),
        "coreHooksPath": where.hooks_path,
        "runs": runs.runs,
        "why": runs.why,
        "via": [str(p) for p in runs.via],
        "executable": executable,
        "worktrees": worktrees,
        "lfs": lfs,
        "problems": problems,
        "gate": None
        if config is None
        else {
            "protect": list(config.protect),
            "match": config.match,
            "allowedSigners": config.allowed_signers,
            "allowDelete": config.allow_delete,
        },
    }
    lines = [
        f"hook manager: {where.manager} (git runs hooks from {where.hooks_dir})",
        f"a push from here {'runs' if runs.runs else 'does NOT run'} the gate: {runs.why}",
        f"runs: {executable}" if executable else None,
        *(
            f"worktree {w['path']}: {'gated' if w['runs'] else 'NOT gated'} ({w['why']})"
            for w in worktrees
            if len(worktrees) > 1
        ),
    ]
    if config is not None:
        lines += [
            f"protected: {', '.join(config.protect)}",
            f"match: {config.match}",
            f"allowed signers: {config.allowed_signers or '(any verdict counts)'}",
            f"deleting protected refs: {'allowed' if config.allow_delete else 'refused'}",
        ]
    text = "\n".join(line for line in lines if line is not None)
    if broken is None and not problems:
        return Output(data, text)
    said = [*problems, *([str(broken)] if broken is not None else [])]
    fix = okstra_command("hooks", "install")
    if problems:
        said.append(
            f"Fix: {fix} (it installs the gate, or prints the line for the hook manager in use), "
            "then check again: " + okstra_command("hooks", "status")
        )
    err = "".join(f"git okstra: {line}\n" for line in said)
    hint = broken.hint if broken is not None and not problems else fix
    return Output(data, text, err=err, code=1, error="\n".join(said), hint=hint)


def _text(path: Path) -> str | None:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return None


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
        "As pre-commit's okstra-gate hook: pass when okstra's full gate runs on this push "
        "(pre-push.legacy), else check the one ref pre-commit names and refuse.",
        flag=True,
    ),
    Arg(
        "--require-refs",
        "Refuse when stdin names no ref (a hook manager that did not pass git's stdin on).",
        flag=True,
    ),
    about="stdin: '<local ref> <local sha> <remote ref> <remote sha>' lines. The entry the "
    "installed hook script calls.",
)
def pre_push(remote: str, url: str, from_env: bool, require_refs: bool) -> Output:
    from ..services import gatecheck

    return _hook(gatecheck.pre_push(from_env, require_refs))


@command(
    "hooks run pre-receive",
    "Server side: check every ref update of a push being received.",
    about="stdin: '<old> <new> <ref>' lines. On GitLab, messages start with GL-HOOK-ERR:.",
)
def pre_receive() -> Output:
    from ..services import gatecheck

    return _hook(gatecheck.pre_receive())


@command(
    "hooks run update",
    "Server side, one ref: the update hook's REF OLD NEW.",
    Arg("ref", "The ref being updated.", metavar="REF"),
    Arg("old", "Its current value (zeros: created).", metavar="OLD"),
    Arg("new", "Its new value (zeros: deleted).", metavar="NEW"),
)
def update(ref: str, old: str, new: str) -> Output:
    from ..services import gatecheck

    return _hook(gatecheck.update(ref, old, new))


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
