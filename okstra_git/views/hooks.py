"""What ``hooks install``, ``hooks uninstall`` and ``hooks status`` print."""

from __future__ import annotations

from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..services.hooks import HookStatus, Outcome


def installed(outcome: Outcome) -> Output:
    """What install or uninstall did, where the gate lives, and the notes for a person."""
    lines = [f"{outcome.action} ({outcome.manager})"]
    if outcome.gate is not None:
        lines.append(f"gate: {outcome.gate}")
    lines += [f"note: {note}" for note in outcome.notes]
    return Output(
        {
            "action": outcome.action,
            "manager": outcome.manager,
            "gate": str(outcome.gate) if outcome.gate else None,
            "notes": outcome.notes,
        },
        "\n".join(lines),
    )


def status(found: HookStatus) -> Output:
    """What git runs for a push, the gate's settings; exit 1 with the fix when a push would not
    be gated or the settings cannot be read."""
    from ..core.shell import okstra as okstra_command

    where, runs, worktrees, config = found.where, found.runs, found.worktrees, found.config
    problems, broken, executable = found.problems, found.broken, found.executable
    data = {
        "manager": where.manager,
        "hooksDir": str(where.hooks_dir),
        "coreHooksPath": where.hooks_path,
        "runs": runs.runs,
        "why": runs.why,
        "via": [str(p) for p in runs.via],
        "executable": executable,
        "worktrees": [
            {"path": str(w.path), "runs": w.runs.runs, "why": w.runs.why} for w in worktrees
        ],
        "lfs": found.lfs,
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
            f"worktree {w.path}: {'gated' if w.runs.runs else 'NOT gated'} ({w.runs.why})"
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
