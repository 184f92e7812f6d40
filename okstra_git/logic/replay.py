"""Replaying a clone's local-only task events on top of the remote's chain
(docs/concurrency-and-sync.md). Pure.

``sync`` finds a task ref diverged from the remote's: both sides appended events since their
merge base. Like ``git pull --rebase``, each local-only event is re-applied, oldest first, on
top of the remote's tip; the remote's events are never rewritten. An event is a change: the
fields of ``task.json`` it changed, and the tree files it added, changed or removed.

When do two events commute (notes/divergent-histories.md §2)?

- A file only one side touched (a run record ``runs/<type>/<seq>.json``, its report data, a plan
  snapshot ``plans/plan-<seq>.md``) always applies; the same change on both sides is already
  there. A file both sides touched differently is a **true conflict**: the same run (or plan
  snapshot) started on both, or the same run finished or scoped on both.
- A ``task.json`` field only one side changed applies. Fields that say where the task stands
  *now* — ``workflow.*`` (``phaseStates`` key by key), ``latestRun``, ``latestReportPath``,
  ``currentStatus``, ``updatedAt`` — take the replayed event's value when both changed them: the
  replayed event comes last in the merged timeline, as in a rebase. Every other field changed
  differently on both sides (``latestPlan``, ``implementationBaseCommit``…) is a conflict.
- A task created on both sides (no merge base) is a conflict.

A conflict names its unit — a run id (``error-analysis-001``), a plan snapshot
(``plan-002``) or the whole ``task`` — and stops the task's replay; nothing is written for it.
The person chooses with ``sync --task KEY --take-theirs UNIT`` (drop the local events touching
it; their old tip is kept) or, for a run or plan started on both, ``--renumber UNIT`` (keep both,
the local one under the next free number), applied to the events here before they replay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..core.values import Record, Value, field

MANIFEST = "task.json"
_MISSING = object()
LATEST_WINS = frozenset({"workflow", "latestRun", "latestReportPath", "currentStatus", "updatedAt"})
"""Top-level ``task.json`` fields describing where the task stands now: on a clash the replayed
(later) event's value is kept."""
_ATOMIC = frozenset({"latestRun", "latestPlan"})
"""Objects compared whole, not field by field."""
_RUN_FILE = re.compile(r"runs/(?P<type>[a-z-]+)/(?P<seq>[0-9]{3,9})(?:\.data)?\.json")
_PLAN_FILE = re.compile(r"plans/plan-(?P<seq>[0-9]{3,9})\.md")


class Event(Value):
    """One local-only task event: the commit and the change it made to its parent."""

    commit: str
    """The local commit."""
    message: str
    """Its message (the event), kept on the replayed commit."""
    before: dict[str, Any]
    """``task.json`` at the parent."""
    after: dict[str, Any]
    """``task.json`` at the commit."""
    files: dict[str, tuple[bytes | None, bytes | None]]
    """Every other tree file the event touched: path → (before, after); ``None`` is absent."""

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


class Replayed(Value):
    """An event re-applied on the remote's side."""

    event: Event
    manifest: dict[str, Any]
    """``task.json`` after it."""
    files: dict[str, bytes | None]
    """The tree files it writes (``None`` removes)."""
    already: bool = False
    """Every change was already on the remote's side: no commit is needed."""


class Clash(Value):
    """A true conflict: why the task's replay stopped (views/sync.py words it)."""

    event: Event
    """The local event that could not be re-applied."""
    path: str
    """The file both sides changed differently, or ``task.json`` (see ``field``)."""
    field: str | None
    """The ``task.json`` field (dotted) both sides changed differently; None for a file."""
    unit: str
    """What to choose about: a run id, ``plan-<seq>`` or ``task``."""
    renumberable: bool
    """Both sides started a run (or plan snapshot) under one number: keeping both is possible."""


class Outcome(Record):
    """The replay of one task's local-only events."""

    replayed: list[Replayed] = field(default_factory=list)
    clash: Clash | None = None


def replay(
    manifest: dict[str, Any], read: Callable[[str], bytes | None], events: list[Event]
) -> Outcome:
    """Re-apply ``events`` (oldest first) on the remote's tip: its ``manifest`` and ``read``
    (path → the tip's file). Stops at the first true conflict."""
    outcome = Outcome()
    current = manifest
    written: dict[str, bytes | None] = {}

    def now(path: str) -> bytes | None:
        return written[path] if path in written else read(path)

    for event in events:
        files: dict[str, bytes | None] = {}
        for path, (before, after) in sorted(event.files.items()):
            have = now(path)
            if have == after:
                continue
            if have != before:
                outcome.clash = _file_clash(event, path, before)
                return outcome
            files[path] = after
        merged, clash = _merge_manifest(event, current)
        if clash is not None:
            outcome.clash = clash
            return outcome
        already = not files and merged == current
        outcome.replayed.append(Replayed(event, merged, files, already))
        written.update(files)
        current = merged
    return outcome


def unit_of(path: str) -> str | None:
    """The run id or plan snapshot a task file belongs to."""
    run = _RUN_FILE.fullmatch(path)
    if run is not None:
        return f"{run.group('type')}-{run.group('seq')}"
    plan = _PLAN_FILE.fullmatch(path)
    return f"plan-{plan.group('seq')}" if plan is not None else None


def _file_clash(event: Event, path: str, before: bytes | None) -> Clash:
    unit = unit_of(path) or "task"
    return Clash(event, path, None, unit, before is None and unit != "task")


def _merge_manifest(event: Event, current: dict[str, Any]) -> tuple[dict[str, Any], Clash | None]:
    merged = json.loads(json.dumps(current))  # a deep copy of plain JSON data
    for path, before, after in _changes(event.before, event.after, ()):
        have = _get(merged, path)
        if _equal(have, after):
            continue
        if not _equal(have, before) and path[0] not in LATEST_WINS:
            return merged, Clash(event, MANIFEST, ".".join(path), "task", False)
        _set(merged, path, after)
    return merged, None


def _changes(
    before: Any, after: Any, at: tuple[str, ...]
) -> list[tuple[tuple[str, ...], Any, Any]]:
    """The leaves that differ: (path, before, after), ``_MISSING`` for an absent one."""
    nested = isinstance(before, dict) and isinstance(after, dict) and not (at and at[0] in _ATOMIC)
    if not nested:
        return [] if _equal(before, after) else [(at, before, after)]
    found = []
    for key in sorted(before.keys() | after.keys()):
        found += _changes(before.get(key, _MISSING), after.get(key, _MISSING), (*at, key))
    return found


def _equal(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _get(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data.setdefault(key, {})
    if value is _MISSING:
        data.pop(path[-1], None)
    else:
        data[path[-1]] = value


# -- choices applied before a replay ---------------------------------------------------------


def take_theirs(events: list[Event], unit: str) -> list[Event]:
    """The events left when the local side of ``unit`` is dropped: every event touching its
    files (``task``: every event)."""
    if unit == "task":
        return []
    return [e for e in events if not any(unit_of(path) == unit for path in e.files)]


RunMover = Callable[[str, bytes, str], bytes]
"""``(path, stored run record, new seq)`` → the record moved to that run number: the run
record's own module rewrites it (``records/run.py``), this layer below it cannot."""


def renumber(events: list[Event], unit: str, new_seq: str, move_run: RunMover) -> list[Event]:
    """The events with the local ``unit`` (a run id or ``plan-<seq>``) moved to ``new_seq``:
    its files, its run record (through ``move_run``), the manifest's pointers at it, and the
    event messages naming it."""
    kind, _, seq = unit.rpartition("-")
    rename = (
        _plan_renamer(seq, new_seq)
        if kind == "plan"
        else _run_renamer(kind, seq, new_seq, move_run)
    )
    return [rename(event) for event in events]


Renamer = Callable[[Event], Event]


def _plan_renamer(seq: str, new_seq: str) -> Renamer:
    def manifest(data: dict[str, Any]) -> dict[str, Any]:
        data = json.loads(json.dumps(data))
        plan = data.get("latestPlan")
        if plan is not None and plan.get("seq") == seq:
            plan["seq"] = new_seq
        return data

    def path(name: str) -> str:
        return f"plans/plan-{new_seq}.md" if name == f"plans/plan-{seq}.md" else name

    return lambda e: _renamed(e, manifest, path, lambda _p, raw: raw, e.message)


def _run_renamer(task_type: str, seq: str, new_seq: str, move_run: RunMover) -> Renamer:
    old_id, new_id = f"{task_type}-{seq}", f"{task_type}-{new_seq}"

    def manifest(data: dict[str, Any]) -> dict[str, Any]:
        data = json.loads(json.dumps(data))
        run = data.get("latestRun")
        if run is not None and (run.get("taskType"), run.get("seq")) == (task_type, seq):
            run["seq"] = new_seq
        flow = data.get("workflow", {})
        if flow.get("lastSafeCheckpoint") == old_id:
            flow["lastSafeCheckpoint"] = new_id
        return data

    def path(name: str) -> str:
        prefix = f"runs/{task_type}/{seq}"
        return (
            f"runs/{task_type}/{new_seq}{name[len(prefix) :]}"
            if name.startswith(prefix + ".")
            else name
        )

    def content(name: str, raw: bytes | None) -> bytes | None:
        if raw is None or name != f"runs/{task_type}/{new_seq}.json":
            return raw
        return move_run(name, raw, new_seq)

    def message(text: str) -> str:
        return text.replace(old_id, new_id).replace(f"{task_type} {seq}", f"{task_type} {new_seq}")

    return lambda e: _renamed(e, manifest, path, content, message(e.message))


def _renamed(
    event: Event,
    manifest: Callable[[dict[str, Any]], dict[str, Any]],
    path: Callable[[str], str],
    content: Callable[[str, bytes | None], bytes | None],
    message: str,
) -> Event:
    files = {}
    for name, (before, after) in event.files.items():
        new = path(name)
        files[new] = (content(new, before), content(new, after))
    return event.replace(
        message=message,
        before=manifest(event.before),
        after=manifest(event.after),
        files=files,
    )
