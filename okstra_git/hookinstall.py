"""Installing and removing the pre-push hook script (SPEC §7).

Like the careful hook managers: the hook goes into ``core.hooksPath`` when set, else the
common git dir's ``hooks/`` (linked worktrees share it); a foreign hook already there is kept
as ``pre-push.okstra-chained`` and runs first with the same arguments and stdin; our script
carries a marker so reinstalling is idempotent, and uninstalling puts the foreign hook back
exactly (a rename keeps its bytes and mode).
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import Refused
from .gitlayer import GitRepo
from .resources import data_dir, installed_executable

HOOK = "pre-push"
MARKER = "okstra-git-managed-hook"
CHAINED_SUFFIX = ".okstra-chained"
_EXE_LINE = "OKSTRA_EXE=''"


@dataclass(frozen=True)
class HookState:
    """What is at the hook path now."""

    hooks_dir: Path
    """Where git looks for hooks in this repository."""
    path: Path
    """``<hooks_dir>/pre-push``."""
    chained: Path
    """Where a foreign hook is kept while ours runs: ``pre-push.okstra-chained``."""
    installed: bool
    """Our script is at ``path``."""
    foreign: bool
    """Another script is at ``path``."""
    has_chained: bool
    """A kept foreign hook exists."""
    executable: str | None
    """The git-okstra executable our script will run (recorded at install), if installed."""

    def to_data(self) -> dict[str, object]:
        return {
            "hooksDir": str(self.hooks_dir),
            "path": str(self.path),
            "installed": self.installed,
            "foreign": self.foreign,
            "chained": str(self.chained) if self.has_chained else None,
            "executable": self.executable,
        }


def hooks_dir(repo: GitRepo) -> Path:
    """``core.hooksPath`` (``~`` expanded; relative to the work tree, as git reads it) or the
    common git dir's ``hooks/`` — never ``.git/worktrees/<name>/hooks``."""
    configured = repo.config_get("core.hooksPath")
    if configured:
        path = Path(os.path.expanduser(configured))
        if not path.is_absolute():
            path = (repo.workdir or repo.git_dir) / path
        return path
    return repo.common_dir / "hooks"


def state(repo: GitRepo) -> HookState:
    folder = hooks_dir(repo)
    path = folder / HOOK
    chained = folder / (HOOK + CHAINED_SUFFIX)
    text = _read(path)
    ours = text is not None and MARKER in text
    dangling = path.is_symlink() and not path.exists()
    return HookState(
        hooks_dir=folder,
        path=path,
        chained=chained,
        installed=ours,
        foreign=(text is not None and not ours) or dangling,
        has_chained=chained.is_symlink() or chained.exists(),
        executable=_recorded_exe(text) if ours else None,
    )


def install(repo: GitRepo, force: bool = False) -> tuple[str, HookState]:
    """Install or refresh our hook; returns (what happened, the state after).

    A foreign hook is moved aside and chained. If one is already kept aside (someone replaced
    our script after an install), both are foreign work: refuse unless ``force``, which chains
    the current one and keeps the older one under a timestamped name — nothing is deleted.
    """
    before = state(repo)
    script = render_script()
    if before.installed:
        if _read(before.path) == script:
            return "unchanged", before
        _write_executable(before.path, script)
        return "updated", state(repo)
    before.hooks_dir.mkdir(parents=True, exist_ok=True)
    action = "installed"
    if before.foreign:
        if before.has_chained:
            if not force:
                raise Refused(
                    f"{before.path} is a foreign hook and {before.chained} (a hook okstra kept "
                    "aside earlier) exists too; okstra will not choose between them. Merge them "
                    "into one, or rerun with --force to chain the current one and keep the "
                    f"older as {before.chained.name}.<time>"
                )
            older = before.chained.with_name(f"{before.chained.name}.{time.time_ns()}")
            os.replace(before.chained, older)
        os.replace(before.path, before.chained)
        action = "installed (chained the existing hook)"
    _write_executable(before.path, script)
    return action, state(repo)


def uninstall(repo: GitRepo) -> tuple[str, HookState]:
    """Remove our hook and put a kept foreign hook back; a foreign hook alone is left alone."""
    before = state(repo)
    if before.foreign:
        raise Refused(
            f"{before.path} is not okstra's hook (no {MARKER!r} marker); leaving it alone"
        )
    if not before.installed and not before.has_chained:
        return "not installed", before
    if before.has_chained:
        # One rename over our script: no moment without a hook, and the bytes and mode stay.
        os.replace(before.chained, before.path)
        return "removed (restored the chained hook)", state(repo)
    before.path.unlink()
    return "removed", state(repo)


def render_script() -> str:
    """The shipped ``hooks/pre-push`` with this installation's executable recorded in it."""
    template = (data_dir("hooks") / HOOK).read_text("utf-8")
    exe = installed_executable()
    if exe is None:
        return template
    return template.replace(_EXE_LINE, f"OKSTRA_EXE={shlex.quote(exe)}", 1)


def _recorded_exe(text: str | None) -> str | None:
    for line in (text or "").splitlines():
        if line.startswith("OKSTRA_EXE="):
            value = shlex.split(line[len("OKSTRA_EXE=") :])
            return value[0] if value and value[0] else None
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except (FileNotFoundError, IsADirectoryError):
        return None


def _write_executable(path: Path, text: str) -> None:
    """Write atomically: a temp file in the same folder, made executable, renamed over."""
    tmp = path.with_name(f".{path.name}.okstra-{os.getpid()}.tmp")
    try:
        tmp.write_text(text, "utf-8")
        tmp.chmod(0o755)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
