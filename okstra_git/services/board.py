"""``git okstra board``: what the team's records say, every task at once (docs/security.md).

Gathered from this clone without network, through the readers every command uses: the task
list (``tasks``), each task's ``task status`` (``status``, which alone works out ``next``),
read with the claims a fetch brought newer than the local ones (``remoteview.fetched_claims``),
the newest events of its timeline, its task branch against the one each remote published
(``branches``), and whether a protected branch (``okstra.protect``, the gate's own config)
carries its latest verdict. Tasks a fetch brought that this clone has no ref of yet are
listed apart. The result is a :class:`Board` that ``views.board`` shapes as data and lays out.
"""

from __future__ import annotations

from ..core.errors import BadInput, OkstraError
from ..core.keys import TaskKey
from ..core.values import Value, init
from ..git.repo import GitRepo
from .context import Context
from .status import TaskStatus, task_status
from .tasks import Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .branches import BranchState

EVENTS = 5
"""How many of a task's newest events the board shows."""


class BoardTask(Value):
    """One task on the board: its status, or why it could not be read."""

    key: str
    status: TaskStatus | None
    """None when reading the task failed (``error`` says why)."""
    error: str | None
    events: list[Event]
    """Its newest events, newest first."""
    branches: list[tuple[str, BranchState]]
    """Its task branch against each remote's published one: (remote, how they stand)."""
    carriers: list[str] | None
    """The protected branches whose tip contains the commit its latest verdict was recorded
    on; None when there is no verdict to carry."""
    reports: dict[int, tuple[str, str]]
    """Each done stage's report as stored with its claim: stage → (file name, content)."""

    def __init__(
        self,
        key: str,
        status: TaskStatus | None,
        error: str | None = None,
        events: list[Event] | None = None,
        branches: list[tuple[str, BranchState]] | None = None,
        carriers: list[str] | None = None,
        reports: dict[int, tuple[str, str]] | None = None,
    ) -> None:
        init(
            self,
            key=key,
            status=status,
            error=error,
            events=[] if events is None else events,
            branches=[] if branches is None else branches,
            carriers=carriers,
            reports={} if reports is None else reports,
        )


class FetchedTask(Value):
    """A task ref only a remote has (as fetched)."""

    remote: str
    ref: str
    task_key: str | None
    """None when its record fails the checks ``sync`` makes."""


class Board(Value):
    """Everything the board shows."""

    repository: str
    """The repository's folder."""
    generated_at: str
    """ISO 8601, UTC."""
    tasks: list[BoardTask]
    """Sorted by key."""
    fetched_only: list[FetchedTask]
    """Task refs only a remote has (as fetched)."""
    remotes: list[str]
    """The remotes a fetch brought okstra refs from."""
    protected: list[str]
    """The protected branches here (local and remote-tracking) verdicts are looked for on."""
    protect_unknown: str | None = None
    """Why the protected branches are not known: the gate's config could not be read (its
    error's message); views/board.py says it among the board's problems."""


def build_board(ctx: Context, keys: list[TaskKey] | None = None) -> Board:
    """The board of every task here (or of ``keys``, each of which must exist)."""
    repo = ctx.repo
    with repo.reading_once():  # every task's readers ask for the same refs again
        return _board(ctx, keys)


def _board(ctx: Context, keys: list[TaskKey] | None) -> Board:
    from ..records.task import now_iso, require_task
    from . import remoteview
    from .tasks import task_list

    repo = ctx.repo
    protected, protect_unknown = _protected(ctx)
    if keys is None:
        listing = task_list(ctx, None)
        wanted = [ctx.key(listed.task_key) for listed in listing.tasks]
        lags = [lag for lag in listing.lags if lag.state == "missing-here"]
        fetched_only = [_fetched_task(repo, lag.remote, lag.ref, lag.there) for lag in lags]
    else:
        for key in keys:
            require_task(repo, key)  # a key typed that names no task: refused, with the fix
        wanted, fetched_only = list(dict.fromkeys(keys)), []
    tasks = [_task(ctx, key, protected) for key in wanted]
    folder = repo.workdir or repo.common_dir
    return Board(
        repository=str(folder),
        generated_at=now_iso(),
        tasks=sorted(tasks, key=lambda task: task.key),
        fetched_only=fetched_only,
        remotes=remoteview.okstra_remotes(repo),
        protected=list(protected),
        protect_unknown=protect_unknown,
    )


def _task(ctx: Context, key: TaskKey, protected: dict[str, str]) -> BoardTask:
    from .tasks import task_log

    try:
        status = task_status(ctx, key, fetched=True)
        events = task_log(ctx, key, EVENTS)
    except OkstraError as exc:  # one unreadable task must not hide the others
        return BoardTask(str(key), None, error=str(exc))
    verdict = status.verdict
    carriers = None
    if verdict is not None and verdict.recorded_on:
        carriers = _carriers(ctx.repo, protected, verdict.recorded_on)
    reports = _stage_reports(ctx.repo, key, status)
    branch = _task_branch(ctx.repo, key)
    return BoardTask(str(key), status, None, events, branch, carriers, reports)


def _stage_reports(repo: GitRepo, key: TaskKey, status: TaskStatus) -> dict[int, tuple[str, str]]:
    """The report each done stage stored with its claim — from the claim record the status
    shows: this clone's, or the one a fetch brought (its remote-tracking ref)."""
    from ..records.claim import ClaimState, claim_ref, load_claims, read_report

    local = load_claims(repo, key)
    fetched = {(lag.remote, lag.ref): lag.there for lag in status.lag}
    found: dict[int, tuple[str, str]] = {}
    for stage in status.stages:
        claim = stage.claim
        if claim is None or claim.status != "done":
            continue
        if stage.fetched_from is not None:
            head = fetched.get((stage.fetched_from, claim_ref(key, stage.number)))
        else:
            head = local[stage.number].head if stage.number in local else None
        stored = read_report(repo, ClaimState(claim, head)) if head else None
        if stored is not None:
            found[stage.number] = (stored.name, stored.text)
    return found


def _task_branch(repo: GitRepo, key: TaskKey) -> list[tuple[str, BranchState]]:
    from .branches import task_branch_against
    from .remoteview import okstra_remotes

    found = []
    for remote in okstra_remotes(repo):
        state = task_branch_against(repo, key, remote)
        if state is not None:
            found.append((remote, state))
    return found


def _protected(ctx: Context) -> tuple[dict[str, str], str | None]:
    """The protected branches here, by name, and their tips: the local branches a glob of
    ``okstra.protect`` matches, and each remote's copy of them as last fetched; with why none
    are known when the gate's config cannot be read."""
    repo = ctx.repo
    try:
        config = ctx.gate_config()
    except BadInput as exc:
        return {}, str(exc)
    # The gate's own matching rule (ignoring case), so the board never disagrees with a push.
    found: dict[str, str] = {}
    remotes = repo.remote_names()
    for ref, tip in sorted(repo.list_refs("refs/remotes/").items()):
        remote, _, branch = ref[len("refs/remotes/") :].partition("/")
        if remote in remotes and config.protecting_glob(f"refs/heads/{branch}") is not None:
            found[ref] = tip
    local = {
        ref: tip
        for ref, tip in sorted(repo.list_refs("refs/heads/").items())
        if config.protecting_glob(ref) is not None
    }
    return {**local, **found}, None


def _carriers(repo: GitRepo, protected: dict[str, str], commit: str) -> list[str]:
    if not repo.has_commit(commit):
        return []
    return [ref for ref, tip in protected.items() if repo.contains(tip, commit)]


def _fetched_task(repo: GitRepo, remote: str, ref: str, commit: str | None) -> FetchedTask:
    """A task ref only ``remote`` has: its key when its record passes ``sync``'s checks."""
    from ..records.incoming import tip_problems
    from ..records.task import read_manifests

    key = None
    if commit is not None and not tip_problems(repo, ref, commit):
        key = read_manifests(repo, {ref: commit})[ref].task_key
    return FetchedTask(remote, ref, key)
