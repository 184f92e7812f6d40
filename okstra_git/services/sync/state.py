"""What reconciling reads and decides (``reconcile.py``): okstra's refs here and as fetched
(:class:`Listing`), each ref's state, a task's refs, a true conflict and the person's choice
that settles it, and what one reconcile did (:class:`Reconciled`)."""

from __future__ import annotations

from ...core.errors import BadInput
from ...core.keys import TaskKey
from ...core.tracking import LOCAL_NOTES, LOCAL_REFS, tracking_notes, tracking_refs
from ...core.values import Record, Value, field
from ...git import plumbing
from ...git.repo import CommitInfo, GitRepo, RefUpdate
from ...records.task import TASKS_PREFIX

DROPPED = "refs/okstra-dropped/"
"""Where a ``--take-theirs`` keeps the local tips it replaced: local only (sync moves
``refs/okstra/*``), ``refs/okstra-dropped/<tasks|claims>/…/<old sha>``."""


PUSHED_STATES = ("ahead", "local-only", "replayed", "merged")


class RefState(Value):
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


class Choice(Value):
    """How to settle one task's true conflict, chosen by the person (``sync --task KEY``)."""

    key: TaskKey
    """The task."""
    action: str
    """``take-theirs`` (drop the local side of ``unit``) or ``renumber`` (keep both)."""
    unit: str
    """A run id (``error-analysis-001``), ``plan-<seq>``, or ``task`` (take-theirs only)."""


class Holder(Value):
    """Who holds a stage, as its claim record says (``?`` for what it does not say)."""

    run_id: str
    """The claim's run."""
    status: str
    """The claim's status."""
    user: str
    """Who claimed it."""
    host: str
    """Where."""


class Clashed(Value):
    """What a task's true conflict is about (views/sync.py's ``summary`` words it)."""

    kind: str
    """``started`` or ``changed`` (the conflict's unit — a run, a plan snapshot — or, for the
    unit ``task``, the file ``what``), ``field`` (the ``task.json`` field ``what`` changed
    differently), ``created`` (the task, on both sides), ``claimed`` (stage ``what`` on both:
    ``holders``), ``unchecked`` (the remote's record fails its checks: ``problems``) or
    ``unstorable`` (replaying the local event ``what`` would store an invalid ``task.json``:
    ``problems``)."""
    what: str = ""
    """The file, field, stage or event subject, as ``kind`` says."""
    holders: tuple[Holder, ...] = ()
    """``claimed``: the stage's holder here, then on the remote."""
    problems: tuple[str, ...] = ()
    """``unchecked``, ``unstorable``: what the record checks found."""


class TaskConflict(Value):
    """A true conflict in one task: what both sides did and the command for each choice."""

    task_key: str
    """The task."""
    what: Clashed
    """What happened, e.g. a run started on both sides."""
    unit: str
    """What the choice is about (see :class:`Choice`)."""
    here: CommitInfo
    """The local event that could not be re-applied."""
    there: CommitInfo | None
    """The remote's event it clashes with (None when it could not be told apart)."""
    choices: tuple[tuple[str, str], ...]
    """(which choice, the command), one per choice: ``take-theirs`` (keep the remote's side,
    drop this clone's, kept under ``refs/okstra-dropped/``) or ``renumber`` (keep both, this
    clone's moved to the next free number); views/sync.py says what each does."""
    refs: tuple[str, ...]
    """The task's refs, left as they were: none of them is pushed until it is settled."""


class Unadopted(Value):
    """A record fetched from a remote and not adopted (views/sync.py's ``unadopted`` words it)."""

    ref: str
    """The ref, as okstra names it here."""
    kind: str
    """``checks`` (a record check failed: ``problem``), ``unreadable`` (``commit`` is not a
    commit okstra can read), ``broken`` (the history under ``commit`` holds a commit that cannot
    be read) or ``notes`` (not a notes ref okstra keeps)."""
    commit: str | None = None
    """The fetched value (``unreadable``, ``broken``)."""
    problem: str = ""
    """``checks``: what ``records.incoming`` or ``records.refnames`` found, naming ref and
    field."""


class Listing(Value):
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


class Reconciled(Record):
    """What reconciling did locally, and what is left to push."""

    states: list[RefState] = field(default_factory=list)
    """Every ref sync looked at, except those already in step (counted in ``unchanged``)."""
    unchanged: int = 0
    """Refs whose local value is the remote's, as fetched: nothing to do."""
    conflicts: list[TaskConflict] = field(default_factory=list)
    invalid: list[Unadopted] = field(default_factory=list)
    """Every problem with a remote record that was not adopted."""
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


class TaskRefs(Record):
    """One task's refs: ref → (local value, remote value)."""

    suffix: str
    refs: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return TASKS_PREFIX + self.suffix


def contains(repo: GitRepo, head: str, commit: str) -> bool:
    try:
        return repo.contains(head, commit)
    except (KeyError, ValueError) as exc:
        raise BadInput(
            f"commit {commit[:12]} or {head[:12]} is missing from this repository although a ref "
            "names it; run `git fsck` and `git okstra sync` again"
        ) from exc
