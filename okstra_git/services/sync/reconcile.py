"""Bringing local okstra refs in step with the fetched remote-tracking ones (docs/storage.md,
docs/concurrency-and-sync.md).

What ``sync`` does between its fetch and its push, task by task (a task ref and its claim
refs), all landing locally in ONE ref transaction conditional on every value read:

- a ref only the remote has, or one the remote moved ahead, is adopted — after its tip's
  records pass ``records.incoming`` (schema, ref name, confined branch and path fields); a
  record that fails is named and never adopted;
- a ref only here, or ahead here, is pushed;
- a task ref both sides moved has its local-only events replayed on the remote's tip
  (``replay``), so nothing either side recorded is lost; a claim ref both sides moved is a
  true conflict (the same stage claimed on both);
- a true conflict stops that task only: none of its refs is pushed or rewritten, and the
  conflict names both sides and one command per choice (``Choice``);
- notes (verdicts, approvals) fast-forward or merge line by line (``cat_sort_uniq``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ...core import schemacheck
from ...core.errors import BadInput
from ...core.jsontext import dumps_pretty
from ...core.keys import TaskKey
from ...core.progress import Progress
from ...core.shell import okstra
from ...core.tracking import BRANCHES, LOCAL_NOTES, LOCAL_REFS, tracking_notes, tracking_refs
from ...git import plumbing
from ...git.repo import BULK_REFS, CommitInfo, GitRepo, RefUpdate, cas_retry
from ...logic import replay as rp
from ...records.base import loads
from ...records.claim import CLAIM_PATH, claim_tree, read_claim_at, renamed_run
from ...records.incoming import CLAIM_REF, TASK_REF, ref_problems, tip_problems
from ...records.run import moved_run
from ...records.task import MANIFEST_PATH, TASKS_PREFIX
from ..setup import NOTES_REFS  # the notes refs sync exchanges; no other is adopted

DROPPED = "refs/okstra-dropped/"
"""Where a ``--take-theirs`` keeps the local tips it replaced: local only (sync moves
``refs/okstra/*``), ``refs/okstra-dropped/<tasks|claims>/…/<old sha>``."""
PUSHED_STATES = ("ahead", "local-only", "replayed", "merged")


@dataclass(frozen=True)
class RefState:
    """One local ref against its remote-tracking copy, and what sync did about it."""

    ref: str
    """The local ref (``refs/okstra/…`` or ``refs/notes/okstra/…``)."""
    local: str | None
    """Its value before sync touched it."""
    remote: str | None
    """The remote's value, as last fetched."""
    state: str
    """``same``, ``fetched`` (new here), ``fast-forwarded``, ``merged`` (notes), ``replayed``
    (local events re-applied on the remote's), ``ahead``, ``local-only``, ``conflict`` (left
    as it was: see the report's conflicts) or ``invalid`` (the remote's record failed its
    checks and was not adopted)."""
    new: str | None = None
    """The local value after sync, when it changed or is to be pushed."""

    def to_data(self) -> dict[str, str | None]:
        return {
            "ref": self.ref,
            "local": self.local,
            "remote": self.remote,
            "state": self.state,
            "new": self.new,
        }


@dataclass(frozen=True)
class Choice:
    """How to settle one task's true conflict, chosen by the person (``sync --task KEY``)."""

    key: TaskKey
    """The task."""
    action: str
    """``take-theirs`` (drop the local side of ``unit``) or ``renumber`` (keep both)."""
    unit: str
    """A run id (``error-analysis-001``), ``plan-<seq>``, or ``task`` (take-theirs only)."""


@dataclass(frozen=True)
class TaskConflict:
    """A true conflict in one task: what both sides did and the command for each choice."""

    task_key: str
    """The task."""
    summary: str
    """What happened, e.g. ``run error-analysis-001 was started on both sides``."""
    unit: str
    """What the choice is about (see :class:`Choice`)."""
    here: CommitInfo
    """The local event that could not be re-applied."""
    there: CommitInfo | None
    """The remote's event it clashes with (None when it could not be told apart)."""
    choices: tuple[tuple[str, str], ...]
    """(what it does, the command), one per choice."""
    refs: tuple[str, ...]
    """The task's refs, left as they were: none of them is pushed until it is settled."""

    def to_data(self) -> dict[str, object]:
        def side(info: CommitInfo | None) -> dict[str, str] | None:
            if info is None:
                return None
            return {
                "commit": info.commit,
                "event": info.subject,
                "author": info.author,
                "when": info.when,
            }

        return {
            "taskKey": self.task_key,
            "summary": self.summary,
            "unit": self.unit,
            "here": side(self.here),
            "there": side(self.there),
            "choices": [{"what": what, "command": cmd} for what, cmd in self.choices],
            "refs": list(self.refs),
        }


@dataclass(frozen=True)
class Listing:
    """okstra's refs and notes refs, here and as last fetched from a remote, read at once."""

    here: dict[str, str]
    """``refs/okstra/*`` and ``refs/notes/okstra/*`` → commit id."""
    there: dict[str, str]
    """The remote-tracking copies, under the same (local) names."""


def list_refs(repo: GitRepo, remote: str) -> Listing:
    """okstra's refs here and the remote's as fetched."""
    track = {tracking_refs(remote): LOCAL_REFS, tracking_notes(remote): LOCAL_NOTES}
    here: dict[str, str] = {}
    there: dict[str, str] = {}
    where = str(repo.workdir or repo.git_dir)
    for name, oid in plumbing.list_refs(LOCAL_REFS, LOCAL_NOTES, *track, where=where).items():
        if name.startswith((LOCAL_REFS, LOCAL_NOTES)):
            here[name] = oid
            continue
        for prefix, local in track.items():
            if name.startswith(prefix):
                there[local + name[len(prefix) :]] = oid
    return Listing(here, there)


@dataclass
class Reconciled:
    """What reconciling did locally, and what is left to push."""

    states: list[RefState] = field(default_factory=list)
    """Every ref sync looked at, except those already in step (counted in ``unchanged``)."""
    unchanged: int = 0
    """Refs whose local value is the remote's, as fetched: nothing to do."""
    conflicts: list[TaskConflict] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    """Every problem with a remote record that was not adopted, naming ref and field."""
    kept: list[str] = field(default_factory=list)
    """``refs/okstra-dropped/…`` refs keeping local tips a ``--take-theirs`` replaced."""
    renumbered: dict[str, str] = field(default_factory=dict)
    """Old run id or plan → new one, for a ``--renumber``."""
    updates: list[RefUpdate] = field(default_factory=list)
    """The local transaction (landed by :func:`reconcile`)."""
    listing: Listing = field(default_factory=lambda: Listing({}, {}))
    """The refs as read before deciding (``updates`` change the local ones)."""

    @property
    def to_push(self) -> list[RefUpdate]:
        """Each ref to push, expected to be at its remote value: all fast-forwards."""
        return [RefUpdate(s.ref, s.new, s.remote) for s in self.states if s.state in PUSHED_STATES]


def reconcile(
    repo: GitRepo, remote: str, choice: Choice | None = None, listing: Listing | None = None
) -> Reconciled:
    """Adopt, replay and merge what was fetched from ``remote``; land it in one transaction,
    retried from a fresh read when a local writer moved a ref meanwhile. ``listing``, when
    given, is a fresh read of the refs for the first try.

    From :data:`BULK_REFS` updates on (a clone's first sync), the local okstra refs land first
    in one ``packed-refs`` write and the rest in a transaction after it: a retry reads the
    packed ones back as already in step, so an interruption between the two loses nothing."""
    touched: list[str] = []
    given = [listing] if listing is not None else []

    def attempt() -> Reconciled:
        refs = given.pop() if given else list_refs(repo, remote)
        done = Reconciled(listing=refs)
        _refs(repo, remote, choice, done, refs)
        _notes(repo, remote, done, refs)
        touched[:] = [u.name for u in done.updates]
        rest = done.updates
        if len(rest) >= BULK_REFS:  # a first sync of a clone: tens of thousands of new refs
            logged = [u for u in rest if not u.name.startswith(LOCAL_REFS)]  # notes: reflogs
            rest = repo.update_packed([u for u in rest if u.name.startswith(LOCAL_REFS)]) + logged
        if rest:
            repo.update_refs(rest, f"okstra sync with {remote}")
        return done

    done = cas_retry(repo, attempt, touched)
    if choice is not None and choice.action == "renumber" and done.renumbered:
        _rename_workspace(repo, choice.key, done.renumbered)
    return done


# -- task and claim refs ----------------------------------------------------------------------


@dataclass
class _Task:
    """One task's refs: ref → (local value, remote value)."""

    suffix: str
    refs: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return TASKS_PREFIX + self.suffix


def _refs(
    repo: GitRepo, remote: str, choice: Choice | None, done: Reconciled, listing: Listing
) -> None:
    here, there = listing.here, listing.there
    suffixes: dict[str, str] = {}  # okstra-shaped ref → its task's ref suffix
    moved = {choice.key.ref_suffix} if choice is not None else set()
    for ref in here.keys() | there.keys():
        if not ref.startswith(LOCAL_REFS) or ref.startswith(BRANCHES):
            continue  # code, not records: published by branches.py, never made a local ref
        match = TASK_REF.fullmatch(ref) or CLAIM_REF.fullmatch(ref)
        if match is not None:
            suffixes[ref] = match.group("suffix")
            if here.get(ref) != there.get(ref):
                moved.add(suffixes[ref])
        elif ref in there:  # a local ref of another shape is left alone and never pushed
            done.invalid += ref_problems(ref)
            done.states.append(RefState(ref, here.get(ref), there[ref], "invalid"))
    done.states.sort(key=lambda state: state.ref)
    # Only tasks with a ref that moved on either side are looked at: the rest read nothing.
    tasks: dict[str, _Task] = {}
    for ref in sorted(ref for ref, suffix in suffixes.items() if suffix in moved):
        suffix = suffixes[ref]
        tasks.setdefault(suffix, _Task(suffix)).refs[ref] = (here.get(ref), there.get(ref))
    done.unchanged += len(suffixes) - sum(len(task.refs) for task in tasks.values())
    with Progress("Reconciling okstra tasks", len(tasks)) as meter:  # a terminal, once slow
        for task in tasks.values():
            chosen = choice if choice is not None and choice.key.ref_suffix == task.suffix else None
            _task(repo, remote, task, chosen, done)
            meter.tick()


def _task(repo: GitRepo, remote: str, task: _Task, choice: Choice | None, done: Reconciled) -> None:
    states: list[RefState] = []
    conflicts: list[TaskConflict] = []
    updates: list[RefUpdate] = []
    if choice is not None:
        if choice.action == "renumber":
            done.renumbered[choice.unit] = _renumbered(repo, remote, task, choice)
        task = _apply_choice(repo, task, choice, updates, done)
    for ref, (local, theirs) in sorted(task.refs.items()):
        state = _classify(repo, ref, local, theirs, done)
        if state.state == "diverged" and ref == task.ref:
            assert local is not None and theirs is not None  # diverged: both sides moved
            state = _replay(
                repo, remote, task, local, theirs, choice, done.renumbered, conflicts, updates
            )
        elif state.state == "diverged":
            assert local is not None and theirs is not None
            conflicts.append(_claim_conflict(repo, remote, task, ref, local, theirs))
            state = RefState(ref, local, theirs, "conflict")
        elif state.state in ("fetched", "fast-forwarded"):
            updates.append(RefUpdate(ref, theirs, local))
        elif state.state == "same":
            done.unchanged += 1
            continue
        states.append(state)
    if conflicts:
        # Nothing of a conflicted task is pushed, nor rewritten; what only the remote moved
        # is still adopted (nothing local is lost by a fast-forward).
        refs = tuple(sorted(task.refs))
        done.conflicts += [_with_refs(c, refs) for c in conflicts[:1]]
        states = [_held(s) for s in states]
        updates = [u for u in updates if _adoption(u, states)]
    done.states += states
    done.updates += updates


def _unreadable(
    repo: GitRepo, ref: str, local: str | None, theirs: str | None, done: Reconciled
) -> RefState | None:
    """Ancestry needs readable commits: a damaged local ref is named (BadInput), a remote
    value that is not a readable commit chain is reported and never adopted. A ref in step
    with the remote's is read by nothing here."""
    if local == theirs:
        return None
    if local is not None:
        repo.check_commit(local, ref)
    if theirs is None:
        return None
    fetched = f"{ref} as fetched"
    unreadable = RefState(ref, local, theirs, "invalid")
    try:
        repo.check_commit(theirs, fetched)
    except BadInput:
        done.invalid.append(f"{ref}: the fetched {theirs[:12]} is not a commit okstra can read")
        return unreadable
    if local is not None:
        repo.check_history(local, [theirs], ref)  # this clone's own damage: BadInput
    try:
        repo.check_history(theirs, [local] if local else [], fetched)
    except BadInput:
        done.invalid.append(f"{ref}: the fetched {theirs[:12]} holds a commit that cannot be read")
        return unreadable
    return None


def _classify(
    repo: GitRepo, ref: str, local: str | None, theirs: str | None, done: Reconciled
) -> RefState:
    unreadable = _unreadable(repo, ref, local, theirs, done)
    if unreadable is not None:
        return unreadable
    if theirs is None:
        return RefState(ref, local, None, "local-only", local)
    if local == theirs:
        return RefState(ref, local, theirs, "same")
    known = local if local is not None and _contains(repo, theirs, local) else None
    if local is None or known is not None:
        problems = tip_problems(repo, ref, theirs, known)
        if problems:
            done.invalid += problems
            return RefState(ref, local, theirs, "invalid")
        return RefState(
            ref, local, theirs, "fetched" if local is None else "fast-forwarded", theirs
        )
    if _contains(repo, local, theirs):
        return RefState(ref, local, theirs, "ahead", local)
    return RefState(ref, local, theirs, "diverged")


def _contains(repo: GitRepo, head: str, commit: str) -> bool:
    try:
        return repo.contains(head, commit)
    except (KeyError, ValueError) as exc:
        raise BadInput(
            f"commit {commit[:12]} or {head[:12]} is missing from this repository although a ref "
            "names it; run `git fsck` and `git okstra sync` again"
        ) from exc


def _held(state: RefState) -> RefState:
    if state.state in PUSHED_STATES or state.state == "replayed":
        return RefState(state.ref, state.local, state.remote, "conflict")
    return state


def _adoption(update: RefUpdate, states: list[RefState]) -> bool:
    adopted = {s.ref for s in states if s.state in ("fetched", "fast-forwarded")}
    return update.name in adopted


def _with_refs(conflict: TaskConflict, refs: tuple[str, ...]) -> TaskConflict:
    from dataclasses import replace

    return replace(conflict, refs=refs)


# -- replaying a task's local-only events -------------------------------------------------------


def _replay(
    repo: GitRepo,
    remote: str,
    task: _Task,
    local: str,
    theirs: str,
    choice: Choice | None,
    renumbered: dict[str, str],
    conflicts: list[TaskConflict],
    updates: list[RefUpdate],
) -> RefState:
    ref = task.ref
    base = repo.merge_base(local, theirs)
    events = [_event(repo, c) for c in repo.first_parents(local, base, ref)]
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
        summary = f"task {key_text} was created on both sides"
        conflicts.append(_conflict(remote, key_text, summary, "task", here, there, False))
        return RefState(ref, local, theirs, "conflict")
    problems = tip_problems(repo, ref, theirs, base)
    if problems:
        conflicts.append(_invalid_base(remote, key_text, problems, repo.commit_info(theirs)))
        return RefState(ref, local, theirs, "invalid")
    manifest = loads(repo.blob(repo.files_of(theirs)[MANIFEST_PATH]), f"{ref}:{MANIFEST_PATH}")
    remote_files = repo.files_of(theirs)

    def read(path: str) -> bytes | None:
        blob = remote_files.get(path)
        return repo.blob(blob) if blob is not None else None

    outcome = rp.replay(manifest, read, events)
    if outcome.clash is not None:
        clash = outcome.clash
        introduced = _introduced(repo, theirs, base, clash.what)
        conflicts.append(
            _conflict(
                remote,
                key_text,
                clash.summary,
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
            summary = f"replaying {step.event.subject!r} would store an invalid task.json"
            conflicts.append(
                _conflict(
                    remote,
                    key_text,
                    f"{summary}: {invalid[0]}",
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


def _event(repo: GitRepo, commit: str) -> rp.Event:
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


def _introduced(repo: GitRepo, tip: str, base: str | None, what: str) -> CommitInfo | None:
    """The remote's event that made the change a local event clashes with: the first one
    since ``base`` touching that file (or ``task.json`` field)."""
    path, _, leaf = what.partition(" ")
    for commit in repo.first_parents(tip, base, "the remote's chain"):
        parents = repo.commit_info(commit).parents
        parent = parents[0] if parents else None
        if leaf:
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


def _claimed_on_both(repo: GitRepo, task: _Task) -> bool:
    """A claim ref of the task moved on both sides: the same stage claimed twice, which no
    renumbering can keep."""
    return any(
        ref != task.ref
        and local is not None
        and theirs is not None
        and local != theirs
        and not _contains(repo, theirs, local)
        and not _contains(repo, local, theirs)
        for ref, (local, theirs) in task.refs.items()
    )


def _conflict(
    remote: str,
    key: str,
    summary: str,
    unit: str,
    here: CommitInfo,
    there: CommitInfo | None,
    renumberable: bool,
) -> TaskConflict:
    theirs = okstra("sync", remote, "--task", key, "--take-theirs", unit)
    choices = [(f"keep {remote}'s side and drop yours (kept under {DROPPED})", theirs)]
    if renumberable:
        renumber = okstra("sync", remote, "--task", key, "--renumber", unit)
        choices.append(
            (f"keep both: yours moves to the next free number after {remote}'s", renumber)
        )
    return TaskConflict(key, summary, unit, here, there, tuple(choices), ())


def _invalid_base(remote: str, key: str, problems: list[str], tip: CommitInfo) -> TaskConflict:
    summary = f"{remote}'s record fails its checks, so no event is replayed onto it: " + "; ".join(
        problems
    )
    return TaskConflict(key, summary, "task", tip, tip, (), ())


def _claim_conflict(
    repo: GitRepo, remote: str, task: _Task, ref: str, local: str, theirs: str
) -> TaskConflict:
    stage = ref.rsplit("-", 1)[-1]
    mine, other = _claim_at(repo, local), _claim_at(repo, theirs)
    key = str(mine.get("taskKey") or other.get("taskKey") or task.suffix)
    summary = (
        f"stage {stage} was claimed on both sides: here {_holder(mine)}, on {remote} "
        f"{_holder(other)}"
    )
    unit = str(mine.get("runId", "task"))
    there = repo.commit_info(theirs)
    return _conflict(remote, key, summary, unit, repo.commit_info(local), there, False)


def _claim_at(repo: GitRepo, commit: str) -> dict:
    try:
        data = json.loads(repo.blob(repo.files_of(commit)[CLAIM_PATH]))
    except (KeyError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _holder(claim: dict) -> str:
    return (
        f"{claim.get('runId', '?')} ({claim.get('status', '?')}) by {claim.get('user', '?')} "
        f"on {claim.get('host', '?')}"
    )


# -- the person's choice ----------------------------------------------------------------------


def _apply_choice(
    repo: GitRepo, task: _Task, choice: Choice, updates: list[RefUpdate], done: Reconciled
) -> _Task:
    """Settle the claim side of ``choice`` before classifying: the local claim commits of the
    dropped run go (their tips kept under ``refs/okstra-dropped/``), or are rewritten under the
    renumbered run id. The task events are transformed in :func:`_replay`."""
    refs = dict(task.refs)
    for ref, (local, theirs) in task.refs.items():
        if ref == task.ref or local is None or local == theirs:
            continue
        base = repo.merge_base(local, theirs) if theirs is not None else None
        own = repo.first_parents(local, base, ref)
        runs = {str(_claim_at(repo, c).get("runId")) for c in own}
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
    return _Task(task.suffix, refs)


def _keep(ref: str, local: str, updates: list[RefUpdate], done: Reconciled) -> None:
    kept = f"{DROPPED}{ref[len(LOCAL_REFS) :]}/{local}"
    updates.append(RefUpdate(kept, local, None))
    done.kept.append(kept)


def _renumbered(repo: GitRepo, remote: str, task: _Task, choice: Choice) -> str:
    """The unit's new name for ``--renumber``: the next number past every one the remote's
    tip or the local events use."""
    local, theirs = task.refs.get(task.ref, (None, None))
    if local is None or theirs is None or local == theirs:
        raise BadInput(
            f"--renumber {choice.unit}: {task.ref} has no local-only events to renumber; see "
            f"what conflicts with: {okstra('sync', remote)}"
        )
    base = repo.merge_base(local, theirs)
    events = [_event(repo, c) for c in repo.first_parents(local, base, task.ref)]
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


def _rename_workspace(repo: GitRepo, key: TaskKey, renumbered: dict[str, str]) -> None:
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


# -- notes ------------------------------------------------------------------------------------


def _notes(repo: GitRepo, remote: str, done: Reconciled, listing: Listing) -> None:
    there = {r: v for r, v in listing.there.items() if r.startswith(LOCAL_NOTES)}
    for ref in sorted(there.keys() - set(NOTES_REFS)):
        done.invalid.append(f"{ref}: not an okstra notes ref ({', '.join(NOTES_REFS)})")
    for ref in NOTES_REFS:
        local, theirs = listing.here.get(ref), there.get(ref)
        if local is None and theirs is None:
            continue
        unreadable = _unreadable(repo, ref, local, theirs, done)
        if unreadable is not None:
            done.states.append(unreadable)
        elif theirs is None:
            done.states.append(RefState(ref, local, None, "local-only", local))
        elif local == theirs:
            done.unchanged += 1
        elif local is None or _contains(repo, theirs, local):
            state = "fetched" if local is None else "fast-forwarded"
            done.states.append(RefState(ref, local, theirs, state, theirs))
            done.updates.append(RefUpdate(ref, theirs, local))
        elif _contains(repo, local, theirs):
            done.states.append(RefState(ref, local, theirs, "ahead", local))
        else:
            merged = repo.merge_notes(local, theirs, f"okstra sync: merge {ref}")
            done.states.append(RefState(ref, local, theirs, "merged", merged))
            done.updates.append(RefUpdate(ref, merged, local))
