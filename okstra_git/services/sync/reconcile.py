"""Bringing local okstra refs in step with the fetched remote-tracking ones (docs/storage.md,
docs/concurrency-and-sync.md).

What ``sync`` does between its fetch and its push, task by task (a task ref and its claim
refs), all landing locally in ONE ref transaction conditional on every value read:

- a ref only the remote has, or one the remote moved ahead, is adopted — after its tip's
  records pass ``records.incoming`` (schema, ref name, confined branch and path fields); a
  record that fails is named and never adopted;
- a ref only here, or ahead here, is pushed;
- a task ref both sides moved has its local-only events replayed on the remote's tip
  (``sync/replay.py``), so nothing either side recorded is lost; a claim ref both sides
  moved is a true conflict (the same stage claimed on both);
- a true conflict stops that task only: none of its refs is pushed or rewritten, and the
  conflict names both sides and one command per choice (``sync/conflicts.py``; the choice
  made is applied by ``sync/choice.py``);
- notes (verdicts, approvals) fast-forward or merge line by line (``cat_sort_uniq``).

What it reads and decides (the listing, each ref's state) is ``sync/state.py``.
"""

from __future__ import annotations

from ...core.errors import BadInput
from ...core.progress import Progress
from ...core.tracking import BRANCHES, LOCAL_NOTES, LOCAL_REFS
from ...git.repo import BULK_REFS, GitRepo, RefUpdate, cas_retry
from ...records.refnames import CLAIM_REF, NOTES_REFS, TASK_REF, ref_problems
from .state import (
    PUSHED_STATES,
    Choice,
    Listing,
    Reconciled,
    RefState,
    TaskConflict,
    TaskRefs,
    Unadopted,
    contains,
    list_refs,
)


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
        from .choice import rename_workspace

        rename_workspace(repo, choice.key, done.renumbered)
    return done


# -- task and claim refs ----------------------------------------------------------------------


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
            done.invalid += _checks(ref, ref_problems(ref))
            done.states.append(RefState(ref, here.get(ref), there[ref], "invalid"))
    done.states.sort(key=lambda state: state.ref)
    # Only tasks with a ref that moved on either side are looked at: the rest read nothing.
    tasks: dict[str, TaskRefs] = {}
    for ref in sorted(ref for ref, suffix in suffixes.items() if suffix in moved):
        suffix = suffixes[ref]
        tasks.setdefault(suffix, TaskRefs(suffix)).refs[ref] = (here.get(ref), there.get(ref))
    done.unchanged += len(suffixes) - sum(len(task.refs) for task in tasks.values())
    with Progress("Reconciling okstra tasks", len(tasks)) as meter:  # a terminal, once slow
        for task in tasks.values():
            chosen = choice if choice is not None and choice.key.ref_suffix == task.suffix else None
            _task(repo, remote, task, chosen, done)
            meter.tick()


def _task(
    repo: GitRepo, remote: str, task: TaskRefs, choice: Choice | None, done: Reconciled
) -> None:
    states: list[RefState] = []
    conflicts: list[TaskConflict] = []
    updates: list[RefUpdate] = []
    if choice is not None:
        from .choice import apply_choice, renumbered_unit

        if choice.action == "renumber":
            done.renumbered[choice.unit] = renumbered_unit(repo, remote, task, choice)
        task = apply_choice(repo, task, choice, updates, done)
    for ref, (local, theirs) in sorted(task.refs.items()):
        state = _classify(repo, ref, local, theirs, done)
        if state.state == "diverged" and ref == task.ref:
            from .replay import replay_task

            assert local is not None and theirs is not None  # diverged: both sides moved
            state = replay_task(
                repo, remote, task, local, theirs, choice, done.renumbered, conflicts, updates
            )
        elif state.state == "diverged":
            from .conflicts import claim_conflict

            assert local is not None and theirs is not None
            conflicts.append(claim_conflict(repo, remote, task, ref, local, theirs))
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
        done.invalid.append(Unadopted(ref, "unreadable", theirs))
        return unreadable
    if local is not None:
        repo.check_history(local, [theirs], ref)  # this clone's own damage: BadInput
    try:
        repo.check_history(theirs, [local] if local else [], fetched)
    except BadInput:
        done.invalid.append(Unadopted(ref, "broken", theirs))
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
    known = local if local is not None and contains(repo, theirs, local) else None
    if local is None or known is not None:
        from ...records.incoming import tip_problems

        problems = tip_problems(repo, ref, theirs, known)
        if problems:
            done.invalid += _checks(ref, problems)
            return RefState(ref, local, theirs, "invalid")
        return RefState(
            ref, local, theirs, "fetched" if local is None else "fast-forwarded", theirs
        )
    if contains(repo, local, theirs):
        return RefState(ref, local, theirs, "ahead", local)
    return RefState(ref, local, theirs, "diverged")


def _checks(ref: str, problems: list[str]) -> list[Unadopted]:
    return [Unadopted(ref, "checks", problem=problem) for problem in problems]


def _held(state: RefState) -> RefState:
    if state.state in PUSHED_STATES or state.state == "replayed":
        return RefState(state.ref, state.local, state.remote, "conflict")
    return state


def _adoption(update: RefUpdate, states: list[RefState]) -> bool:
    adopted = {s.ref for s in states if s.state in ("fetched", "fast-forwarded")}
    return update.name in adopted


def _with_refs(conflict: TaskConflict, refs: tuple[str, ...]) -> TaskConflict:
    return conflict.replace(refs=refs)


# -- notes ------------------------------------------------------------------------------------


def _notes(repo: GitRepo, remote: str, done: Reconciled, listing: Listing) -> None:
    there = {r: v for r, v in listing.there.items() if r.startswith(LOCAL_NOTES)}
    for ref in sorted(there.keys() - set(NOTES_REFS)):
        done.invalid.append(Unadopted(ref, "notes"))
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
        elif local is None or contains(repo, theirs, local):
            state = "fetched" if local is None else "fast-forwarded"
            done.states.append(RefState(ref, local, theirs, state, theirs))
            done.updates.append(RefUpdate(ref, theirs, local))
        elif contains(repo, local, theirs):
            done.states.append(RefState(ref, local, theirs, "ahead", local))
        else:
            merged = repo.merge_notes(local, theirs, f"okstra sync: merge {ref}")
            done.states.append(RefState(ref, local, theirs, "merged", merged))
            done.updates.append(RefUpdate(ref, merged, local))
