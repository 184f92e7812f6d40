"""Run records, ``runs/<type>/<seq>.json`` in the task tree (docs/storage.md): stored and loaded
here.

Apart from :mod:`.task` so the commands that read only the manifest (``task show``, ``stage
ready``, ``verify target``…) do not build the run record classes on every start.
"""

from __future__ import annotations

from ..core.jsontext import dumps_pretty
from ..core.strict import is_digits
from ..core.values import Record
from ..git.repo import GitRepo
from .base import check_own, from_data, loads, to_data
from .task import SCHEMA_VERSION, TaskState, task_ref


class Critic(Record):
    """A run's critic pass opt-in (docs/workflow.md), chosen at set-up (``run start --critic``)."""

    enabled: bool
    """Whether the run has a critic pass."""
    provider: str | None = None
    """Whose worker plays the critic: ``claude``, ``codex`` or ``gemini``."""
    model: str | None = None
    """The critic's model, or ``default`` for the phase's default."""
    mode: str | None = None
    """``coverage`` (finding phases) or ``acceptance-devils-advocate`` (final-verification)."""


class Convergence(Record):
    """How the run's findings converge; for now only the critic opt-in."""

    critic: Critic
    """The critic pass chosen for the run."""


class RunOptions(Record):
    """The run's options (``run start --option NAME=VALUE``; the wizard's options group)."""

    clarification: str = "none"
    """The clarification response to carry in: ``none``, ``latest`` or a file."""
    related_tasks: list[str] | None = None
    """Related task keys."""
    directive: str | None = None
    """An extra directive for the lead."""
    pr_template: str | None = None
    """release-handoff: ``default`` or the pull request template file."""


class RunSetup(Record):
    """How the run was set up (``run start`` flags, or the wizard's answers through them)."""

    models: dict[str, str]
    """The model of each role (``lead``, ``executor``, ``claude``, ``codex``, ``gemini``,
    ``reportWriter``: those the run has), ``default`` for the phase's default."""
    options: RunOptions
    """The run's options, defaults filled in."""
    workers: list[str] | None = None
    """The analysis workers (None for implementation and release-handoff, which have none)."""
    base_ref: str | None = None
    """The base as given (``--base``), before it was resolved to ``baseCommit``."""
    verification_scope: str | None = None
    """final-verification: ``whole-task`` (``--stage auto``) or ``single-stage``."""
    stage: int | None = None
    """final-verification of one stage: its number."""


class IncrementalDecision(Record):
    """``incremental scope`` for this run (docs/workflow.md): which stages it re-verifies and which
    prior results it carries forward, and from which run."""

    mode: str
    """``incremental`` or ``full``."""
    reverify_stages: list[int]
    """Stages this run analyses again (the downstream closure of the impacted ones)."""
    carry_stages: list[int]
    """Stages whose prior plan-item verdicts are carried forward unchanged."""
    reason: str
    """Why: the base changed, nothing impacted, the closure's share of the map, …"""
    impacted: list[int]
    """The impacted stage numbers the decision was asked with."""
    prev_seq: str | None = None
    """The earlier run of the same type whose data the decision compared with."""
    prev_base_sha: str | None = None
    """That run's base commit."""
    cur_base_sha: str | None = None
    """This run's base commit."""


class RunRecord(Record):
    """``runs/<type>/<seq>.json`` in the task tree: one run of one phase."""

    task_key: str
    """The owning task."""
    task_type: str
    """The phase this run executes."""
    seq: str
    """3-digit sequence within the task type."""
    status: str
    """``running``, ``completed``, ``error`` or ``timeout``."""
    started_at: str
    """ISO 8601, UTC."""
    started_by: str
    """``Name <email>`` from git config."""
    paths: dict[str, str]
    """The run's `.okstra/` workspace paths, by kind (manifest, report, status, …)."""
    schema_version: int = SCHEMA_VERSION
    """Record format version."""
    finished_at: str | None = None
    """ISO 8601, UTC, once finished."""
    report_path: str | None = None
    """The final report, once finished."""
    base_commit: str | None = None
    """The commit the run analysed: its base ref resolved at ``run start``."""
    convergence: Convergence | None = None
    """The run's critic opt-in, when it has one."""
    incremental_decision: IncrementalDecision | None = None
    """The re-verification scope ``incremental scope KEY`` decided for this run."""
    clone: str | None = None
    """The clone that started it (``okstra.cloneId``): its work is that clone's to do and
    finish (``next`` elsewhere waits for it). None in runs started before clones had ids."""
    setup: RunSetup | None = None
    """Its set-up as ``run start`` was given it (None in runs a claim allocates, and in runs
    started before runs kept one)."""


def run_record_data(record: RunRecord, where: str) -> bytes:
    data = to_data(record)
    check_own(data, "run", where)
    return dumps_pretty(data)


def moved_run(where: str, raw: bytes, seq: str) -> bytes:
    """The stored run record ``raw`` (at ``where``) moved to run number ``seq``: its ``seq`` and
    its workspace paths (sync's ``--renumber`` of a run started on both sides)."""
    from ..core.keys import parse_task_key
    from ..logic.workspace import run_paths

    record = from_data(RunRecord, loads(raw, where), where)
    record.seq = seq
    record.paths = run_paths(parse_task_key(record.task_key), record.task_type, seq)
    return run_record_data(record, where)


def load_run(repo: GitRepo, state: TaskState, task_type: str, seq: str) -> RunRecord | None:
    path = f"runs/{task_type}/{seq}.json"
    raw = repo.read_path(state.head, path)
    if raw is None:
        return None
    where = f"{task_ref(state.key)}:{path}"
    return from_data(RunRecord, loads(raw, where), where)


def run_seqs(repo: GitRepo, head: str, task_type: str) -> list[str]:
    """The run numbers of ``task_type`` in the task tree at ``head``, in order."""
    names = repo.list_dir(head, f"runs/{task_type}")
    return sorted((n[:-5] for n in names if n.endswith(".json") and is_digits(n[:-5])), key=int)


def next_seq(repo: GitRepo, head: str, task_type: str) -> str:
    """The next 3-digit run number of ``task_type`` in the task tree at ``head``."""
    taken = run_seqs(repo, head, task_type)
    return f"{int(taken[-1]) + 1 if taken else 1:03d}"
