"""Repository set-up: okstra's config keys, the refspecs that carry its data, how plain git
merges its notes, and keeping its workspace out of ``git status``."""

from __future__ import annotations

from ..core.errors import BadInput
from ..core.keys import check_project_id
from ..core.tracking import fetch_refspecs
from ..core.userfiles import write_atomic
from ..gate.config import protect_glob
from ..records.claim import DEFAULT_LEASE, LEASE_KEY
from ..records.refnames import NOTES_REFS
from .context import Context
from .identity import CLONE_KEY, clone_id, ensure_clone_id
from .layout import checked_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import timedelta

    from .hooks import Outcome

WORKSPACE_EXCLUDE = "/.okstra/"


def init(
    ctx: Context,
    project_id: str | None,
    worktree_root: str | None,
    protect: list[str],
    remote: str | None,
    hooks: bool = False,
    lease: timedelta | str | None = None,
) -> dict[str, str | Outcome]:
    """Write the given settings; returns what was set (``hooks.pre-push``: what the hook's
    install did). Existing refspecs are not duplicated.

    Always (idempotently): ``notes.<ref>.mergeStrategy=cat_sort_uniq`` for each okstra notes
    ref, so a plain ``git notes merge`` of two clones' JSON-Lines notes never conflicts, and
    ``/.okstra/`` in the common ``info/exclude``; ``okstra.claim.lease`` to ``lease`` (a
    duration or ``none``), or to 2h when unset, so a claim whose agent dies frees its stage
    (docs/agents.md). Every value is checked before anything is written, so bad input changes
    nothing.
    """
    if project_id is not None:
        check_project_id(project_id, "--project-id")
    else:
        _ = ctx.default_project  # refused (with the fix) when no task key could hold it
    globs = []
    for value in protect:
        try:
            globs.append(protect_glob(value))  # stored as the full ref glob the gate reads
        except BadInput as exc:
            raise BadInput(f"--protect {value!r}: {exc}") from None
    if worktree_root is not None:
        checked_root(ctx, worktree_root, "--worktree-root")
    if remote is not None and ctx.repo.config_get(f"remote.{remote}.url") is None:
        raise BadInput(f"--remote {remote!r}: no such remote (see git remote -v)")

    repo = ctx.repo
    changes: dict[str, str | Outcome] = {}
    if project_id is not None:
        repo.config_set("okstra.projectId", project_id)
        changes["okstra.projectId"] = project_id
    if worktree_root is not None:
        repo.config_set("okstra.worktreeRoot", worktree_root)
        changes["okstra.worktreeRoot"] = worktree_root
    if globs:
        if repo.config_get_all("okstra.protect"):
            repo.config_unset_all("okstra.protect")
        for glob in globs:
            repo.config_add("okstra.protect", glob)
        changes["okstra.protect"] = ", ".join(globs)
    if remote is not None:
        have = ctx.repo.config_get_all(f"remote.{remote}.fetch")
        added = [spec for spec in fetch_refspecs(remote) if spec not in have]
        for spec in added:
            repo.config_add(f"remote.{remote}.fetch", spec)
        if added:
            changes[f"remote.{remote}.fetch"] = ", ".join(added)
    if lease is not None or repo.config_get(LEASE_KEY) is None:
        text = _lease_text(lease)
        repo.config_set(LEASE_KEY, text)
        changes[LEASE_KEY] = text
    for ref in NOTES_REFS:
        # git reads notes.<name>.mergeStrategy for the exact name merged into; no globs.
        key = f"notes.{ref.removeprefix('refs/notes/')}.mergeStrategy"
        if repo.config_get(key) is None:
            repo.config_set(key, "cat_sort_uniq")
            changes[key] = "cat_sort_uniq"
    if clone_id(repo) is None:  # this clone's identity (docs/workflow.md): made once, kept
        changes[CLONE_KEY] = ensure_clone_id(repo)
    if _exclude_workspace(ctx):
        changes["info/exclude"] = WORKSPACE_EXCLUDE
    if hooks:
        from . import hooks as hookinstall

        outcome = hookinstall.install(ctx.workdir or ctx.repo.git_dir)
        changes["hooks.pre-push"] = outcome  # views/init.py says what it did, and where
    return changes


def identity_unset(ctx: Context) -> list[str]:
    """What of ``user.name`` and ``user.email`` is not set: every claim, approval and verdict
    of this clone would be recorded under the fallback identity, and git commit refuses."""
    return ctx.repo.identity_unset()


def unshared_remote(ctx: Context) -> str | None:
    """A remote of this clone that does not carry okstra's refs yet (``origin`` first), which a
    team clone shares through with ``init --remote``; None when there is none."""
    names = ctx.repo.remote_names()
    for name in sorted(names, key=lambda n: n != "origin"):
        have = ctx.repo.config_get_all(f"remote.{name}.fetch")
        if not all(spec in have for spec in fetch_refspecs(name)):
            return name
    return None


def shares_tasks(ctx: Context, remote: str) -> bool:
    """``remote`` already holds okstra tasks (``git ls-remote``): a team shares through it, and
    a clone that starts a task alone would be unseen by the others. Asked without a credential
    prompt (init did not ask for the network); a remote that cannot be asked does not."""
    from ..git.process import git, no_prompts
    from ..records.refnames import TASKS_PREFIX

    with no_prompts():
        proc = git(ctx.clone_dir, "ls-remote", "--refs", remote, f"{TASKS_PREFIX}*")
    return proc.returncode == 0 and bool(proc.stdout.strip())


def _lease_text(lease: timedelta | str | None) -> str:
    """How ``okstra.claim.lease`` spells ``lease`` (None: the default), as ``--lease`` takes it."""
    if lease is None:
        return DEFAULT_LEASE
    if isinstance(lease, str):
        return lease
    seconds = int(lease.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _exclude_workspace(ctx: Context) -> bool:
    """Add ``/.okstra/`` to the common dir's ``info/exclude`` (every worktree reads that one);
    False when a line already names it."""
    exclude = ctx.repo.common_dir / "info" / "exclude"
    text = exclude.read_text("utf-8") if exclude.is_file() else ""
    if any(
        line.strip() in (".okstra", ".okstra/", "/.okstra", "/.okstra/")
        for line in text.splitlines()
    ):
        return False
    exclude.parent.mkdir(parents=True, exist_ok=True)
    lead = "" if not text or text.endswith("\n") else "\n"
    added = f"{lead}# okstra's local workspace (git okstra init)\n{WORKSPACE_EXCLUDE}\n"
    write_atomic(exclude, (text + added).encode("utf-8"), "info/exclude")
    return True
