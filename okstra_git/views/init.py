"""What ``git okstra init`` prints: each setting it changed, and what a clone does next."""

from __future__ import annotations

from ..core.keys import TASK_TYPES
from ..logic.nextstep import line, okstra_argv
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..services.hooks import Outcome


def configured(
    changes: dict[str, str | Outcome],
    project_id: str | None,
    remote: str | None,
    clone_dir: str,
    unshared: str | None = None,
    shares: bool = False,
    identity_unset: list[str] | tuple[str, ...] = (),
) -> Output:
    """One ``name = value`` line a setting changed, then (the first time) the next commands,
    each run in the clone from any folder: bring the tasks ``remote`` shares, or make the
    first one; with no ``remote``, how to share through ``unshared``, a remote of the clone
    that does not carry okstra's refs (a team clone that ran plain ``init`` would otherwise
    claim alone, unseen by the others) — the first thing to do when ``unshared`` already
    ``shares`` tasks. Whenever ``identity_unset`` names a part of the git identity, a line
    says so and how to set it: okstra would record this clone's claims, approvals and
    verdicts under its fallback, and git commit in a stage worktree refuses."""
    from .hooks import action

    config = {k: v if isinstance(v, str) else f"{action(v)}: {v.gate}" for k, v in changes.items()}
    # What a clone does next: bring the tasks its remote shares, or make the first one.
    argvs = [okstra_argv("sync", remote), okstra_argv("task", "list")] if remote else []
    argvs.append(okstra_argv("task", "new", "KEY", "--type", "TYPE"))
    then = [line(argv, clone_dir) for argv in argvs]
    types = f"(TYPE, the phase it starts in: one of {', '.join(TASK_TYPES)})"
    lines = [f"{k} = {v}" for k, v in config.items()] or ["nothing to change"]
    # Run again with nothing to change, it said what comes next the first time already.
    if changes and remote:
        lines.append(f"next: bring the tasks {remote} shares: {then[0]}, then {then[1]}")
        lines.append(f"  or start a task: {then[2]} {types}")
    elif changes and unshared and shares:
        share = line(okstra_argv("init", "--remote", unshared), clone_dir)
        then.insert(0, share)
        lines.append(f"next: {unshared} already shares okstra tasks; join them: {share}")
        lines.append(f"  or start a task in this clone alone: {then[1]} {types}")
    elif changes:
        lines.append(f"next: start a task: {then[0]} {types}")
        if unshared:
            share = line(okstra_argv("init", "--remote", unshared), clone_dir)
            then.append(share)
            lines.append(f"  or share tasks with the clones of {unshared} first: {share}")
    if identity_unset:
        from ..git.repo import FALLBACK_IDENTITY

        fallback = "{} <{}>".format(*FALLBACK_IDENTITY)
        sets = [
            line(("git", "config", key, key.split(".")[1].upper()), clone_dir)
            for key in identity_unset
        ]
        lines.insert(
            len(config) if config else 1,
            f"identity: {' and '.join(identity_unset)} not set: okstra would record this "
            f"clone's claims, approvals and verdicts as {fallback} (and git commit "
            f"refuses); set {'them' if len(sets) > 1 else 'it'}: {', then '.join(sets)}",
        )
    return Output(
        {
            "config": config,
            "projectId": project_id,
            "then": then,
            "identityUnset": list(identity_unset),
        },
        "\n".join(lines),
    )
