"""What ``hooks install``, ``hooks uninstall`` and ``hooks status`` print."""

from __future__ import annotations

from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..services.hooks import HookStatus, Note, Outcome, Placed, Removed, Runs


def installed(outcome: Outcome) -> Output:
    """What install or uninstall did, where the gate lives, and the notes for a person."""
    done = action(outcome)
    notes = [note(n) for n in outcome.notes]
    lines = [f"{done} ({outcome.manager})"]
    if outcome.gate is not None:
        lines.append(f"gate: {outcome.gate}")
    lines += [f"note: {said}" for said in notes]
    return Output(
        {
            "action": done,
            "manager": outcome.manager,
            "gate": str(outcome.gate) if outcome.gate else None,
            "notes": notes,
        },
        "\n".join(lines),
    )


def action(outcome: Outcome) -> str:
    """What install or uninstall did, in one phrase (``--json``'s action)."""
    if outcome.removed is not None:
        if not outcome.removed:
            return "not installed"
        return "removed " + ", ".join(map(_removed, outcome.removed))
    return "; ".join(map(placed, outcome.placed))


def placed(done: Placed) -> str:
    """What install did to one hook file (a server's: named first)."""
    said = {
        "chained": f"installed (chained the existing hook, kept as {done.kept})",
        "kept-changes": "updated (the script held changes of yours, or another okstra's: "
        f"kept as {done.kept})",
    }.get(done.how, done.how)
    return said if done.hook is None else f"{done.hook} {said}"


def _removed(gone: Removed) -> str:
    said = str(gone.path)
    if gone.kept is not None:
        said += f" (it holds changes of yours, or another okstra's script: kept as {gone.kept})"
    if gone.restored:
        said += " (restored the hook it chained)"
    return said


_LFS_WHY = (
    "this repository uses git-lfs but no hook a push runs calls `git lfs pre-push`, so LFS "
    "objects are not uploaded"
)

# One line for a team's hook: both read the pushed refs on stdin, so it is kept and fed to each.
_LFS_AND_GATE = (
    'input=$(cat); printf \'%s\\n\' "$input" | git lfs pre-push "$@" || exit 1; '
    'printf \'%s\\n\' "$input" | git okstra hooks run pre-push "$@" || exit 1'
)


def note(said: Note) -> str:
    """A note of install, uninstall or ``hooks status`` (one of its problems, its lfs)."""
    import shlex

    from ..core.shell import command, okstra
    from ..logic.hooklayout import HOOK, TEAM_LINE

    path, why = said.path, runs_words(said.runs) if said.runs is not None else ""
    match said.kind:
        case "pre-commit-restored":
            return f"moved pre-commit's script back to {path} (an older okstra had moved it aside)"
        case "pre-commit-copy":
            return (
                f"removed {path}: a copy of pre-commit's script that okstra's hook ran from "
                "inside pre-commit, which fails every push in 'migration mode'"
            )
        case "pre-commit-legacy":
            slot = path.name if path is not None else ""
            return (
                f"pre-commit owns {HOOK}: the gate is {slot}, which pre-commit runs first on "
                "every push (`pre-commit install -f` deletes it; run this again after one)"
            )
        case "husky-ahead":
            return (
                "package.json uses husky: once it runs (npm install), core.hooksPath moves to "
                f".husky/_ and this hook stops running. Add this line as the first command of "
                f"{path} and commit it:\n  {TEAM_LINE}"
            )
        case "lfs-okstra-first":
            steps = (okstra("hooks", "uninstall"), command("git", "lfs", "install"))
            again = " && ".join((*steps, okstra("hooks", "install")))
            return (
                f"{_LFS_WHY} (okstra's hook was there first, so git-lfs did not install it). "
                f"Run: {again}"
            )
        case "lfs-not-run":
            return (
                f"{_LFS_WHY}. The hook that runs the gate must also run git-lfs with the same "
                f"stdin, e.g. {_LFS_AND_GATE} (`git lfs update --manual` prints git-lfs's own "
                "lines)"
            )
        case "not-gated":
            return f"a push from the worktree {path} is not gated: {why}"
        case "still-runs":
            return f"the gate still runs from {path}, which is not okstra's to change"
        case "gitolite":
            return (
                "gitolite: `gitolite setup` keeps this pre-receive unless a pre-receive in "
                "~/.gitolite/hooks/common (or a repo-specific hook) is installed over it; check "
                f"with ls -l {shlex.quote(str(path))} after one"
            )
        case "here-not-run":
            return f"a push from here does not run the gate: {why}"
        case "worktree-not-run":
            return f"a push from the worktree {path} does not run the gate: {why}"
    raise AssertionError(f"a hook note with no words: {said.kind}")


def runs_words(runs: Runs) -> str:
    """One sentence: how a push from a worktree runs the gate, or why it does not."""
    hook, team, via = runs.hook, runs.team, runs.via
    match runs.how:
        case "no-hook":
            return f"there is no {hook}"
        case "not-executable":
            return f"{hook} is not executable, so git skips it"
        case "okstra":
            return f"git runs {hook}, which runs the gate"
        case "pre-commit-legacy":
            return f"pre-commit's {hook} runs {via[1].name} first, the gate"
        case "pre-commit":
            return (
                f"pre-commit owns {hook} and no okstra gate is in {hook.name}.legacy (pre-commit's "
                "own pre-push hooks see one ref of a push at most)"
            )
        case "husky-gate":
            return f"husky's {hook} runs {team}, which runs the gate"
        case "husky":
            return f"husky runs {team}, which does not run the gate"
        case "lefthook-bare":
            return "lefthook runs in a work tree; this repository is bare"
        case "lefthook-gate":
            return f"lefthook runs {via[2]} from {via[1].name}"
        case "lefthook":
            from ..logic.hooklayout import LEFTHOOK_SCRIPT

            return (
                f"lefthook owns {hook}, and no pre-push script {LEFTHOOK_SCRIPT} that runs the "
                "gate is declared with use_stdin: true"
            )
        case "git-lfs":
            return f"{hook} is git-lfs's hook that does not run the gate"
        case "other":
            return f"{hook} is a hook that does not run the gate"
    raise AssertionError(f"a gate layout with no words: {runs.how}")


def status(found: HookStatus) -> Output:
    """What git runs for a push, the gate's settings; exit 1 with the fix when a push would not
    be gated or the settings cannot be read."""
    from ..core.shell import okstra as okstra_command

    where, runs, worktrees, config = found.where, found.runs, found.worktrees, found.config
    problems = [note(problem) for problem in found.problems]
    broken, executable = found.broken, found.executable
    data = {
        "manager": where.manager,
        "hooksDir": str(where.hooks_dir),
        "coreHooksPath": where.hooks_path,
        "runs": runs.runs,
        "why": runs_words(runs),
        "via": [str(p) for p in runs.via],
        "executable": executable,
        "worktrees": [
            {"path": str(w.path), "runs": w.runs.runs, "why": runs_words(w.runs)} for w in worktrees
        ],
        "lfs": None if found.lfs is None else note(found.lfs),
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
        f"a push from here {'runs' if runs.runs else 'does NOT run'} the gate: {runs_words(runs)}",
        f"runs: {executable}" if executable else None,
        *(
            f"worktree {w.path}: {'gated' if w.runs.runs else 'NOT gated'} ({runs_words(w.runs)})"
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
