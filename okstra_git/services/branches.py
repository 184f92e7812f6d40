"""Code that travels with claims (docs/concurrency-and-sync.md): stage and task branches on a shared
remote.

Locally a task's branches are ``refs/heads/okstra/<group>/<id>/task`` and ``…/stage-<N>``. On
a remote they live beside the task's other records, as ``refs/okstra/branches/<group>/<id>/…``,
so the fetch refspec ``+refs/okstra/*:refs/okstra-remotes/<R>/*`` that ``init --remote`` sets
(and ``sync`` uses) brings them to ``refs/okstra-remotes/<R>/branches/<group>/<id>/…`` — a
tracking namespace a plain ``git fetch`` may overwrite, never a local branch or claim.

What is published: a done stage's branch at its done head commit (never a later commit of the
branch: the claim vouches for that one only), and the task branch where stages are merged
when it is ahead of the remote's. Nothing here ever moves a local branch: merging is the
user's, with a hint that names a ref present on the machine that prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..core.keys import TaskKey
from ..core.shell import command
from ..core.tracking import BRANCHES, tracking_name
from ..core.values import Value
from ..git.repo import GitRepo, RefUpdate
from ..records.claim import CLAIMS_PREFIX, read_claim_at
from .context import Context

LOCAL_BRANCHES = "refs/heads/okstra/"
"""Where this clone keeps them (the worktrees' branches)."""


def shared_ref(key: TaskKey, leaf: str) -> str:
    """The remote's name for the task's branch ``leaf`` (``task`` or ``stage-<N>``)."""
    return f"{BRANCHES}{key.ref_suffix}/{leaf}"


def _local_branch(shared: str) -> str:
    return LOCAL_BRANCHES + shared[len(BRANCHES) :]


class BranchState(Value):
    """One task or stage branch against the remote's copy, and what sync does about it."""

    ref: str
    """The remote's name, ``refs/okstra/branches/<group>/<id>/<leaf>``."""
    local: str | None
    """What this clone would publish: the task branch head, or a done stage's head commit."""
    remote: str | None
    """The remote's value, as last fetched."""
    state: str
    """``same``, ``ahead`` (to push), ``behind`` (the remote's has more), ``diverged`` or
    ``missing-here`` (only the remote has it: :func:`task_branch_against`)."""

    @property
    def push(self) -> RefUpdate | None:
        """The leased update publishing it (``expected``: the remote's value)."""
        return RefUpdate(self.ref, self.local, self.remote) if self.state == "ahead" else None


def _state(repo: GitRepo, ref: str, mine: str, theirs: str | None) -> BranchState:
    if theirs == mine:
        state = "same"
    elif theirs is None or (repo.has_object(theirs) and repo.contains(mine, theirs)):
        state = "ahead"
    elif repo.has_object(theirs) and repo.contains(theirs, mine):
        state = "behind"
    else:
        state = "diverged"
    return BranchState(ref, mine, theirs, state)


def branch_states(
    ctx: Context,
    remote: str,
    claim_refs: Iterable[str] = (),
    read: Callable[[str], str | None] | None = None,
) -> list[BranchState]:
    """Every branch this clone can publish to ``remote``: the task branches it has, and the
    done stages among its stage branches and among ``claim_refs`` (claims being pushed now,
    so a stage done with ``--no-worktree`` publishes its head too). ``read`` gives a claim
    ref's or a tracking ref's value (default: read it now), e.g. from a listing sync made."""
    repo = ctx.repo
    read = read or repo.read_ref
    wanted: dict[str, str] = {}  # task branches: the local head
    stage_claims = set(claim_refs)
    for name, tip in repo.list_refs(LOCAL_BRANCHES).items():
        shared = BRANCHES + name[len(LOCAL_BRANCHES) :]
        if shared.endswith("/task"):
            wanted[shared] = tip
        elif shared.rsplit("/", 1)[-1].startswith("stage-"):
            stage_claims.add(CLAIMS_PREFIX + shared[len(BRANCHES) :])
    states = []
    for ref in sorted(stage_claims):
        head = read(ref)
        shared = BRANCHES + ref[len(CLAIMS_PREFIX) :]
        published = read(tracking_name(remote, shared))
        if head is None or (published and head == read(tracking_name(remote, ref))):
            continue  # the remote has this very claim and its branch: they travelled together
        claim = read_claim_at(repo, head, ref)
        if claim.status == "done" and claim.head_commit and repo.has_object(claim.head_commit):
            states.append(_state(repo, shared, claim.head_commit, published))
    for ref, mine in wanted.items():
        states.append(_state(repo, ref, mine, read(tracking_name(remote, ref))))
    return sorted(states, key=lambda b: b.ref)


def task_branch_against(repo: GitRepo, key: TaskKey, remote: str) -> BranchState | None:
    """The task branch here against the one ``remote`` published, as last fetched (``ahead``
    also when it is not published there, ``missing-here`` when only the remote has one); None
    when neither has one."""
    shared = shared_ref(key, "task")
    mine = repo.read_ref(_local_branch(shared))
    theirs = repo.read_ref(tracking_name(remote, shared))
    if mine is None:
        return None if theirs is None else BranchState(shared, None, theirs, "missing-here")
    return _state(repo, shared, mine, theirs)


class HeldBack(Value):
    """A task or stage branch sync could not publish: here and on ``remote`` both moved."""

    branch: BranchState
    remote: str
    fix: str
    """The command that publishes both (:func:`branch_steps`)."""


def branch_steps(
    repo: GitRepo, remote: str, states: Iterable[BranchState], clone_dir: str
) -> dict[str, str]:
    """The command that brings each branch ``remote`` has more of (``behind``) or that both
    sides moved (``diverged``) in step, by its ref: ``git -C CLONE okstra integrate KEY
    --remote R`` for a task branch whose task names its key — the task worktree comes to the
    published head (fast-forwarded, or merged when both moved) and what it has more is
    published — else, for a diverged one, ``git merge`` of the remote's copy. A branch
    ``behind`` with no task to name has none: the remote's copy is named instead."""
    from ..logic.nextstep import line, okstra_argv

    steps = {}
    for branch in states:
        if branch.state not in ("behind", "diverged"):
            continue
        suffix, leaf = branch.ref[len(BRANCHES) :].rsplit("/", 1)
        key = _task_key_at(repo, suffix) if leaf == "task" else None
        if key is not None:
            steps[branch.ref] = line(okstra_argv("integrate", key, "--remote", remote), clone_dir)
        elif branch.state == "diverged":
            steps[branch.ref] = command("git", "merge", tracking_name(remote, branch.ref))
    return steps


def _task_key_at(repo: GitRepo, suffix: str) -> str | None:
    """The key the task ``refs/okstra/tasks/<suffix>`` here names (None: no such task here, or
    a key no command could take)."""
    from ..records.task import TASKS_PREFIX
    from ..records.taskbranch import record_key

    return record_key(repo, suffix, [f"{TASKS_PREFIX}{suffix}"])


def held_back(remote: str, states: Iterable[BranchState], steps: dict[str, str]) -> list[HeldBack]:
    """What a sync could not publish: each task or stage branch that differs from the one
    ``remote`` holds (both moved), with the command that publishes both (``steps``, from
    :func:`branch_steps`; views/sync.py's ``held_words`` says it)."""
    return [HeldBack(b, remote, steps[b.ref]) for b in states if b.state == "diverged"]


# -- merge hints --------------------------------------------------------------------------


def merge_ref(repo: GitRepo, key: TaskKey, stage: int, done_head: str) -> str | None:
    """A ref on this machine that holds stage ``stage``'s done head, to name in a merge hint:
    the local stage branch, else a remote's stage branch as fetched here, else the commit
    itself. None when this clone does not have the commit at all (it needs a sync)."""
    shared = stage_shared_ref(key, stage)
    local = _local_branch(shared)
    head = repo.read_ref(local)
    if head is not None and repo.contains(head, done_head):
        return local[len("refs/heads/") :]
    for remote in repo.remote_names():
        track = tracking_name(remote, shared)
        head = repo.read_ref(track)
        if head is not None and repo.contains(head, done_head):
            return track
    return done_head if repo.has_object(done_head) else None


def merge_command(task_worktree: Path | str, refs: Iterable[str]) -> str:
    """``git -C <task worktree> merge <refs…>``, quoted, one line."""
    return command("git", "-C", str(task_worktree), "merge", *refs)


def stage_shared_ref(key: TaskKey, stage: int) -> str:
    return shared_ref(key, f"stage-{stage}")
