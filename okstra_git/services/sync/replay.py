"""Replaying a task's local-only events on the remote's tip (``logic/replay.py`` decides each
event; this reads them from the task ref's commits and writes the replayed chain), or naming
the conflict that stops it."""

from __future__ import annotations

import json

from ...core import schemacheck
from ...core.jsontext import dumps_pretty
from ...git.repo import CommitInfo, GitRepo, RefUpdate
from ...logic import replay as rp
from ...records.base import loads
from ...records.incoming import tip_problems
from ...records.run import moved_run
from ...records.task import MANIFEST_PATH, TASKS_PREFIX
from .conflicts import conflict, invalid_base
from .state import (
    Choice,
    Clashed,
    RefState,
    TaskConflict,
    TaskRefs,
    contains,
)


def replay_task(
    repo: GitRepo,
    remote: str,
    task: TaskRefs,
    local: str,
    theirs: str,
    choice: Choice | None,
    renumbered: dict[str, str],
    conflicts: list[TaskConflict],
    updates: list[RefUpdate],
) -> RefState:
    ref = task.ref
    base = repo.merge_base(local, theirs)
    events = [task_event(repo, c) for c in repo.first_parents(local, base, ref)]
    if choice is not None and choice.action == "take-theirs":
        events = rp.take_theirs(events, choice.unit)
    elif choice is not None:
        seq = renumbered[choice.unit].rpartition("-")[2]
        events = rp.renumber(
            events, choice.unit, seq, lambda path, raw, new: moved_run(f"{ref}:{path}", raw, new)
        )
    key_text = _task_key(repo, local, ref)
    if base is None and events:
        here = repo.commit_info(repo.first_parents(local, None, ref)[0])
        there = repo.commit_info(repo.first_parents(theirs, None, f"{ref} as fetched")[0])
        created = Clashed("created")
        conflicts.append(conflict(remote, key_text, created, "task", here, there, False))
        return RefState(ref, local, theirs, "conflict")
    problems = tip_problems(repo, ref, theirs, base)
    if problems:
        conflicts.append(invalid_base(key_text, problems, repo.commit_info(theirs)))
        return RefState(ref, local, theirs, "invalid")
    manifest = loads(repo.blob(repo.files_of(theirs)[MANIFEST_PATH]), f"{ref}:{MANIFEST_PATH}")
    remote_files = repo.files_of(theirs)

    def read(path: str) -> bytes | None:
        blob = remote_files.get(path)
        return repo.blob(blob) if blob is not None else None

    outcome = rp.replay(manifest, read, events)
    if outcome.clash is not None:
        clash = outcome.clash
        introduced = _introduced(repo, theirs, base, clash.path, clash.field)
        kind = (
            "field" if clash.field is not None else "started" if clash.renumberable else "changed"
        )
        conflicts.append(
            conflict(
                remote,
                key_text,
                Clashed(kind, clash.field or clash.path),
                clash.unit,
                repo.commit_info(clash.event.commit),
                introduced,
                clash.renumberable and not _claimed_on_both(repo, task),
            )
        )
        return RefState(ref, local, theirs, "conflict")
    tip = theirs
    for step in outcome.replayed:
        if step.already:
            continue
        invalid = schemacheck.problems(step.manifest, "task")
        if invalid:
            conflicts.append(
                conflict(
                    remote,
                    key_text,
                    Clashed("unstorable", step.event.subject, problems=tuple(invalid)),
                    "task",
                    repo.commit_info(step.event.commit),
                    None,
                    False,
                )
            )
            return RefState(ref, local, theirs, "conflict")
        changes = {**step.files, MANIFEST_PATH: dumps_pretty(step.manifest)}
        tree = repo.tree_with(tip, changes)
        tip = repo.commit(tree, [tip], step.event.message, author_of=step.event.commit)
    if tip != local:
        updates.append(RefUpdate(ref, tip, local))
    return RefState(ref, local, theirs, "replayed" if tip != theirs else "fast-forwarded", tip)


def task_event(repo: GitRepo, commit: str) -> rp.Event:
    found = repo.commit_info(commit)
    parent = found.parents[0] if found.parents else None
    before, after = repo.files_of(parent), repo.files_of(commit)
    files = {}
    for path in sorted(before.keys() | after.keys()):
        if path != MANIFEST_PATH and before.get(path) != after.get(path):
            old, new = before.get(path), after.get(path)
            files[path] = (repo.blob(old) if old else None, repo.blob(new) if new else None)

    def manifest(files_at: dict[str, str], at: str | None) -> dict:
        blob = files_at.get(MANIFEST_PATH)
        return loads(repo.blob(blob), f"{at}:{MANIFEST_PATH}") if blob else {}

    return rp.Event(commit, found.message, manifest(before, parent), manifest(after, commit), files)


def _task_key(repo: GitRepo, commit: str, ref: str) -> str:
    try:
        data = json.loads(repo.blob(repo.files_of(commit)[MANIFEST_PATH]))
        return str(data["taskKey"])
    except (KeyError, ValueError, TypeError):
        return ref[len(TASKS_PREFIX) :]


def _introduced(
    repo: GitRepo, tip: str, base: str | None, path: str, leaf: str | None
) -> CommitInfo | None:
    """The remote's event that made the change a local event clashes with: the first one
    since ``base`` touching that file (or ``task.json`` field ``leaf``)."""
    for commit in repo.first_parents(tip, base, "the remote's chain"):
        parents = repo.commit_info(commit).parents
        parent = parents[0] if parents else None
        if leaf is not None:
            if _field(repo, parent, leaf) != _field(repo, commit, leaf):
                return repo.commit_info(commit)
        elif repo.files_of(parent).get(path) != repo.files_of(commit).get(path):
            return repo.commit_info(commit)
    return None


def _field(repo: GitRepo, commit: str | None, dotted: str) -> object:
    blob = repo.files_of(commit).get(MANIFEST_PATH)
    data: object = json.loads(repo.blob(blob)) if blob else {}
    for key in dotted.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _claimed_on_both(repo: GitRepo, task: TaskRefs) -> bool:
    """A claim ref of the task moved on both sides: the same stage claimed twice, which no
    renumbering can keep."""
    return any(
        ref != task.ref
        and local is not None
        and theirs is not None
        and local != theirs
        and not contains(repo, theirs, local)
        and not contains(repo, local, theirs)
        for ref, (local, theirs) in task.refs.items()
    )
