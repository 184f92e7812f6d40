"""The stage claim record: ``refs/okstra/claims/<group>/<id>/stage-<N>``.

Each ref is a chain of commits whose tree holds ``claim.json``. A claim is created only
where no live claim exists and moves ``started`` → ``done`` (or ``released``) by
compare-and-swap; ``git for-each-ref refs/okstra/claims/<group>/<id>/`` lists the consumers.
Names are ``stage-<N>`` leaves under a fixed-depth folder, so no claim ref can ever be a folder
of another (libgit2 transactions skip that check).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from ..core.errors import BadInput
from ..core.jsontext import dumps_pretty
from ..core.keys import TaskKey, parse_task_key
from ..core.shell import command
from ..core.strict import is_digits
from ..core.values import Record, Value
from ..git.repo import GitRepo
from ..logic.batch import EXPIRED, Holder
from .base import check_own, from_data, stored_json, to_data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
else:
    Any = object  # records.base evaluates the fields' hints: an object field takes any value

if TYPE_CHECKING:
    from datetime import datetime

SCHEMA_VERSION = 1
CLAIM_PATH = "claim.json"
REPORT_PATH = "report.md"
"""The stage report's content, beside ``claim.json`` in the done commit: it travels with the
claim, so a clone that never saw the report file still reads it."""
REPORT_DATA_PATH = "report.json"
"""Where a stage report given as report data (``stage done --report X.json``) is stored instead
of ``report.md``: each kind under its own name, so a reader knows which it holds."""
REPORT_FILES = (REPORT_PATH, REPORT_DATA_PATH)
"""The names a done claim's report may be stored under (at most one of them)."""
CLAIMS_PREFIX = "refs/okstra/claims/"
LEASE_KEY = "okstra.claim.lease"
"""The config key of the lease of every claim that names none (``init`` sets it; ``none``: no
lease)."""
DEFAULT_LEASE = "2h"
"""What ``init`` sets ``okstra.claim.lease`` to when it is unset."""


def claims_prefix(key: TaskKey) -> str:
    return f"{CLAIMS_PREFIX}{key.ref_suffix}/"


def claim_ref(key: TaskKey, stage: int) -> str:
    return f"{claims_prefix(key)}stage-{stage}"


class Claim(Record):
    """``claim.json``: one run's hold on one stage."""

    task_key: str
    """The task the stage belongs to, exactly as typed."""
    stage: int
    """The Stage Map number."""
    run_id: str
    """The claiming run, e.g. ``implementation-002``; every stage of one batch shares it."""
    status: str
    """``started``, ``done`` or ``released``."""
    started_at: str
    """ISO 8601, UTC."""
    host: str
    """Machine the claim was taken on."""
    user: str
    """``Name <email>`` of the claimer (git identity)."""
    clone: str | None
    """The claiming clone's id (``okstra.cloneId``, ``services/identity.py``): what makes a
    claim this clone's. None in claims written before clones had ids."""
    base_commit: str
    """The commit the stage worktree was created from."""
    started_head_commit: str
    """The stage worktree HEAD when the claim was taken (equals the base at first)."""
    worktree_path: str
    """Absolute path of the stage worktree; empty when claimed with ``--no-worktree``."""
    branch: str
    """``okstra/<group>/<id>/stage-<N>``; empty when claimed with ``--no-worktree``."""
    batch: list[int]
    """Every stage claimed together with this one, in order."""
    schema_version: int
    """Record format version."""
    plan_blob: str | None
    """The approved plan blob the claim was made against."""
    stacked_on: int | None
    """The dependency stage whose done head is the base (docs/workflow.md: stacking); None when the
    base is the task worktree HEAD."""
    lease_expires_at: str | None
    """ISO 8601, UTC; past it, a ``started`` claim may be taken over."""
    lease_seconds: int | None
    """The lease's length: ``stage renew`` (and the work loop while its command runs) moves
    ``lease_expires_at`` this far past the time of renewal."""
    take_over_of: str | None
    """The run id whose expired claim this one replaced."""
    done_at: str | None
    """ISO 8601, UTC, once done."""
    head_commit: str | None
    """The stage worktree HEAD read at ``stage done`` (never taken on trust)."""
    report_path: str | None
    """The implementation report for the stage, once done."""
    carry: dict[str, Any] | None
    """The stage carry sidecar (``carry/stage-<N>.json``) content, once done."""
    released_at: str | None
    """ISO 8601, UTC, when released without done."""
    released_by: str | None
    """Who released it (audit): ``Name <email> on <host>``, plus `` (--force)`` when the claim
    was another run's."""
    release_reason: str | None
    """Why (audit)."""
    history: list[str]
    """Earlier run ids that held this stage and released it or were taken over, oldest first
    (the claim ref's commit chain keeps each of their records)."""

    def __init__(
        self,
        task_key: str,
        stage: int,
        run_id: str,
        status: str,
        started_at: str,
        host: str,
        user: str,
        base_commit: str,
        started_head_commit: str,
        worktree_path: str,
        branch: str,
        batch: list[int],
        schema_version: int = SCHEMA_VERSION,
        plan_blob: str | None = None,
        stacked_on: int | None = None,
        lease_expires_at: str | None = None,
        lease_seconds: int | None = None,
        take_over_of: str | None = None,
        done_at: str | None = None,
        head_commit: str | None = None,
        report_path: str | None = None,
        carry: dict[str, Any] | None = None,
        released_at: str | None = None,
        released_by: str | None = None,
        release_reason: str | None = None,
        history: list[str] | None = None,
        clone: str | None = None,
    ) -> None:
        self.task_key = task_key
        self.stage = stage
        self.run_id = run_id
        self.status = status
        self.started_at = started_at
        self.host = host
        self.user = user
        self.base_commit = base_commit
        self.started_head_commit = started_head_commit
        self.worktree_path = worktree_path
        self.branch = branch
        self.batch = batch
        self.schema_version = schema_version
        self.plan_blob = plan_blob
        self.stacked_on = stacked_on
        self.lease_expires_at = lease_expires_at
        self.lease_seconds = lease_seconds
        self.take_over_of = take_over_of
        self.done_at = done_at
        self.head_commit = head_commit
        self.report_path = report_path
        self.carry = carry
        self.released_at = released_at
        self.released_by = released_by
        self.release_reason = release_reason
        self.history = [] if history is None else history
        self.clone = clone

    @property
    def who(self) -> str:
        """``Name <email> on host (clone ID)``: who holds (or held) the stage, and where —
        several clones share a host, so the clone is named when the claim records it."""
        where = f"{self.user} on {self.host}"
        return f"{where} (clone {self.clone})" if self.clone else where

    def lease_expired(self, now: datetime | None = None) -> bool:
        """Past its lease: a ``started`` claim then no longer holds its stage against a
        ``--take-over-expired`` claim."""
        if self.lease_expires_at is None:
            return False
        from datetime import UTC, datetime  # a lease to judge: most claims have none

        expires = datetime.fromisoformat(self.lease_expires_at)
        return (now or datetime.now(UTC)) >= expires


def renamed_run(claim: Claim, old: str, new: str) -> Claim:
    """``claim`` naming run ``old`` as ``new`` wherever it names it (its run, the run it took
    over, its history): sync's ``--renumber`` of a run claimed on both sides."""
    claim.run_id = new if claim.run_id == old else claim.run_id
    if claim.take_over_of == old:
        claim.take_over_of = new
    claim.history = [new if run == old else run for run in claim.history]
    return claim


class ClaimState(Value):
    """A claim as read from its ref, with the commit to compare-and-swap against."""

    claim: Claim
    """The record in the ref's ``claim.json``."""
    head: str
    """The claim ref's commit it was read from: the compare-and-swap expectation."""


def claim_json(claim: Claim, where: str) -> bytes:
    data = to_data(claim)
    check_own(data, "claim", where)
    return dumps_pretty(data)


def claim_tree(
    repo: GitRepo, ref: str, claim: Claim, files: Mapping[str, bytes] | None = None
) -> str:
    """The tree of a commit of claim ref ``ref``: ``claim``'s ``claim.json``, and ``files``
    beside it (a done stage's report)."""
    where = f"{ref}:{CLAIM_PATH}"
    return repo.tree_with(None, {CLAIM_PATH: claim_json(claim, where), **(files or {})})


def claim_commit(
    repo: GitRepo,
    key: TaskKey,
    claim: Claim,
    parent: str | None,
    subject: str,
    files: Mapping[str, bytes] | None = None,
) -> str:
    """Write (not land) the next commit of ``claim``'s ref after ``parent``: its tree as
    :func:`claim_tree`, its message ``subject`` then the ``Okstra-Task`` and ``Okstra-Run``
    trailers (docs/storage.md). Landing it is the caller's compare-and-swap."""
    message = f"{subject}\n\nOkstra-Task: {key}\nOkstra-Run: {claim.run_id}\n"
    tree = claim_tree(repo, claim_ref(key, claim.stage), claim, files)
    return repo.commit(tree, [parent] if parent else [], message)


def load_claim(repo: GitRepo, key: TaskKey, stage: int) -> ClaimState | None:
    ref = claim_ref(key, stage)
    head = repo.read_ref(ref)
    if head is None:
        return None
    return ClaimState(read_claim_at(repo, head, ref), head)


def read_claim_at(repo: GitRepo, commit: str, ref: str) -> Claim:
    """The claim at ``commit`` of ``ref``; refused (exit 2) when it names a stage, task, branch
    or worktree path that is not its own, so such a record is never acted on."""
    return repo.memoized("claim", ref, commit, lambda: _read_claim(repo, commit, ref)).copy()


def _read_claim(repo: GitRepo, commit: str, ref: str) -> Claim:
    where = f"{ref}:{CLAIM_PATH}"
    missing = "the claim ref does not hold a claim record"
    claim = from_data(Claim, stored_json(repo, commit, ref, CLAIM_PATH, missing), where)
    problems = claim_location_problems(
        ref, claim.stage, claim.task_key, claim.branch, claim.worktree_path
    )
    if problems:
        raise BadInput(
            f"{where} is not a claim okstra wrote, so it is never acted on: "
            + "; ".join(problems)
            + f". Remove it here with: {command('git', 'update-ref', '-d', ref, commit)}"
        )
    return claim


def claim_location_problems(
    ref: str, stage: int, task_key: str, branch: str, worktree_path: str
) -> list[str]:
    """Why a claim stored at ``ref`` does not name its own stage, task, branch and a plain
    worktree path (every field okstra later acts on: prune deletes that branch and folder)."""
    prefix, _, leaf = ref.rpartition("/")
    suffix = prefix[len(CLAIMS_PREFIX) :]
    problems = []
    if leaf != f"stage-{stage}":
        problems.append(f"stage {stage} is not the stage of its ref ({leaf})")
    try:
        if parse_task_key(task_key).ref_suffix != suffix:
            problems.append(f"taskKey {task_key!r} is not the task of its ref ({suffix})")
    except BadInput as exc:
        problems.append(f"taskKey: {exc}")
    own = f"okstra/{suffix}/{leaf}"
    if branch not in ("", own):
        problems.append(f"branch {branch!r} is not the stage's own branch {own}")
    if bool(branch) != bool(worktree_path):
        problems.append("branch and worktreePath are not both set or both empty")
    elif worktree_path and (
        not worktree_path.startswith("/")
        or posixpath.normpath(worktree_path) != worktree_path
        or any(ch < " " or ch == "\x7f" for ch in worktree_path)
    ):
        problems.append(f"worktreePath {worktree_path!r} is not a plain absolute path")
    return problems


def load_claims(repo: GitRepo, key: TaskKey) -> dict[int, ClaimState]:
    """Every claim of the task by stage number, read by prefix (no full ref walk)."""
    found: dict[int, ClaimState] = {}
    for ref, head in repo.list_refs(claims_prefix(key)).items():
        leaf = ref.rsplit("/", 1)[-1]
        if leaf.startswith("stage-") and is_digits(leaf[6:]):
            found[int(leaf[6:])] = ClaimState(read_claim_at(repo, head, ref), head)
    return found


class StoredReport(Value):
    """A stage report as ``stage done`` stored it with the claim."""

    name: str
    """``report.md`` (Markdown) or ``report.json`` (report data)."""
    text: str
    """The file's content as stored (UTF-8)."""


def report_file_name(path: str) -> str:
    """The name a report given as ``path`` is stored under: report data (``*.json``) as
    ``report.json``, anything else as ``report.md``."""
    return REPORT_DATA_PATH if path.endswith(".json") else REPORT_PATH


def read_report(repo: GitRepo, state: ClaimState) -> StoredReport | None:
    """The stage report stored with the claim, if ``stage done`` was given one."""
    for name in REPORT_FILES:
        raw = repo.read_path(state.head, name)
        if raw is not None:
            return StoredReport(name, raw.decode("utf-8", "replace"))
    return None


def claim_holder(claim: Claim, now: datetime | None) -> Holder:
    """How a stored claim holds its stage at ``now`` (None: when its lease is judged, so a
    read with no lease to judge never loads ``datetime``): ``expired`` once a started claim's
    lease ran out."""
    state = claim.status
    if state == "started" and claim.lease_expired(now):
        state = EXPIRED
    return Holder(state, claim.run_id, claim.who, claim.lease_expires_at)
