"""Which task a commit is the task branch head of, and the work tree that branch is checked out
in: for the gate's refusal (``gate/judge.py``) to name the task and its worktree when no
verdict does. It reads through the repository's one read interface and git's plumbing (the
hooks and ``ci check`` load no pygit2, jsonschema or jinja2), and only when the gate refuses.

A task branch is ``refs/heads/okstra/<group>/<id>/task`` here, ``refs/okstra/branches/<group>/
<id>/task`` as published, ``refs/okstra-remotes/<R>/branches/…`` as fetched; the task's key is
in its record, ``refs/okstra/tasks/<group>/<id>:task.json`` (docs/storage.md). Both are
untrusted: a key no command could take, or a record whose key is another task's (its slugs name
other refs), names no task.
"""

from __future__ import annotations

from ..core.tracking import BRANCHES, REMOTE_REFS_PREFIX, TASKS_PREFIX
from ..logic.gatefix import usable_key

TYPE_CHECKING = False  # loaded by a hook: no typing import
if TYPE_CHECKING:
    from ..git.objects import ObjectSource

LOCAL_BRANCHES = "refs/heads/okstra/"
"""Where a clone keeps its task and stage branches (the worktrees' branches)."""


def task_of_commit(objects: ObjectSource, commit: str) -> str | None:
    """The key of the one task whose task branch points at ``commit`` (here, as published, or
    as fetched), read from that task's record; None when no task's does, or several do."""
    records = _records_at(objects.refs(LOCAL_BRANCHES, BRANCHES), commit)
    if not records:  # a clone without the branch may have fetched the remote's
        records = _records_at(objects.refs(REMOTE_REFS_PREFIX), commit)
    keys = {record_key(objects, suffix, refs) for suffix, refs in records.items()}
    keys.discard(None)
    return keys.pop() if len(keys) == 1 else None


def _records_at(refs: dict[str, str], commit: str) -> dict[str, list[str]]:
    """``<group>/<id> → the task record refs its key is read from, in order`` for each task
    branch among ``refs`` at ``commit``."""
    found: dict[str, list[str]] = {}
    for name, oid in refs.items():
        if oid != commit or not name.endswith("/task"):
            continue
        parts = name.split("/")
        if len(parts) == 6 and name.startswith((LOCAL_BRANCHES, BRANCHES)):
            prefixes = [TASKS_PREFIX]
        elif len(parts) == 7 and name.startswith(REMOTE_REFS_PREFIX) and parts[3] == "branches":
            prefixes = [f"{REMOTE_REFS_PREFIX}{parts[2]}/tasks/", TASKS_PREFIX]
        else:
            continue
        suffix = f"{parts[-3]}/{parts[-2]}"
        listed = found.setdefault(suffix, [])
        listed += [p + suffix for p in prefixes if p + suffix not in listed]
    return found


def record_key(objects: ObjectSource, suffix: str, refs: list[str]) -> str | None:
    """The key the first of the task records ``refs`` present holds, when it is usable and is
    the task of ``suffix`` (a key read from a record goes into printed commands: untrusted)."""
    from ..core.jsontext import loads

    for ref in refs:
        found = objects.read(f"{ref}:task.json")
        if found is None or found[1] != "blob":
            continue
        try:
            data = loads(found[2].decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8, not JSON: no key read from it
            return None
        key = data.get("taskKey") if isinstance(data, dict) else None
        if not isinstance(key, str) or usable_key(key) is None or task_suffix(key) != suffix:
            return None
        return key
    return None


def task_suffix(key: str) -> str:
    """``<group>/<id>`` of a usable key: the slug path of its task's refs."""
    from ..core.keys import slug

    _project, group, task_id = key.split(":")
    return f"{slug(group)}/{slug(task_id)}"


def task_worktree(key: str, commit: str) -> str | None:
    """The folder of the work tree where ``key``'s task branch is checked out at ``commit``, as
    ``git worktree list`` gives it, when a one-line command can name it; None otherwise (no
    such work tree, its folder gone, its HEAD elsewhere, a git older than 2.36 without
    ``-z``)."""
    from ..git.plumbing import git_output

    code, out, _ = git_output("worktree", "list", "--porcelain", "-z")
    if code != 0:
        return None
    wanted = f"{LOCAL_BRANCHES}{task_suffix(key)}/task"
    for entry in out.decode("utf-8", "surrogateescape").split("\0\0"):
        fields: dict[str, str] = {}
        for attribute in entry.strip("\0").split("\0"):
            name, _, value = attribute.partition(" ")
            fields.setdefault(name, value)
        if fields.get("branch") != wanted or "prunable" in fields:
            continue
        path = fields.get("worktree", "")
        # A folder shown in a one-line command: no line break, no control character, text.
        if fields.get("HEAD") != commit or not path or not path.isprintable():
            return None
        return path
    return None
