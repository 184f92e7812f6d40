"""How a task's local refs stand against what a fetch brought from each remote
(docs/concurrency-and-sync.md).

The one view every reader shares: task and claim refs are read from the local refs only —
they are what every write compares-and-swaps against, and a remote's copy may have diverged
or failed its checks, which only ``sync`` can settle — and every command that shows them
(``task show``, ``task list``, ``task status``, ``stage list``, ``verify target``) compares
them with the remote-tracking refs and says the same thing when they lag: run ``git okstra
sync R``. Notes are read as the union of both (``notesview``), which is what sync makes of
them. No network: this compares refs a fetch already brought.
"""

from __future__ import annotations

from ..core.keys import TaskKey
from ..core.tracking import LOCAL_REFS, tracking_name, tracking_refs
from ..core.values import Value
from ..git.repo import GitRepo
from ..records.claim import Claim, claims_prefix, read_claim_at
from ..records.task import task_ref

STALE = ("behind", "diverged", "missing-here")
"""States in which the local view is out of date: reading it gives an old answer."""


class Lag(Value):
    """One ref of a task that differs from a remote's copy."""

    remote: str
    """The remote whose fetched copy differs."""
    ref: str
    """The local ref (``refs/okstra/…``)."""
    state: str
    """``behind`` (the remote has more), ``diverged`` (both have more: sync replays or
    stops on a true conflict), ``missing-here`` (only the remote has it), ``ahead`` or
    ``missing-there`` (only this clone has it: not published yet)."""
    local: str | None
    """The local value."""
    there: str | None
    """The remote's value, as last fetched."""

    @property
    def stale(self) -> bool:
        return self.state in STALE


def okstra_remotes(repo: GitRepo) -> list[str]:
    """The configured remotes a fetch has brought okstra refs from."""
    return [r for r in repo.remote_names() if repo.has_refs(tracking_refs(r))]


def task_lag(repo: GitRepo, key: TaskKey) -> list[Lag]:
    """Every ref of the task (its task ref and claim refs) that differs from a remote's."""
    remotes = okstra_remotes(repo)
    if not remotes:  # nothing fetched to differ from: the task's refs need no listing
        return []
    here = {**repo.list_refs(claims_prefix(key))}
    local_task = repo.read_ref(task_ref(key))
    if local_task is not None:
        here[task_ref(key)] = local_task
    found: list[Lag] = []
    for remote in remotes:
        there = _tracked(repo, remote, claims_prefix(key))
        remote_task = repo.read_ref(tracking_name(remote, task_ref(key)))
        if remote_task is not None:
            there[task_ref(key)] = remote_task
        found += _differences(repo, remote, here, there)
    return found


def fetched_claims(repo: GitRepo, key: TaskKey, lags: list[Lag]) -> dict[int, tuple[str, Claim]]:
    """The task's claims a fetch brought that are newer than this clone's — the remote's copy
    descends from the local one (``behind``) or only the remote has one (``missing-here``) —
    by stage, with the remote (the first that has one). Each is checked as ``sync`` checks a
    record it adopts; one that fails is left out (``sync`` names it). A ``diverged`` claim is
    left to ``sync``: neither side is the newer one."""
    from ..records.incoming import tip_problems

    prefix = claims_prefix(key)
    found: dict[int, tuple[str, Claim]] = {}
    for lag in lags:
        newer = lag.state in ("behind", "missing-here")
        if not newer or lag.there is None or not lag.ref.startswith(prefix):
            continue
        if tip_problems(repo, lag.ref, lag.there):  # a name okstra writes, a record it wrote
            continue
        stage = int(lag.ref.rsplit("-", 1)[1])
        if stage not in found:
            found[stage] = (lag.remote, read_claim_at(repo, lag.there, lag.ref))
    return found


def tasks_lag(repo: GitRepo, prefix: str, here: dict[str, str]) -> list[Lag]:
    """Every task ref under ``prefix`` (``refs/okstra/tasks/…/``; ``here``: those refs, as
    listed) that differs from a remote's: what ``task list`` notes. Claims are left to the
    per-task views."""
    found: list[Lag] = []
    for remote in okstra_remotes(repo):
        found += _differences(repo, remote, here, _tracked(repo, remote, prefix))
    return found


def _tracked(repo: GitRepo, remote: str, prefix: str) -> dict[str, str]:
    """The remote's refs under ``prefix``, by their local names."""
    track = tracking_name(remote, LOCAL_REFS)
    return {
        LOCAL_REFS + name[len(track) :]: value
        for name, value in repo.list_refs(tracking_name(remote, prefix)).items()
    }


def _differences(
    repo: GitRepo, remote: str, here: dict[str, str], there: dict[str, str]
) -> list[Lag]:
    return [
        Lag(remote, ref, _state(repo, here.get(ref), there.get(ref)), here.get(ref), there.get(ref))
        for ref in sorted(here.keys() | there.keys())
        if here.get(ref) != there.get(ref)
    ]


def _state(repo: GitRepo, local: str | None, theirs: str | None) -> str:
    if local is None:
        return "missing-here"
    if theirs is None:
        return "missing-there"
    try:
        if repo.contains(theirs, local):
            return "behind"
        if repo.contains(local, theirs):
            return "ahead"
    except (KeyError, ValueError):
        return "diverged"  # an object the fetch did not bring: sync will say what
    return "diverged"


def home_remote(repo: GitRepo) -> str | None:
    """The first remote set up to bring okstra data (``init --remote R``: its fetch refspecs
    are okstra's), whether or not a fetch brought any yet: where this clone's team shares."""
    from ..core.tracking import fetch_refspecs

    for remote in repo.remote_names():
        if fetch_refspecs(remote)[0] in repo.config_get_all(f"remote.{remote}.fetch"):
            return remote
    return None


def shared_remote(repo: GitRepo, key: TaskKey) -> str | None:
    """The remote the task is shared through: the first whose fetched copy holds the task."""
    ref = task_ref(key)
    return next((r for r in repo.remote_names() if repo.read_ref(tracking_name(r, ref))), None)
