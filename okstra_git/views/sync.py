"""What ``git okstra sync`` prints.

By default one line per kind of ref (tasks, claims, notes, branches) with what sync did to how
many, as ``git fetch`` sums up instead of listing: a sync of 20,000 refs is a few lines. Only
what needs a person is named ref by ref: a conflict, a record not adopted, a branch the remote
has more of. ``-v`` lists every ref (``data`` always does, for ``--json``).
"""

from __future__ import annotations

from types import MappingProxyType

from ..core.tracking import BRANCHES, LOCAL_NOTES, LOCAL_REFS, tracking_name
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..git.repo import CommitInfo
    from ..services.branches import BranchState, HeldBack
    from ..services.sync.engine import SyncReport
    from ..services.sync.state import Holder, RefState, TaskConflict, Unadopted

_COUNTED = (
    ("fetched", "fetched"),
    ("fast-forwarded", "fast-forwarded"),
    ("merged", "merged"),
    ("replayed", "replayed on the remote's"),
    ("ahead", "ahead"),
    ("local-only", "only here"),
    ("conflict", "in conflict"),
    ("invalid", "not adopted"),
)
"""Each state of a ref, in the order a summary counts them, and its words there."""

_NAMED = ("conflict", "invalid")
"""States a summary names ref by ref too: a person has to act on them."""

_NONE: Mapping[str, str] = MappingProxyType({})
"""No branch step (a report worded without them)."""


def kind(ref: str) -> str:
    """The kind of an okstra ref, as a summary counts it: ``tasks``, ``claims``, … (the folder
    under ``refs/okstra/``), or ``notes``."""
    if ref.startswith(LOCAL_NOTES):
        return "notes"
    if ref.startswith(BRANCHES):
        return "branches"
    return ref[len(LOCAL_REFS) :].split("/", 1)[0] if ref.startswith(LOCAL_REFS) else ref


def synced(
    report: SyncReport,
    held: list[HeldBack],
    verbose: bool = False,
    steps: Mapping[str, str] = _NONE,
) -> Output:
    """What sync did; exit 1, saying why on stderr, when a conflict, a record not adopted or a
    branch held back (``held``) needs a person. ``steps``: the command that brings a branch
    in step, by ref (``services.branches.branch_steps``)."""
    said = text(report, verbose, steps)
    if not report.conflicts and not report.invalid and not held:
        return Output(data(report, steps), said)
    error = "\n".join(p for p in (_error(report), *map(held_words, held)) if p)
    return Output(data(report, steps), said, err=f"git okstra: {error}\n", code=1, error=error)


def held_words(held: HeldBack) -> str:
    """Why sync could not publish a branch, and the command that publishes both sides."""
    branch = held.branch
    return (
        f"not published: {branch.ref} here ({(branch.local or '-')[:12]}) and on {held.remote} "
        f"({(branch.remote or '-')[:12]}) have both moved; publish both with: {held.fix}"
    )


def data(report: SyncReport, steps: Mapping[str, str] = _NONE) -> dict[str, object]:
    """``sync --json``: every ref that is not the same (and every branch, with the
    ``command`` that brings it in step when it needs one), each conflict."""
    return {
        "remote": report.remote,
        "fetched": report.fetched,
        "refs": [_ref_data(r) for r in report.refs if r.state != "same"],
        "unchanged": report.unchanged,
        "pushed": report.pushed,
        "diverged": [r.ref for r in report.diverged],
        "conflicts": [_conflict_data(c, report.remote) for c in report.conflicts],
        "invalid": [unadopted(u) for u in report.invalid],
        "kept": report.kept,
        "renumbered": report.renumbered,
        "attempts": report.attempts,
        "branches": [_branch_data(b, steps) for b in report.branches if b.state != "same"],
    }


def _ref_data(state: RefState) -> dict[str, str | None]:
    return {
        "ref": state.ref,
        "local": state.local,
        "remote": state.remote,
        "state": state.state,
        "new": state.new,
    }


def _branch_data(branch: BranchState, steps: Mapping[str, str]) -> dict[str, str | None]:
    return {
        "ref": branch.ref,
        "local": branch.local,
        "remote": branch.remote,
        "state": branch.state,
        "command": steps.get(branch.ref),
    }


def choice_words(choice: str, remote: str) -> str:
    """What a conflict's choice (``TaskConflict.choices``) does."""
    from ..services.sync.state import DROPPED

    if choice == "take-theirs":
        return f"keep {remote}'s side and drop yours (kept under {DROPPED})"
    return f"keep both: yours moves to the next free number after {remote}'s"


def summary(conflict: TaskConflict, remote: str) -> str:
    """One line: what happened on both sides (``TaskConflict.what``), e.g. ``run
    error-analysis-001 was started on both sides``."""
    what, unit = conflict.what, conflict.unit
    kind = what.kind
    if kind in ("started", "changed") and unit.startswith("plan-"):
        verb = "submitted" if kind == "started" else kind
        return f"plan snapshot {unit[5:]} was {verb} on both sides"
    if kind in ("started", "changed"):
        name = f"run {unit}" if unit != "task" else what.what  # the unit task: a file
        return f"{name} was {kind} on both sides"
    if kind == "field":
        return f"task.json field {what.what} was changed differently on both sides"
    if kind == "created":
        return f"task {conflict.task_key} was created on both sides"
    if kind == "claimed":
        here, there = map(_holder, what.holders)
        return f"stage {what.what} was claimed on both sides: here {here}, on {remote} {there}"
    if kind == "unchecked":
        return f"{remote}'s record fails its checks, so no event is replayed onto it: " + "; ".join(
            what.problems
        )
    return f"replaying {what.what!r} would store an invalid task.json: {what.problems[0]}"


def _holder(holder: Holder) -> str:
    return f"{holder.run_id} ({holder.status}) by {holder.user} on {holder.host}"


def _conflict_data(conflict: TaskConflict, remote: str) -> dict[str, object]:
    return {
        "taskKey": conflict.task_key,
        "summary": summary(conflict, remote),
        "unit": conflict.unit,
        "here": _side(conflict.here),
        "there": _side(conflict.there),
        "choices": [
            {"what": choice_words(choice, remote), "command": cmd}
            for choice, cmd in conflict.choices
        ],
        "refs": list(conflict.refs),
    }


def _side(info: CommitInfo | None) -> dict[str, str] | None:
    if info is None:
        return None
    return {"commit": info.commit, "event": info.subject, "author": info.author, "when": info.when}


def text(report: SyncReport, verbose: bool = False, steps: Mapping[str, str] = _NONE) -> str:
    """The report as text: a summary, or with ``verbose`` every ref; ``steps`` as
    :func:`synced`'s."""
    how = "fetched" if report.fetched else "no fetch"
    tries = f"{report.attempts} attempt" + ("s" if report.attempts != 1 else "")
    lines = [f"okstra sync with {report.remote} ({how}, {tries})"]
    pushed = set(report.pushed)
    lines += _every_ref(report, pushed) if verbose else _by_kind(report, pushed)
    for old, new in report.renumbered.items():
        lines.append(f"renumbered your {old} as {new}")
    for kept in report.kept:
        lines.append(f"your replaced side is kept at {kept}")
    lines += _branches(report, pushed, verbose, steps)
    lines.append(f"{report.unchanged} ref(s) already in step; {len(report.pushed)} pushed")
    return "\n".join(lines)


def _by_kind(report: SyncReport, pushed: set[str]) -> list[str]:
    counts: dict[str, dict[str, int]] = {}
    for state in report.refs:
        of_kind = counts.setdefault(kind(state.ref), {})
        of_kind[state.state] = of_kind.get(state.state, 0) + 1
        if state.ref in pushed:
            of_kind["pushed"] = of_kind.get("pushed", 0) + 1
    lines = []
    for name, of_kind in counts.items():
        said = [f"{of_kind[state]} {words}" for state, words in _COUNTED if state in of_kind]
        sent = f"; {of_kind['pushed']} pushed" if "pushed" in of_kind else ""
        lines.append(f"  {name}: {', '.join(said)}{sent}")
    return lines + [_ref_line(s, pushed) for s in report.refs if s.state in _NAMED]


def _every_ref(report: SyncReport, pushed: set[str]) -> list[str]:
    return [_ref_line(state, pushed) for state in report.refs]


def _ref_line(state: RefState, pushed: set[str]) -> str:
    local, remote, new = (v[:12] if v else "-" for v in (state.local, state.remote, state.new))
    said = {
        "fetched": f"fetched {remote}",
        "fast-forwarded": f"fast-forwarded {local} → {new}",
        "merged": f"merged the remote's {remote} into {local} → {new}",
        "replayed": f"local events replayed on the remote's {remote} → {new}",
        "ahead": f"ahead of the remote ({remote} → {local})",
        "local-only": f"not on the remote yet ({local})",
        "conflict": f"CONFLICT: left as it was (here {local}, remote {remote})",
        "invalid": f"NOT ADOPTED: the remote's {remote} fails its checks",
    }[state.state]
    return f"  {state.ref}: {said}" + ("; pushed" if state.ref in pushed else "")


def _branches(
    report: SyncReport, pushed: set[str], verbose: bool, steps: Mapping[str, str]
) -> list[str]:
    """The task and stage branches: each one the remote has more of, or that differs from the
    remote's (with what to merge); the published ones one by one with ``verbose``, else
    counted."""
    lines = []
    published = waiting = 0
    for branch in report.branches:
        if branch.state == "same":
            continue
        if branch.state == "ahead" and not verbose:
            published += branch.ref in pushed
            waiting += branch.ref not in pushed
            continue
        lines.append(_branch_line(report.remote, branch, pushed, steps.get(branch.ref)))
    said = [f"{published} published"] if published else []
    said += [f"{waiting} to publish"] if waiting else []
    return ([f"  branches: {', '.join(said)}"] if said else []) + lines


def _branch_line(remote: str, branch: BranchState, pushed: set[str], step: str | None) -> str:
    mine, theirs = (v[:12] if v else "-" for v in (branch.local, branch.remote))
    track = tracking_name(remote, branch.ref)
    said = {
        "ahead": f"published {mine}" if branch.ref in pushed else f"to publish {mine}",
        "behind": f"the remote's {theirs} has more than yours ({mine}): "
        + (f"bring it here with: {step}" if step else track),
        "diverged": f"differs from the remote's {theirs} ({mine} here); not published — "
        f"merge {track} into yours to publish both",
    }[branch.state]
    return f"  {branch.ref}: {said}"


def _error(report: SyncReport) -> str:
    parts = []
    for c in report.conflicts:
        said = summary(c, report.remote)
        lines = [f"sync with {report.remote} stopped for task {c.task_key}: {said}."]
        lines.append(f"  here:   {_side_line(c.here)}")
        lines.append(f"  {report.remote}: {_side_line(c.there)}")
        lines.append(
            "  Nothing of this task was pushed or rewritten; every other task was synced. "
            "Choose one:"
        )
        lines += [f"  - {choice_words(what, report.remote)}: {cmd}" for what, cmd in c.choices]
        parts.append("\n".join(lines))
    if report.invalid:
        parts.append(
            f"{len(report.invalid)} record(s) fetched from {report.remote} fail their checks and "
            "were not adopted (nothing here acts on them; whoever wrote them must fix them on "
            f"{report.remote}):\n" + "\n".join(f"  - {unadopted(u)}" for u in report.invalid)
        )
    return "\n".join(parts)


def unadopted(record: Unadopted) -> str:
    """A record fetched and not adopted, as ``invalid`` names it: ref, and what is wrong."""
    if record.kind == "checks":
        return record.problem
    if record.kind == "notes":
        from ..records.refnames import NOTES_REFS

        return f"{record.ref}: not an okstra notes ref ({', '.join(NOTES_REFS)})"
    commit = (record.commit or "-")[:12]
    if record.kind == "unreadable":
        return f"{record.ref}: the fetched {commit} is not a commit okstra can read"
    return f"{record.ref}: the fetched {commit} holds a commit that cannot be read"


def _side_line(info: CommitInfo | None) -> str:
    if info is None:
        return "(the remote's event could not be told apart)"
    return f"{info.commit[:12]} {info.subject} ({info.author}, {info.when})"
