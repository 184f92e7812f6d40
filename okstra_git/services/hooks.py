"""Installing the gate where git will run it, beside whatever hook manager a repository uses.

Where git looks for hooks decides everything (docs/hooks.md, notes on hook managers):

- no ``core.hooksPath``: the common git dir's ``hooks/``, shared by every linked worktree.
  okstra's script goes into ``pre-push`` and a hook already there (git-lfs's, a team's) is
  kept as ``pre-push.okstra-chained`` and runs first with the same arguments and stdin. When
  pre-commit (or prek) owns ``pre-push``, okstra's script goes into ``pre-push.legacy``, which
  pre-commit runs first on every push with git's own arguments and stdin — every ref, deletions
  included — and never moves aside; pre-commit's script is never moved, so it can never end up
  running itself in "migration mode". When lefthook owns ``pre-push`` (it moves any other
  script to ``pre-push.old`` and never runs that), the gate has to be a lefthook script.
- ``core.hooksPath`` inside the work tree (husky's ``.husky/_``, a tracked ``.githooks``): a
  relative value is resolved in each worktree, and a file okstra wrote there would be an
  untracked file in one worktree and missing from the others. The team's own tracked hook is
  the one place every clone and worktree runs, so okstra writes nothing there and refuses,
  printing the one line to add (:data:`hooklayout.TEAM_LINE`).
- ``core.hooksPath`` from the global or system config: shared by other repositories, so okstra
  writes nothing there either.
- another ``core.hooksPath`` set for this repository only (outside its work trees): installed
  there like the common ``hooks/``.

Whether the gate really runs on a push from a worktree is worked out by following what git
runs there (:func:`runs_gate`); ``status`` reports it for every worktree.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path

from ..core.errors import BadInput, Refused
from ..core.resources import data_dir, installed_executable
from ..core.shell import command, okstra
from ..core.userfiles import write_atomic
from ..core.values import Record, Value, field
from ..git.process import git_text
from ..logic import hooklayout as L

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..gate.config import GateConfig

_EXE_LINE = "OKSTRA_EXE=''"
_SERVER_EXE_LINE = "OKSTRA_EXE=${OKSTRA_EXE:-git-okstra}"
_PYTHON_LINE = "OKSTRA_PYTHON=''"
_PATH_LINE = "OKSTRA_PATH=''"


# -- what git runs ------------------------------------------------------------------------------


class Layout(Value):
    """Where git runs hooks for one worktree, and who manages them."""

    worktree: Path | None
    """The worktree's root (``None`` in a bare repository)."""
    common_dir: Path
    hooks_dir: Path
    """Where git looks for hooks from this worktree (``git rev-parse --git-path hooks``)."""
    hooks_path: str | None
    """``core.hooksPath`` as configured, if set."""
    hooks_path_scope: str | None
    """Which config set it: ``local``, ``worktree``, ``global``, ``system``…"""

    @property
    def team_dir(self) -> bool:
        """The hooks folder is inside this worktree's files (not its git dir): a team's,
        tracked, or husky's."""
        return (
            self.worktree is not None
            and _inside(self.hooks_dir, self.worktree)
            and not _inside(self.hooks_dir, self.common_dir)
        )

    @property
    def husky(self) -> bool:
        return (self.hooks_dir / "h").is_file() and self.hooks_dir.name == "_"

    @property
    def team_hook(self) -> Path:
        """The hook file a team edits: husky runs ``.husky/<hook>`` from its ``_/`` stubs."""
        folder = self.hooks_dir.parent if self.husky else self.hooks_dir
        return folder / L.HOOK

    @property
    def manager(self) -> str:
        if self.hooks_path is not None:
            if self.husky:
                return "husky"
            if self.hooks_path_scope not in ("local", "worktree"):
                return f"core.hooksPath ({self.hooks_path_scope} config)"
            if self.team_dir:
                return "core.hooksPath in the work tree"
        kind = _kind(self.hooks_dir / L.HOOK)
        if kind == L.OKSTRA:  # okstra's own: the manager is whoever's hook it chains
            kind = _kind(self.hooks_dir / (L.HOOK + L.CHAINED_SUFFIX)) or L.OKSTRA
        names = {L.PRE_COMMIT: "pre-commit", L.LEFTHOOK: "lefthook", L.GIT_LFS: "git-lfs"}
        return names.get(kind or "", "none" if kind in (None, L.OKSTRA) else "a hook script")


def layout(cwd: Path) -> Layout:
    """Ask git where it runs hooks from ``cwd``'s worktree."""
    paths = ("--git-common-dir", "--git-path", "hooks", "--is-bare-repository")
    out = git_text(cwd, "rev-parse", "--path-format=absolute", *paths)
    common, hooks, bare = out.splitlines()
    worktree = None if bare == "true" else Path(git_text(cwd, "rev-parse", "--show-toplevel"))
    scoped = git_text(cwd, "config", "--show-scope", "--get", "core.hooksPath", check=False)
    scope, _, value = scoped.partition("\t")
    return Layout(
        worktree=worktree,
        common_dir=Path(common),
        hooks_dir=Path(hooks),
        hooks_path=value if scoped else None,
        hooks_path_scope=scope if scoped else None,
    )


class Runs(Value):
    """Does a push from this worktree run the gate, and through which files? (views/hooks.py's
    ``runs_words`` says how, or why not.)"""

    runs: bool
    via: tuple[Path, ...]
    """The chain git follows, from the hook it runs to the file that calls the gate."""
    how: str
    """Which case: ``no-hook`` (nothing at ``hook``), ``not-executable``, ``okstra`` (``hook``
    runs the gate), ``pre-commit-legacy`` (pre-commit's ``hook`` runs okstra's script
    ``via[1]`` first), ``pre-commit`` (no gate in its ``pre-push.legacy``), ``husky-gate``
    (husky runs ``team``, which runs the gate), ``husky`` (``team`` does not), ``lefthook-bare``,
    ``lefthook-gate`` (lefthook runs the script ``via[2]`` from its config ``via[1]``),
    ``lefthook`` (no such script declared), ``git-lfs`` or ``other`` (a hook that does not run
    the gate)."""
    hook: Path
    """The hook git runs (for ``no-hook``, where it would be)."""
    team: Path | None = None
    """The team's hook husky runs (the ``husky`` cases)."""


class WorktreeGate(Value):
    """One worktree of the repository, and whether a push from it runs the gate."""

    path: Path
    runs: Runs


def runs_gate(where: Layout) -> Runs:
    hook = where.hooks_dir / L.HOOK
    kind = _kind(hook)
    if kind is None:
        return Runs(False, (), "no-hook", hook)
    if not os.access(hook, os.X_OK):
        return Runs(False, (hook,), "not-executable", hook)
    if kind in (L.OKSTRA, L.CALLS_GATE):
        return Runs(True, (hook,), "okstra", hook)
    if kind == L.PRE_COMMIT:
        legacy = hook.with_name(f"{L.HOOK}.legacy")
        if _kind(legacy) in (L.OKSTRA, L.CALLS_GATE) and os.access(legacy, os.X_OK):
            return Runs(True, (hook, legacy), "pre-commit-legacy", hook)
        return Runs(False, (hook,), "pre-commit", hook)
    if kind == L.HUSKY:
        team = where.team_hook
        if _kind(team) == L.CALLS_GATE:
            return Runs(True, (hook, team), "husky-gate", hook, team)
        return Runs(False, (hook,), "husky", hook, team)
    if kind == L.LEFTHOOK:
        return _lefthook_runs(where, hook)
    return Runs(False, (hook,), "git-lfs" if kind == L.GIT_LFS else "other", hook)


def _lefthook_runs(where: Layout, hook: Path) -> Runs:
    root = where.worktree
    if root is None:
        return Runs(False, (hook,), "lefthook-bare", hook)
    scripts = [root / d / L.HOOK / L.LEFTHOOK_SCRIPT for d in (".lefthook", ".lefthook-local")]
    script = next((s for s in scripts if _kind(s) == L.CALLS_GATE), None)
    configs = [root / name for name in L.LEFTHOOK_CONFIG_NAMES]
    config = next((c for c in configs if L.lefthook_runs_script(_read(c) or "")), None)
    if script is not None and config is not None:
        return Runs(True, (hook, config, script), "lefthook-gate", hook)
    return Runs(False, (hook,), "lefthook", hook)


# -- install ------------------------------------------------------------------------------------


class Placed(Value):
    """What install did to one hook file (views/hooks.py's ``action`` words it)."""

    how: str
    """``unchanged``, ``updated``, ``installed``, ``kept-changes`` (updated; the script there
    held changes: kept aside as ``kept``) or ``chained`` (installed; the hook there is kept as
    ``kept`` and run first)."""
    kept: str | None = None
    """The name the file that was there is kept under."""
    hook: str | None = None
    """Which hook, for a server's install (``pre-receive``, ``update``)."""


class Removed(Value):
    """An okstra script uninstall took out."""

    path: Path
    kept: Path | None = None
    """Where it went instead: it held changes, or another okstra's script."""
    restored: bool = False
    """The hook it chained is back in its place."""


class Note(Value):
    """Something a person should know after install, uninstall or ``hooks status`` (views/
    hooks.py's ``note`` words each kind)."""

    kind: str
    """``pre-commit-restored`` (``path``: pre-commit's script, back), ``pre-commit-copy``
    (``path``: the copy removed), ``pre-commit-legacy`` (``path``: the gate's slot),
    ``husky-ahead`` (``path``: the team hook to edit), ``lfs-okstra-first`` and ``lfs-not-run``
    (a push would not upload LFS objects), ``not-gated`` (``path``: another worktree,
    ``runs``), ``still-runs`` (``path``: what still runs the gate), ``gitolite`` (``path``: the
    hooks folder); as ``hooks status``'s problems: ``here-not-run`` (``runs``) and
    ``worktree-not-run`` (``path``, ``runs``)."""
    path: Path | None = None
    runs: Runs | None = None


class Outcome(Record):
    """What install/uninstall did, where the gate lives, and what else a person should know."""

    manager: str
    gate: Path | None
    """The file that runs the gate (okstra's script or the team's hook), if any."""
    placed: list[Placed] = field(default_factory=list)
    """What install did to each hook file (none for uninstall)."""
    removed: list[Removed] | None = None
    """What uninstall took out (None for an install)."""
    notes: list[Note] = field(default_factory=list)


def install(cwd: Path, force: bool = False) -> Outcome:
    """Install or refresh the gate for pushes from ``cwd``'s worktree (and every worktree that
    shares its hooks folder); refuse, naming the exact line, where only the team may add it."""
    where = layout(cwd)
    now = runs_gate(where)
    if where.hooks_path is not None and (where.husky or where.team_dir):
        if now.runs:
            return Outcome(
                where.manager, now.via[-1], [Placed("unchanged")], None, _others(cwd, where)
            )
        raise Refused(_team_refusal(where))
    if where.hooks_path is not None and where.hooks_path_scope not in ("local", "worktree"):
        raise Refused(
            f"core.hooksPath={where.hooks_path} comes from your {where.hooks_path_scope} git "
            "config, so other repositories run the same hooks folder; okstra writes nothing "
            f"there. Add this line as the first command of {where.hooks_dir / L.HOOK}:\n"
            f"  {L.TEAM_LINE}\n(with okstra.protect set in every repository that uses it), or "
            "give this repository its own: "
            + command("git", "config", "core.hooksPath", str(where.common_dir / "hooks"))
        )
    kind = _kind(where.hooks_dir / L.HOOK)
    if kind == L.LEFTHOOK:
        if now.runs:
            return Outcome(
                "lefthook", now.via[-1], [Placed("unchanged")], None, _others(cwd, where)
            )
        raise Refused(_lefthook_refusal(where))
    manager = where.manager
    notes = _repair_pre_commit(where.hooks_dir)
    slot = L.HOOK + ".legacy" if _kind(where.hooks_dir / L.HOOK) == L.PRE_COMMIT else L.HOOK
    placed = _install_script(where.hooks_dir, slot, render_script(), force)
    if slot != L.HOOK:
        notes.append(Note("pre-commit-legacy", where.hooks_dir / slot))
    notes += _husky_ahead(where) + _lfs_unchained(cwd, where) + _others(cwd, where)
    return Outcome(manager, where.hooks_dir / slot, [placed], None, notes)


def uninstall(cwd: Path) -> Outcome:
    """Remove every okstra script that git could run for this repository, putting back what each
    one chained (a rename: bytes and mode as they were). Never touches a team's hook."""
    where = layout(cwd)
    removed: list[Removed] = []
    for folder in dict.fromkeys((where.hooks_dir, where.common_dir / "hooks")):
        for slot in (L.HOOK, L.HOOK + ".legacy", L.HOOK + ".old"):
            path = folder / slot
            if _kind(path) != L.OKSTRA:
                continue
            aside = None
            if not _as_written(_read(path) or ""):
                aside = _free_name(folder / f"{slot}{MODIFIED_SUFFIX}")
                os.replace(path, aside)
            chained = folder / (L.HOOK + L.CHAINED_SUFFIX)
            restored = chained.exists() or chained.is_symlink()
            if restored:
                os.replace(chained, path)  # no moment without a hook
            elif path.exists():
                path.unlink()
            removed.append(Removed(path, aside, restored))
    notes = []
    after = runs_gate(layout(cwd))
    if after.runs:
        notes.append(Note("still-runs", after.via[-1]))
    return Outcome(where.manager, None, [], removed, notes)


MODIFIED_SUFFIX = ".okstra-modified"
"""Where uninstall moves an okstra script that is not as okstra wrote it (lines a user added):
kept, never deleted."""


def _as_written(text: str) -> bool:
    """``text`` is the pre-push script this okstra writes, whatever installation it records."""
    return _same_script(text, (data_dir("hooks") / L.HOOK).read_text("utf-8"))


def _same_script(text: str, script: str) -> bool:
    """``text`` and ``script`` differ at most in the installation they record (the
    ``OKSTRA_*=`` lines hold paths)."""
    recorded = ("OKSTRA_EXE=", "OKSTRA_PYTHON=", "OKSTRA_PATH=")

    def plain(lines: str) -> list[str]:
        return [line for line in lines.splitlines() if not line.startswith(recorded)]

    return plain(text) == plain(script)


def _free_name(path: Path) -> Path:
    """``path``, or ``path.<time>`` when something is there already: nothing is overwritten."""
    if not (path.exists() or path.is_symlink()):
        return path
    return path.with_name(f"{path.name}.{time.time_ns()}")


def install_server(bare: Path, with_update: bool = False, force: bool = False) -> Outcome:
    """Install contrib's ``pre-receive`` (and ``update``) into a bare repository's hooks,
    chaining any hook already there."""
    if not bare.is_dir():
        raise BadInput(f"--server {bare}: no such folder")
    where = layout(bare)
    if where.worktree is not None:
        raise BadInput(f"--server {bare}: not a bare repository (it has a work tree)")
    gitolite = _gitolite(bare)
    if gitolite and with_update:
        raise Refused(
            f"{bare} is a gitolite repository: gitolite owns its update hook, and the next "
            "`gitolite setup` puts gitolite's back, dropping okstra's without a word. Install "
            "the pre-receive hook alone, which gitolite leaves in place (and which also sees a "
            "verdict notes commit pushed with the branch): "
            + okstra("hooks", "install", "--server", str(bare))
        )
    names = ["pre-receive", "update"] if with_update else ["pre-receive"]
    done = []
    for name in names:
        script = _record_exe(
            (data_dir("contrib") / name).read_text("utf-8"),
            _SERVER_EXE_LINE,
            lambda exe: f"OKSTRA_EXE=${{OKSTRA_EXE:-{shlex.quote(exe)}}}",
        )
        placed = _install_script(where.hooks_dir, name, script, force, name)
        done.append(placed.replace(hook=name))
    notes = [Note("gitolite", where.hooks_dir)] if gitolite else []
    return Outcome("gitolite" if gitolite else "server", where.hooks_dir / "pre-receive", done,
                   None, notes)  # fmt: skip


def _gitolite(bare: Path) -> bool:
    """A repository gitolite manages: it writes ``gl-conf`` into each, and links each one's
    ``update`` hook to its own common hook."""
    update = bare / "hooks" / "update"
    return (bare / "gl-conf").is_file() or (
        update.is_symlink() and "/hooks/common/" in os.readlink(update)
    )


def render_script() -> str:
    """The shipped ``hooks/pre-push`` with this installation's executable, the Python it runs
    on and the folder holding okstra_git recorded in it."""
    template = (data_dir("hooks") / L.HOOK).read_text("utf-8")
    exe = installed_executable()
    if exe is None:
        return template
    script = template.replace(_EXE_LINE, f"OKSTRA_EXE={shlex.quote(exe)}", 1)
    python = _interpreter(exe)
    if python is None:
        return script
    from ..core.resources import install_folder

    folder = install_folder()
    script = script.replace(_PATH_LINE, f"OKSTRA_PATH={shlex.quote(folder)}", 1)
    return script.replace(_PYTHON_LINE, f"OKSTRA_PYTHON={shlex.quote(python)}", 1)


def _interpreter(exe: str) -> str | None:
    """The Python a console script runs on: its ``#!`` line, when that is a plain path."""
    try:
        with open(exe, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    path = first[2:].strip() if first.startswith("#!") else ""
    if not os.path.isabs(path) or " " in path or not os.access(path, os.X_OK):
        return None  # a launcher (pip's /bin/sh trick for long paths, env …): run the script
    return path


def recorded_exe(text: str | None) -> str | None:
    """The git-okstra an installed script will run (recorded at install)."""
    for line in (text or "").splitlines():
        if line.startswith("OKSTRA_EXE="):
            value = shlex.split(line[len("OKSTRA_EXE=") :])
            return value[0] if value and value[0] else None
    return None


# -- helpers ------------------------------------------------------------------------------------


def _install_script(
    folder: Path, slot: str, script: str, force: bool, hook: str = L.HOOK
) -> Placed:
    """Put ``script`` at ``folder/slot``; a foreign file there moves to
    ``<hook>.okstra-chained`` (ours runs it first). If one is kept there already and another
    foreign file took the slot, both are someone's work: refuse unless ``force``, which keeps
    the older under a timestamped name — nothing is deleted."""
    path = folder / slot
    chained = folder / (hook + L.CHAINED_SUFFIX)
    text = _read(path)
    if text is not None and L.MARKER in text:
        if text == script:
            return Placed("unchanged")
        if _same_script(text, script):
            write_atomic(path, script.encode("utf-8"), "hook", mode=0o755)
            return Placed("updated")
        # Lines someone added (or another okstra's script): theirs, kept beside the new one.
        aside = _free_name(folder / f"{slot}{MODIFIED_SUFFIX}")
        os.replace(path, aside)
        write_atomic(path, script.encode("utf-8"), "hook", mode=0o755)
        return Placed("kept-changes", aside.name)
    folder.mkdir(parents=True, exist_ok=True)
    if text is None and not path.is_symlink():
        write_atomic(path, script.encode("utf-8"), "hook", mode=0o755)
        return Placed("installed")
    if chained.exists() or chained.is_symlink():
        if not force:
            raise Refused(
                f"{path} is a foreign hook and {chained} (a hook okstra kept aside earlier) "
                "exists too; okstra will not choose between them. Merge them into one, or "
                f"rerun with --force to chain the current one and keep the older as "
                f"{chained.name}.<time>"
            )
        os.replace(chained, chained.with_name(f"{chained.name}.{time.time_ns()}"))
    os.replace(path, chained)
    write_atomic(path, script.encode("utf-8"), "hook", mode=0o755)
    return Placed("chained", chained.name)


def _repair_pre_commit(folder: Path) -> list[Note]:
    """Undo what an older okstra did with pre-commit: it moved pre-commit's script aside and
    chained it, and a later ``pre-commit install`` made every push fail ("migration mode").

    - okstra at ``pre-push`` chaining pre-commit's script: pre-commit's goes back to
      ``pre-push`` (the install then puts okstra in ``pre-push.legacy``);
    - pre-commit at ``pre-push`` and a copy of its script chained: the copy is dropped.
    """
    hook, chained = folder / L.HOOK, folder / (L.HOOK + L.CHAINED_SUFFIX)
    if _kind(chained) != L.PRE_COMMIT:
        return []
    if _kind(hook) == L.OKSTRA:
        os.replace(chained, hook)
        return [Note("pre-commit-restored", hook)]
    if _kind(hook) == L.PRE_COMMIT:
        chained.unlink()
        return [Note("pre-commit-copy", chained)]
    return []


def _team_refusal(where: Layout) -> str:
    team = where.team_hook
    what = (
        f"husky runs {team} (core.hooksPath={where.hooks_path}; husky rewrites that folder on "
        "every install)"
        if where.husky
        else f"core.hooksPath={where.hooks_path} is inside the work tree, so each worktree "
        "runs its own checked-out copy of that folder"
    )
    exists = (
        f"add this line as the first command of {team}"
        if team.exists()
        else f"create {team} with this line"
    )
    return (
        f"{what}. okstra writes nothing there: a file it added would be untracked in this "
        f"worktree and missing from the others. To gate every push from every clone and "
        f"worktree, {exists} and commit it:\n  {L.TEAM_LINE}\n"
        f"then run `git okstra hooks status` to check."
    )


def _lefthook_refusal(where: Layout) -> str:
    root = where.worktree or where.common_dir
    config = "\n".join("  " + line for line in L.LEFTHOOK_CONFIG.splitlines())
    script = "\n".join("  " + line for line in L.LEFTHOOK_SCRIPT_TEXT.splitlines())
    return (
        f"lefthook owns {where.hooks_dir / L.HOOK}: it moves any other script to pre-push.old "
        "and never runs that, so the gate has to be a lefthook script. Add to "
        f"{root / 'lefthook.yml'}:\n{config}\nand create "
        f"{root / '.lefthook' / L.HOOK / L.LEFTHOOK_SCRIPT} (executable):\n{script}\n"
        "commit both, then run `git okstra hooks status` to check."
    )


def _lfs_unchained(cwd: Path, where: Layout) -> list[Note]:
    """Install's note when pushes from here would not upload LFS objects (:func:`lfs_problem`)."""
    problem = lfs_problem(cwd, where, runs_gate(where))
    return [] if problem is None else [problem]


def lfs_problem(cwd: Path, where: Layout, runs: Runs) -> Note | None:
    """Why a push from here would not upload LFS objects although this repository uses LFS
    (its pre-push is not in the chain git runs): ``lfs-okstra-first`` when okstra's hook was
    there first, so `git lfs install` refused with "Hook already exists", else
    ``lfs-not-run``; ``None`` when it would."""
    if not _lfs_used(cwd, where) or _lfs_runs(where, runs):
        return None
    first = _kind(where.hooks_dir / L.HOOK) == L.OKSTRA
    return Note("lfs-okstra-first" if first else "lfs-not-run")


def _lfs_used(cwd: Path, where: Layout) -> bool:
    """This repository uses git-lfs: its LFS filter is set in the repository's own config
    (`git lfs install --local`), or LFS filters files here (``filter=lfs`` in the work tree's
    ``.gitattributes`` or ``info/attributes``), or it holds LFS objects. A filter set in the
    global or system config alone does not count: Debian's git-lfs package sets one in
    /etc/gitconfig for every repository."""
    scoped = git_text(cwd, "config", "--show-scope", "--get-regexp", r"^filter\.lfs\.", check=False)
    if not scoped:
        return False
    if any(line.split("\t", 1)[0] in ("local", "worktree") for line in scoped.splitlines()):
        return True
    attributes = [where.common_dir / "info" / "attributes"]
    if where.worktree is not None:
        attributes.append(where.worktree / ".gitattributes")
    if any("filter=lfs" in (_read(path) or "") for path in attributes):
        return True
    return (where.common_dir / "lfs" / "objects").is_dir()


def _lfs_runs(where: Layout, runs: Runs) -> bool:
    """A push from here runs `git lfs pre-push`: a file in the chain git follows (okstra's
    scripts run the hook they chained) calls it, or lefthook owns the hook (it runs git-lfs
    itself)."""
    if where.manager == "lefthook":
        return True
    chain = list(runs.via) or [where.hooks_dir / L.HOOK]
    chain += [p.with_name(L.HOOK + L.CHAINED_SUFFIX) for p in chain if _kind(p) == L.OKSTRA]
    return any("lfs pre-push" in (_read(path) or "") for path in chain)


def push_problems(
    cwd: Path, where: Layout, runs: Runs, worktrees: list[WorktreeGate]
) -> list[Note]:
    """Every reason a push from this repository would not do what it should: from here or
    from another worktree it would not run the gate, or it would not upload LFS objects."""
    problems = []
    if not runs.runs:
        problems.append(Note("here-not-run", runs=runs))
    here = where.worktree
    for tree in worktrees:
        path = tree.path
        if not tree.runs.runs and (here is None or not _same(path, here)):
            problems.append(Note("worktree-not-run", path, tree.runs))
    lfs = lfs_problem(cwd, where, runs)
    if lfs is not None:
        problems.append(lfs)
    return problems


def _husky_ahead(where: Layout) -> list[Note]:
    """husky is declared but has not run yet: its first run repoints core.hooksPath and this
    hook stops running, so say now where the gate must go."""
    if where.hooks_path is not None or where.worktree is None:
        return []
    package = _read(where.worktree / "package.json") or ""
    team = where.worktree / ".husky" / L.HOOK
    if '"husky' not in package or _kind(team) == L.CALLS_GATE:
        return []
    return [Note("husky-ahead", team)]


def _others(cwd: Path, here: Layout) -> list[Note]:
    """A note for each other worktree of the repository from which a push is not gated."""
    notes = []
    for tree in _worktrees(cwd):
        if here.worktree is not None and _same(tree, here.worktree):
            continue
        try:
            there = runs_gate(layout(tree))
        except BadInput:
            continue  # a worktree whose folder is gone: git prunes it
        if not there.runs:
            notes.append(Note("not-gated", tree, there))
    return notes


def worktree_report(cwd: Path) -> list[WorktreeGate]:
    """Every worktree of the repository and whether a push from it runs the gate."""
    report = []
    for tree in _worktrees(cwd):
        try:
            there = runs_gate(layout(tree))
        except BadInput:
            continue
        report.append(WorktreeGate(tree, there))
    return report


def _worktrees(cwd: Path) -> list[Path]:
    out = git_text(cwd, "worktree", "list", "--porcelain")
    trees = []
    for block in out.split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].startswith("worktree ") and "bare" not in lines:
            path = Path(lines[0][len("worktree ") :])
            if path.is_dir():
                trees.append(path)
    return trees


def _record_exe(template: str, placeholder: str, line: Callable[[str], str]) -> str:
    exe = installed_executable()
    return template if exe is None else template.replace(placeholder, line(exe), 1)


def _kind(path: Path) -> str | None:
    text = _read(path)
    return None if text is None else L.classify(text)


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


# -- status -------------------------------------------------------------------------------------


class HookStatus(Value):
    """What ``hooks status`` finds: what git runs for a push from here and from every other
    worktree, the gate's settings, and what would stop a push being gated."""

    where: Layout
    runs: Runs
    """Whether a push from here runs the gate, and through which files."""
    worktrees: list[WorktreeGate]
    """Every worktree and whether a push from it runs the gate (:func:`worktree_report`)."""
    config: GateConfig | None
    """The gate's settings; None when they cannot be read (``broken`` says why)."""
    broken: BadInput | None
    executable: str | None
    """The okstra the installed hook runs, as recorded in it."""
    problems: list[Note]
    """Why a push would not be gated (:func:`push_problems`)."""
    lfs: Note | None
    """Why a push would not upload LFS objects (:func:`lfs_problem`)."""


def hook_status(cwd: Path) -> HookStatus:
    """Everything ``hooks status`` shows for a push from ``cwd``."""
    from ..gate.config import GateConfig

    where = layout(cwd)
    runs = runs_gate(where)
    worktrees = worktree_report(cwd)
    config: GateConfig | None
    try:
        config, broken = GateConfig.load(str(where.worktree or where.common_dir)), None
    except BadInput as exc:  # what is installed still shows; the gate's state is the answer
        config, broken = None, exc
    executable = recorded_exe(_read_text(runs.via[-1])) if runs.runs else None
    problems = push_problems(cwd, where, runs, worktrees)
    lfs = lfs_problem(cwd, where, runs)
    return HookStatus(where, runs, worktrees, config, broken, executable, problems, lfs)


def _read_text(path: Path) -> str | None:
    """The file as text (newlines read as ``\\n``); None when it cannot be read."""
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return None
