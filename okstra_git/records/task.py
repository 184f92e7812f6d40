"""The task record: ``refs/okstra/tasks/<group>/<id>``, a chain of commits, one per event.

Each commit's tree holds ``task.json`` (the manifest) and the task's snapshots (``brief.md``,
``plans/plan-<seq>.md``, ``runs/<type>/<seq>.json``); its message is the event. The chain is
the task's timeline, readable with plain ``git log``/``git show``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..core.errors import BadInput, Refused
from ..core.jsontext import dumps_pretty
from ..core.keys import TASK_TYPES, TaskKey
from ..core.shell import okstra
from ..core.tracking import TASKS_PREFIX, tracking_name
from ..core.values import Record, Value
from ..git.repo import GitRepo, RefUpdate, cas_retry
from .base import check_own, from_data, loads, stored_json, to_data

SCHEMA_VERSION = 1
MANIFEST_PATH = "task.json"


def now_iso() -> str:
    from datetime import UTC, datetime  # not at import: a read command never needs it

    return datetime.now(UTC).replace(microsecond=0).isoformat()


def task_ref(key: TaskKey) -> str:
    return f"{TASKS_PREFIX}{key.ref_suffix}"


class Workflow(Record):
    """Where the task stands in the phase order (docs/workflow.md, Phases and runs)."""

    current_phase: str
    """The task type of the latest run (or the task's own type before any run)."""
    current_phase_state: str
    """``pending``, ``running``, ``completed``, ``error`` or ``timeout``."""
    phase_states: dict[str, str]
    """Latest state per task type that has run."""
    last_completed_phase: str | None
    """The last task type whose run finished ``completed``."""
    next_recommended_phase: str | None
    """What to run next: the phase order, or the same phase again after an error."""
    awaiting_approval: bool
    """True while the plan waits for the user's approval before ``implementation``."""
    routing_status: str
    """``ready``, ``awaiting-approval``, ``rerun`` or ``done``."""
    last_safe_checkpoint: str | None
    """The last run that completed, as ``<type>-<seq>``: where a resume starts from."""

    def __init__(
        self,
        current_phase: str,
        current_phase_state: str,
        phase_states: dict[str, str] | None = None,
        last_completed_phase: str | None = None,
        next_recommended_phase: str | None = None,
        awaiting_approval: bool = False,
        routing_status: str = "ready",
        last_safe_checkpoint: str | None = None,
    ) -> None:
        self.current_phase = current_phase
        self.current_phase_state = current_phase_state
        self.phase_states = {} if phase_states is None else phase_states
        self.last_completed_phase = last_completed_phase
        self.next_recommended_phase = next_recommended_phase
        self.awaiting_approval = awaiting_approval
        self.routing_status = routing_status
        self.last_safe_checkpoint = last_safe_checkpoint


class RunRef(Record):
    """A pointer to one run of the task."""

    task_type: str
    """The phase the run executes."""
    seq: str
    """3-digit sequence within its task type."""
    status: str
    """``running``, ``completed``, ``error`` or ``timeout``."""
    report_path: str | None
    """The run's final report (workspace-relative), once finished."""

    def __init__(
        self,
        task_type: str,
        seq: str,
        status: str,
        report_path: str | None = None,
    ) -> None:
        self.task_type = task_type
        self.seq = seq
        self.status = status
        self.report_path = report_path


class PlanRef(Record):
    """The plan snapshot the task currently follows."""

    seq: str
    """3-digit plan sequence; the snapshot is ``plans/plan-<seq>.md`` in the task tree."""
    path: str
    """Where the plan file lives in the work tree, as submitted."""
    blob: str
    """The plan's blob id: approvals are notes on this blob."""

    def __init__(
        self,
        seq: str,
        path: str,
        blob: str,
    ) -> None:
        self.seq = seq
        self.path = path
        self.blob = blob


class Task(Record):
    """The task manifest, ``task.json``."""

    task_key: str
    """``project:group:id`` exactly as typed."""
    project_id: str
    """First key part."""
    task_group: str
    """Second key part."""
    task_id: str
    """Third key part."""
    task_type: str
    """The type the task was created with (its entry phase)."""
    work_category: str
    """Free-form category (``feature``, ``bugfix``, …)."""
    current_status: str
    """``active``, ``awaiting-approval`` or ``done``."""
    created_at: str
    """ISO 8601, UTC."""
    updated_at: str
    """ISO 8601, UTC, of the latest event."""
    workflow: Workflow
    """Phase tracking."""
    schema_version: int
    """Manifest format version."""
    brief_path: str | None
    """``brief.md`` in the task tree when a brief was given."""
    latest_run: RunRef | None
    """The most recently started run."""
    latest_report_path: str | None
    """The report of the most recently finished run."""
    latest_plan: PlanRef | None
    """The plan snapshot in force."""
    implementation_base_commit: str | None
    """The task worktree HEAD when the first stage was claimed (docs/workflow.md)."""

    def __init__(
        self,
        task_key: str,
        project_id: str,
        task_group: str,
        task_id: str,
        task_type: str,
        work_category: str,
        current_status: str,
        created_at: str,
        updated_at: str,
        workflow: Workflow,
        schema_version: int = SCHEMA_VERSION,
        brief_path: str | None = None,
        latest_run: RunRef | None = None,
        latest_report_path: str | None = None,
        latest_plan: PlanRef | None = None,
        implementation_base_commit: str | None = None,
    ) -> None:
        self.task_key = task_key
        self.project_id = project_id
        self.task_group = task_group
        self.task_id = task_id
        self.task_type = task_type
        self.work_category = work_category
        self.current_status = current_status
        self.created_at = created_at
        self.updated_at = updated_at
        self.workflow = workflow
        self.schema_version = schema_version
        self.brief_path = brief_path
        self.latest_run = latest_run
        self.latest_report_path = latest_report_path
        self.latest_plan = latest_plan
        self.implementation_base_commit = implementation_base_commit


class TaskState(Value):
    """A task as read from its ref: the manifest and the commit it came from."""

    key: TaskKey
    task: Task
    head: str
    """The event commit the manifest was read from: the compare-and-swap expectation."""


def load_task(repo: GitRepo, key: TaskKey) -> TaskState | None:
    """The task's current state, or ``None`` when it does not exist.

    Refuses (exit 2) a ref whose ``task.json`` is corrupt or belongs to another key whose
    slugs collide with this one.
    """
    ref = task_ref(key)
    head = repo.read_ref(ref)
    if head is None:
        return None
    return TaskState(key, _read_manifest(repo, head, ref, key), head)


def require_task(repo: GitRepo, key: TaskKey) -> TaskState:
    """The task, or a refusal that says how to get it: ``sync`` when a fetch brought a
    remote's copy (a fresh clone), else ``task new``."""
    state = load_task(repo, key)
    if state is not None:
        return state
    ref = task_ref(key)
    remotes = [r for r in repo.remote_names() if repo.read_ref(tracking_name(r, ref))]
    if remotes:
        fix = okstra("sync", remotes[0])
        raise Refused(
            f"task {key} is not here yet, but {remotes[0]} has it "
            f"({tracking_name(remotes[0], ref)}, fetched); bring it here with: {fix}",
            hint=fix,
        )
    # Not fetched is not absent: a clone that has not fetched since the task was made (a fresh
    # one) must be told to sync, never to create a second task of that key. Only remotes set
    # up to carry okstra's refs are asked, and only for this one ref.
    for remote in repo.remote_names():
        said = _remote_holds(repo, remote, ref)
        if said is None:
            continue
        fix = okstra("sync", remote)
        raise Refused(
            f"task {key} is not here yet"
            + (
                f", but {remote} has it ({ref}, not fetched here); bring it here with: {fix}"
                if said == ""
                else f"; {remote} could not be asked whether it has it ({said}), so sync "
                f"with it before creating the task: {fix}"
            ),
            hint=fix,
        )
    types = f"its --type TYPE the phase it starts in, one of: {', '.join(TASK_TYPES)}"
    # A plain `git clone` fetches none of okstra's refs, and nothing above asked its remote:
    # the task may well be there (a planner published it), so the first fix is the set-up
    # that brings it, never a second task of that key.
    unset = [r for r in repo.remote_names() if not _fetches_okstra(repo, r)]
    if unset:
        setup = okstra("init", "--remote", unset[0])
        raise Refused(
            f"no task {key} here (looked for {ref}), and this clone does not fetch okstra's "
            f"records from {unset[0]}: if another clone made the task, set this clone up to "
            f"fetch them (the hint), then sync with {unset[0]}; to make a new task instead, "
            f"run task new {key} --type TYPE, {types}",
            hint=setup,
        )
    fix = okstra("task", "new", str(key), "--type", "TYPE")
    raise Refused(f"no task {key} (looked for {ref}); create it with task new, {types}", hint=fix)


def _fetches_okstra(repo: GitRepo, remote: str) -> bool:
    """Whether ``init --remote`` set ``remote`` up to fetch okstra's refs."""
    from ..core.tracking import tracking_refs

    specs = repo.config_get_all(f"remote.{remote}.fetch")
    return any(spec.endswith(f":{tracking_refs(remote)}*") for spec in specs)


def _remote_holds(repo: GitRepo, remote: str, ref: str) -> str | None:
    """Ask ``remote`` (when ``init --remote`` set it up for okstra) whether it holds ``ref``:
    ``""`` it does, None it does not (or is no okstra remote), else why it could not say."""
    from ..git.process import git, no_prompts

    if not _fetches_okstra(repo, remote):
        return None
    # A probe on a refusal's way out, not asked for: it never waits on a credential prompt
    # (docs/concurrency-and-sync.md); "could not be asked" says why, and sync asks properly.
    with no_prompts():
        proc = git(repo.workdir or repo.git_dir, "ls-remote", "--refs", remote, ref)
    if proc.returncode != 0:
        return proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "it failed"
    found = any(line.split("\t", 1)[-1] == ref for line in proc.stdout.splitlines())
    return "" if found else None


def _read_manifest(repo: GitRepo, commit: str, ref: str, key: TaskKey | None) -> Task:
    task = repo.memoized("task", ref, commit, lambda: _read_manifest_at(repo, commit, ref))
    if key is not None and task.task_key != str(key):
        raise BadInput(
            f"task key {str(key)!r} maps to {ref}, which already holds task {task.task_key!r} "
            "(their slugs collide); choose a different group or id"
        )
    return task.copy()


def _read_manifest_at(repo: GitRepo, commit: str, ref: str) -> Task:
    missing = "the task ref does not hold a manifest"
    data = stored_json(repo, commit, ref, MANIFEST_PATH, missing)
    return from_data(Task, data, f"{ref}:{MANIFEST_PATH}")


def _parse_manifest(raw: bytes, where: str) -> Task:
    return from_data(Task, loads(raw, where), where)


BULK_FROM = 64
"""From this many manifests on, :func:`read_manifests` reads them through git's plumbing: its
two processes cost ~3 ms to start, a manifest read through pygit2 ~25 µs."""


def read_manifests(repo: GitRepo, heads: Mapping[str, str]) -> dict[str, Task]:
    """The manifest of every task ref in ``heads`` (ref → commit), read in bulk and checked
    as one read would; a ref the bulk read cannot vouch for is read alone, which names what
    is wrong with it (exit 2)."""
    if len(heads) < BULK_FROM:
        return {ref: _read_manifest(repo, head, ref, None) for ref, head in heads.items()}
    raws = repo.files_at(list(heads.values()), MANIFEST_PATH)
    return {
        ref: _read_manifest(repo, head, ref, None)
        if raw is None
        else _parse_manifest(raw, f"{ref}:{MANIFEST_PATH}")
        for (ref, head), raw in zip(heads.items(), raws, strict=True)
    }


Change = Callable[[Task | None, str | None], tuple[Task, Mapping[str, bytes | None]]]


def write_event(
    repo: GitRepo,
    key: TaskKey,
    change: Change,
    event: str,
    also: Callable[[], RefUpdate | None] | None = None,
    also_ref: str | None = None,
) -> TaskState:
    """Append one event to the task's chain by compare-and-swap, retried from a fresh read.

    ``change(task, head)`` gets the current manifest (``None`` for a new task) and returns the
    new manifest and the other tree files to write. It may raise to refuse; it is called again
    on every retry, so it must only compute. ``also`` builds one more update of ``also_ref``
    (a notes commit: an approval, a verdict) from a fresh read on every attempt; it lands in
    the same transaction as the event, so a crash never leaves one without the other.
    """
    ref = task_ref(key)

    def attempt() -> TaskState:
        state = load_task(repo, key)
        old_task, head = (state.task, state.head) if state else (None, None)
        task, files = change(old_task, head)
        commit = event_commit(repo, key, task, head, files, event)
        extra = also() if also is not None else None
        updates = [RefUpdate(ref, commit, head), *([extra] if extra else [])]
        repo.update_refs(updates, f"okstra: {event}")
        return TaskState(key, task, commit)

    return cas_retry(repo, attempt, [ref, *([also_ref] if also_ref else [])])


def event_commit(
    repo: GitRepo,
    key: TaskKey,
    task: Task,
    head: str | None,
    files: Mapping[str, bytes | None],
    event: str,
) -> str:
    """Write (not land) the event commit after ``head``: the schema-checked manifest plus
    ``files`` in the tree, ``event`` as the message. Landing it is the caller's CAS."""
    task.updated_at = now_iso()
    data = to_data(task)
    check_own(data, "task", f"{task_ref(key)}:{MANIFEST_PATH}")
    tree = repo.tree_with(head or None, {**files, MANIFEST_PATH: dumps_pretty(data)})
    return repo.commit(tree, [head] if head else [], f"{event}\n\nOkstra-Task: {key}\n")
