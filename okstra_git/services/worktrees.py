"""Task and stage worktrees (SPEC §5): where they live, making them, listing, tearing down.

Layout under ``okstra.worktreeRoot`` (default ``~/.okstra/worktrees``)::

    <root>/<project>/<group>/<id>/task        branch okstra/<group>/<id>/task
    <root>/<project>/<group>/<id>/stage-<N>   branch okstra/<group>/<id>/stage-<N>,
                                              git worktree name okstra-<group>-<id>-stage-<N>

The task worktree is where finished stages are merged (by the user); its HEAD is the base of
every new stage. Teardown never loses work: ``prune`` refuses, naming files and commits, a
worktree with uncommitted changes or a branch with commits the task worktree HEAD lacks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, Conflict, Refused
from ..gitlayer import (
    RefMoved,
    add_worktree,
    commits_not_in,
    delete_branch,
    dirty_paths,
    main_worktree,
    remove_worktree,
    worktree_at,
    worktree_head,
)
from ..keys import TaskKey, slug
from ..records.claim import load_claims
from ..strict import unknown_home
from .context import Context

ROOT_CONFIG = "okstra.worktreeRoot"


@dataclass(frozen=True)
class Layout:
    """Where one task's worktrees and branches are."""

    key: TaskKey
    """The task."""
    folder: Path
    """``<root>/<project>/<group>/<id>``: every worktree of the task is inside it."""

    @property
    def _names(self) -> str:
        return f"{self.key.group_slug}-{self.key.id_slug}"

    @property
    def task_path(self) -> Path:
        return self.folder / "task"

    @property
    def task_branch(self) -> str:
        return f"okstra/{self.key.ref_suffix}/task"

    @property
    def task_name(self) -> str:
        return f"okstra-{self._names}-task"

    def stage_path(self, stage: int) -> Path:
        return self.folder / f"stage-{stage}"

    def stage_branch(self, stage: int) -> str:
        return f"okstra/{self.key.ref_suffix}/stage-{stage}"

    def stage_name(self, stage: int) -> str:
        return f"okstra-{self._names}-stage-{stage}"


def layout(ctx: Context, key: TaskKey) -> Layout:
    folder = worktree_root(ctx) / slug(key.project) / key.group_slug / key.id_slug
    return Layout(key, Path(os.path.abspath(folder)))


def worktree_root(ctx: Context) -> Path:
    """``okstra.worktreeRoot`` (``~`` expanded; relative to the main worktree, like git), else
    ``~/.okstra/worktrees``. A value that cannot hold folders — empty, ``~nosuchuser``, or a
    path through a file — is refused here with the fix, before anything is made under it."""
    configured = ctx.repo.config_get(ROOT_CONFIG)
    if configured is None:
        return Path.home() / ".okstra" / "worktrees"
    return checked_root(ctx, configured, f"config {ROOT_CONFIG}")


def checked_root(ctx: Context, value: str, where: str) -> Path:
    """``value`` as a worktree root, or BadInput naming ``where`` and the fix."""
    fix = "Fix: git config okstra.worktreeRoot PATH (a folder you can write)"
    if not value.strip():
        raise BadInput(f"{where} is empty, so it names no folder. {fix}")
    why = unknown_home(value)
    if why is not None:
        raise BadInput(f"{where} = {value!r}: {why}. {fix}")
    root = Path(os.path.expanduser(value))
    if not root.is_absolute():
        root = main_worktree(ctx.repo)[0] / root
    existing = next((p for p in (root, *root.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise BadInput(
            f"{where} = {value!r}: {existing} is a file, not a folder, so no worktree can be "
            f"made under it. {fix}"
        )
    return root


def make_task_folder(lay: Layout) -> None:
    """Make the folder every worktree of the task goes in; refuse clearly when the root
    cannot hold it (``/proc/…``, a read-only disk), before any claim or branch is written."""
    try:
        lay.folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(
            f"cannot make the worktree folder {lay.folder} ({exc.strerror}); point "
            "okstra.worktreeRoot at a folder you can write: git config okstra.worktreeRoot PATH"
        ) from exc


def task_head(ctx: Context, lay: Layout) -> str:
    """The task worktree HEAD: its branch head (merges in the task worktree move it), or the
    main worktree HEAD before the task worktree exists."""
    head = ctx.repo.read_ref(f"refs/heads/{lay.task_branch}")
    return head if head is not None else main_worktree(ctx.repo)[1]


def task_worktree_path(ctx: Context, lay: Layout) -> Path:
    """Where the task branch is checked out (the user may have moved it), else the default."""
    return ctx.repo.worktree_for_branch(lay.task_branch) or lay.task_path


def ensure_task_worktree(ctx: Context, lay: Layout) -> Path:
    """The task worktree, made from the main worktree HEAD the first time it is needed."""
    found = ctx.repo.worktree_for_branch(lay.task_branch)
    if found is not None and found.exists():
        return found
    make_task_folder(lay)
    add_worktree(ctx.repo, lay.task_name, lay.task_path, lay.task_branch, task_head(ctx, lay))
    return lay.task_path


def check_stage_slot(ctx: Context, lay: Layout, stage: int) -> None:
    """Refuse before claiming when the stage's worktree folder is taken by something else, so
    the claim does not land only to be rolled back."""
    path = lay.stage_path(stage)
    found = worktree_at(ctx.repo, path)
    if found is None and path.exists() and any(path.iterdir()):
        raise Refused(
            f"{path} exists and is not the worktree of stage {stage} of {lay.key}; move it "
            "away or remove it, then claim again"
        )


def provision_stage(
    ctx: Context, lay: Layout, stage: int, path: Path, start: str
) -> tuple[bool, bool]:
    """Make (or reuse) the stage worktree and branch; says which of the two this call made."""
    return add_worktree(ctx.repo, lay.stage_name(stage), path, lay.stage_branch(stage), start)


def remove_stage(ctx: Context, path: Path, branch: str, branch_head: str | None) -> None:
    """Remove a stage's worktree, then its branch (if still at ``branch_head``)."""
    remove_worktree(ctx.repo, path)
    if branch_head is not None:
        delete_branch(ctx.repo, branch, branch_head)


# ---------------------------------------------------------------------------------------------
# Listing and teardown


@dataclass(frozen=True)
class WorktreeEntry:
    """One worktree of a task as ``worktree list`` shows it."""

    kind: str
    """``task`` or ``stage``."""
    stage: int | None
    """The stage number (stage worktrees)."""
    path: str
    """Folder of the worktree (recorded or default; it may be gone)."""
    branch: str
    """Its branch."""
    exists: bool
    """Whether the folder is a worktree now."""
    head: str | None
    """The commit checked out, or the branch head when the folder is gone."""
    dirty: list[str]
    """Uncommitted paths (outside ``.okstra/``)."""
    claim_status: str | None
    """The stage's claim status (stage worktrees)."""
    run_id: str | None
    """The run holding or having held the stage."""

    def to_data(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "stage": self.stage,
            "path": self.path,
            "branch": self.branch,
            "exists": self.exists,
            "head": self.head,
            "dirty": self.dirty,
            "claimStatus": self.claim_status,
            "runId": self.run_id,
        }


def _entry(
    ctx: Context,
    kind: str,
    stage: int | None,
    path: Path,
    branch: str,
    status: str | None,
    run_id: str | None,
) -> WorktreeEntry:
    head = worktree_head(path, ctx.repo)
    exists = head is not None
    return WorktreeEntry(
        kind=kind,
        stage=stage,
        path=str(path),
        branch=branch,
        exists=exists,
        head=head if exists else ctx.repo.read_ref(f"refs/heads/{branch}"),
        dirty=dirty_paths(path) if exists else [],
        claim_status=status,
        run_id=run_id,
    )


def list_worktrees(ctx: Context, key: TaskKey) -> list[WorktreeEntry]:
    """The task worktree and every claimed stage's worktree (made or not)."""
    lay = layout(ctx, key)
    entries = [_entry(ctx, "task", None, task_worktree_path(ctx, lay), lay.task_branch, None, None)]
    for number, state in sorted(load_claims(ctx.repo, key).items()):
        claim = state.claim
        if not claim.worktree_path:
            continue  # claimed with --no-worktree
        entries.append(
            _entry(
                ctx,
                "stage",
                number,
                Path(claim.worktree_path),
                claim.branch,
                claim.status,
                claim.run_id,
            )
        )
    return entries


@dataclass(frozen=True)
class PruneResult:
    """What ``worktree prune`` removed, and what it refused (forced or not)."""

    removed: list[int]
    """Stages whose worktree and branch are gone now."""
    problems: list[str]
    """Work that would be lost, one line per worktree or branch (removed anyway with force)."""


def _unmerged(ctx: Context, branch: str, head: str, task: str | None) -> str | None:
    """What prune would lose of ``branch``: its commits the task worktree HEAD lacks."""
    if task is None:
        return f"branch {branch} ({head[:12]}) cannot be checked: the task branch does not exist"
    commits = commits_not_in(ctx.repo, head, task)
    if not commits:
        return None
    listed = "; ".join(f"{sha[:12]} {subject}" for sha, subject in commits)
    return (
        f"branch {branch} has {len(commits)}{'+' if len(commits) >= 20 else ''} commit(s) not "
        f"in the task worktree HEAD {task[:12]}: {listed}"
    )


def prune(ctx: Context, key: TaskKey, force: bool) -> PruneResult:
    """Remove worktrees and branches of done stages; refuse (unless ``force``) losing work."""
    lay = layout(ctx, key)
    task = ctx.repo.read_ref(f"refs/heads/{lay.task_branch}")
    targets: list[tuple[int, Path, str, str | None]] = []
    problems: list[str] = []
    for number, state in sorted(load_claims(ctx.repo, key).items()):
        claim = state.claim
        if claim.status != "done" or not claim.branch:
            continue
        path, branch = Path(claim.worktree_path), claim.branch
        found = worktree_at(ctx.repo, path)
        head = ctx.repo.read_ref(f"refs/heads/{branch}")
        if found is None and head is None:
            continue  # already pruned
        elsewhere = ctx.repo.worktree_for_branch(branch)
        if elsewhere is not None and (found is None or elsewhere.resolve() != found.path.resolve()):
            raise Refused(
                f"stage {number}'s branch {branch} is checked out in {elsewhere}; switch that "
                "worktree to another branch before pruning"
            )
        if found is not None and not found.prunable:
            dirty = dirty_paths(found.path)
            if dirty:
                problems.append(
                    f"stage {number} worktree {found.path} has uncommitted changes: "
                    + ", ".join(dirty)
                )
        if head is not None:
            why = _unmerged(ctx, branch, head, task)
            if why is not None:
                problems.append(f"stage {number}: {why}")
        targets.append((number, path, branch, head))
    if problems and not force:
        raise Refused(
            "worktree prune would lose work, so nothing was removed:\n"
            + "\n".join(f"  - {p}" for p in problems)
            + f"\nmerge or commit it (task worktree: {task_worktree_path(ctx, lay)}), or "
            f"remove anyway with: git okstra worktree prune '{key}' --force"
        )
    for number, path, branch, head in targets:
        try:
            remove_stage(ctx, path, branch, head)
        except RefMoved as moved:  # committed on while we checked it: that is new work
            raise Conflict(
                f"stage {number}'s branch {branch} moved while it was being pruned, so it was "
                f"kept ({moved}); check it again with: git okstra worktree prune '{key}'"
            ) from moved
    return PruneResult(removed=[t[0] for t in targets], problems=problems)
