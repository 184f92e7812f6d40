"""The person's choice for a task's true conflict (``sync --task KEY --take-theirs UNIT`` or
``--renumber UNIT``): the local claim commits dropped (kept under ``refs/okstra-dropped/``) or
rewritten under the next free run number, and a renumbered run's ``.okstra/`` files moved."""

from __future__ import annotations

import os

from ...core.errors import BadInput
from ...core.keys import TaskKey
from ...core.shell import okstra
from ...core.tracking import LOCAL_REFS
from ...git.repo import GitRepo, RefUpdate
from ...logic import replay as rp
from ...records.claim import claim_tree, read_claim_at, renamed_run
from .conflicts import claim_at
from .replay import task_event
from .state import (
    DROPPED,
    Choice,
    Reconciled,
    TaskRefs,
)


def apply_choice(
    repo: GitRepo, task: TaskRefs, choice: Choice, updates: list[RefUpdate], done: Reconciled
) -> TaskRefs:
    """Settle the claim side of ``choice`` before classifying: the local claim commits of the
    dropped run go (their tips kept under ``refs/okstra-dropped/``), or are rewritten under the
    renumbered run id. The task events are transformed in :func:`replay_task`."""
    refs = dict(task.refs)
    for ref, (local, theirs) in task.refs.items():
        if ref == task.ref or local is None or local == theirs:
            continue
        base = repo.merge_base(local, theirs) if theirs is not None else None
        own = repo.first_parents(local, base, ref)
        runs = {str(claim_at(repo, c).get("runId")) for c in own}
        if choice.unit != "task" and choice.unit not in runs:
            continue
        if choice.action == "take-theirs":
            _keep(ref, local, updates, done)
            updates.append(RefUpdate(ref, theirs, local))
            refs[ref] = (theirs, theirs)
        else:
            new = _renamed_claims(repo, ref, base, own, choice.unit, done.renumbered[choice.unit])
            updates.append(RefUpdate(ref, new, local))
            refs[ref] = (new, theirs)
    if choice.action == "take-theirs":
        local, _theirs = task.refs.get(task.ref, (None, None))
        if local is not None:
            _keep(task.ref, local, updates, done)
    return TaskRefs(task.suffix, refs)


def _keep(ref: str, local: str, updates: list[RefUpdate], done: Reconciled) -> None:
    kept = f"{DROPPED}{ref[len(LOCAL_REFS) :]}/{local}"
    updates.append(RefUpdate(kept, local, None))
    done.kept.append(kept)


def renumbered_unit(repo: GitRepo, remote: str, task: TaskRefs, choice: Choice) -> str:
    """The unit's new name for ``--renumber``: the next number past every one the remote's
    tip or the local events use."""
    local, theirs = task.refs.get(task.ref, (None, None))
    if local is None or theirs is None or local == theirs:
        raise BadInput(
            f"--renumber {choice.unit}: {task.ref} has no local-only events to renumber; see "
            f"what conflicts with: {okstra('sync', remote)}"
        )
    base = repo.merge_base(local, theirs)
    events = [task_event(repo, c) for c in repo.first_parents(local, base, task.ref)]
    if not any(rp.unit_of(path) == choice.unit for event in events for path in event.files):
        raise BadInput(
            f"--renumber {choice.unit}: no local-only event of {choice.key} starts it; see what "
            f"conflicts with: {okstra('sync', remote)}"
        )
    kind = choice.unit.rpartition("-")[0]
    folder = "plans" if kind == "plan" else f"runs/{kind}"
    names = [f"{folder}/{n}" for n in repo.list_dir(theirs, folder)]
    names += [path for event in events for path in event.files]
    units = [rp.unit_of(name) for name in names]
    taken = [int(u.rpartition("-")[2]) for u in units if u and u.rpartition("-")[0] == kind]
    return f"{kind}-{max(taken, default=0) + 1:03d}"


def _renamed_claims(
    repo: GitRepo, ref: str, base: str | None, own: list[str], old: str, new: str
) -> str | None:
    """The local-only claim commits ``own`` of ``ref`` rewritten with run id ``old`` as
    ``new``, each keeping its author and date."""
    tip = base
    for commit in own:
        claim = renamed_run(read_claim_at(repo, commit, ref), old, new)
        tree = claim_tree(repo, ref, claim)
        message = repo.commit_info(commit).message.replace(old, new)
        tip = repo.commit(tree, [tip] if tip else [], message, author_of=commit)
    return tip


def rename_workspace(repo: GitRepo, key: TaskKey, renumbered: dict[str, str]) -> None:
    """Move a renumbered run's `.okstra/` files to its new number (never over a file)."""
    from ...logic.workspace import run_paths

    if repo.workdir is None:
        return
    for old, new in renumbered.items():
        task_type, _, seq = old.rpartition("-")
        if task_type == "plan":
            continue
        moves = zip(
            run_paths(key, task_type, seq).values(),
            run_paths(key, task_type, new.rpartition("-")[2]).values(),
            strict=True,
        )
        for before, after in moves:
            source, target = repo.workdir / before, repo.workdir / after
            if source.exists() and not target.exists() and not before.endswith("/"):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, target)
