"""``git okstra integrate KEY [--remote R]``: the task branch as one published, leased ref
(docs/workflow.md).

Each clone used to merge done stages into its own task worktree, and whichever clone synced
first published its task branch: two clones' branches diverged, and a stage based on one of
them lacked what the other merged. Here the task branch moves like a claim:

1. fetch and bring the task's records in step (``sync``'s pull), so the published task branch
   and every done claim are here;
2. bring the task worktree (made if absent) to the published task head: fast-forward when it
   is behind, keep it when it is ahead, merge the published head into it when both moved (so
   nothing of either is lost);
3. merge every done stage the branch lacks, in dependency order, one ``--no-ff`` merge commit
   per stage naming the stage, its run and its claim commit (``git merge`` in the task
   worktree: a conflict stops there, as a person knows it, with the commands to finish or
   abort, and nothing is published);
4. land a task event recording what was integrated at which commit and publish it together
   with the task branch in ONE atomic push, each ref leased on what the fetch saw. A lost race
   (another clone integrated first) puts the event back, resets the worktree to where this
   round started — it only drops the merges this round made — and starts over from a fresh
   fetch: the merges are redone on the winner's head.

Without a remote (a task nobody shares) steps 1 and 4's push are skipped.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..core.errors import BadInput, Conflict, Refused
from ..core.keys import TaskKey
from ..core.shell import command, okstra
from ..core.tracking import tracking_name
from ..core.values import Value
from ..git.process import git
from ..git.reflocks import queue
from ..git.repo import GitRepo, RefMoved, RefUpdate
from ..git.worktrees import dirty_paths, merge_in_progress, worktree_head
from ..logic.nextstep import line, okstra_argv
from ..logic.stagemap import Stage
from ..records.claim import Claim, claim_ref, claims_prefix, load_claims
from ..records.task import TaskState, event_commit, require_task, task_ref
from .branches import shared_ref
from .context import Context
from .identity import ensure_clone_id
from .layout import layout

ATTEMPTS = 12


class Merged(Value):
    """One stage merged into the task branch by this integrate."""

    stage: int
    run_id: str
    done_commit: str
    """The stage's done head (``claim.json`` headCommit)."""
    claim_commit: str
    """The claim ref's commit that recorded it done: what the merge vouches for."""
    merge_commit: str
    """The merge commit integrate made; empty for a merge a person finished (a conflict)."""


class IntegrateResult(Value):
    """What ``integrate`` did: the task branch's head now, and how it got there."""

    key: TaskKey
    task_worktree: str
    task_branch: str
    head: str
    """The task branch head after it (published on ``remote`` when ``published``)."""
    merged: tuple[Merged, ...]
    """The stages merged, in the order they were."""
    brought: str
    """How the worktree came to the published head: ``same``, ``fast-forward``, ``ahead``
    (kept: its commits are published), ``merged`` (both had moved) or ``local`` (no remote)."""
    event: str | None
    """The task event recording it (None: nothing changed)."""
    remote: str | None
    published: bool
    """The task branch and the event landed on ``remote``."""
    attempts: int
    """Rounds: more than one when another clone integrated first."""


class MergeConflict(Refused):
    """A merge of ``integrate`` conflicts; it is left in the task worktree ``path``."""

    def __init__(self, message: str, path: str, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.path = path


class RaceLost(Exception):
    """Another clone published the task branch first; this round was put back."""


def dependency_order(stages: list[Stage]) -> list[Stage]:
    """``stages`` with every stage after those it depends on (ties by number). The map has no
    cycle (check S4); a stage whose dependency is not among ``stages`` is not held back."""
    numbers = {s.number for s in stages}
    left = sorted(stages, key=lambda s: s.number)
    placed: set[int] = set()
    ordered: list[Stage] = []
    while left:
        ready = next(
            (s for s in left if all(d in placed or d not in numbers for d in s.depends_on)),
            left[0],
        )
        left.remove(ready)
        placed.add(ready.number)
        ordered.append(ready)
    return ordered


def integrate(ctx: Context, key: TaskKey, remote: str | None = None) -> IntegrateResult:
    """Bring the task branch to the published head, merge the done stages it lacks, publish.

    ``remote``: the remote the task is shared through (default: the one holding the task, as
    fetched; none: integrate locally). Raises :class:`Refused` with the commands to finish or
    abort when a merge conflicts (nothing published), and Conflict after :data:`ATTEMPTS`
    lost races."""
    from .remoteview import shared_remote

    remote = remote or shared_remote(ctx.repo, key)
    if remote is not None:
        from .sync.transport import check_remote

        check_remote(ctx.repo, remote)
    ensure_clone_id(ctx.repo)
    # One integrate of a task at a time in this clone: they share its task worktree.
    with queue(ctx.repo.common_dir, f"integrate {key}"):
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return _round(ctx, key, remote, attempt)
            except RaceLost:
                time.sleep(0.05 + random.random() * 0.2)  # let the winner's push settle
    raise Conflict(
        f"the task branch of {key} kept moving on {remote} during {ATTEMPTS} tries (other "
        f"clones keep integrating); retry: {okstra('integrate', key, '--remote', remote)}"
    )


def _round(ctx: Context, key: TaskKey, remote: str | None, attempt: int) -> IntegrateResult:
    from . import worktrees as wt
    from .snapshots import load_stage_map

    repo = ctx.repo
    if remote is not None:
        from .sync.engine import pull

        blocked = pull(ctx, remote).blocking((task_ref(key), claims_prefix(key)))
        if blocked:
            raise Refused(
                f"{', '.join(blocked)} could not be brought in step with {remote}, so the task "
                f"branch cannot be integrated safely; see why and settle it: "
                f"{okstra('sync', remote)}",
                hint=okstra("sync", remote),
            )
    state = require_task(repo, key)
    stage_map = load_stage_map(ctx, key)
    lay = layout(ctx, key)
    path = wt.ensure_task_worktree(ctx, lay)
    again = line(
        okstra_argv("integrate", key, *(("--remote", remote) if remote else ())), ctx.clone_dir
    )
    _check_clean(path, again)
    start = worktree_head(path, repo)
    assert start is not None
    shared = shared_ref(key, "task")
    published = repo.read_ref(tracking_name(remote, shared)) if remote is not None else None
    brought = "local"
    if published is not None:
        if start == published:
            brought = "same"
        elif repo.contains(published, start):
            _git(path, again, "merge", "--ff-only", "--quiet", published)
            brought = "fast-forward"
        elif repo.contains(start, published):
            brought = "ahead"
        else:
            message = (
                f"integrate the task branch {remote} published\n\n"
                f"Okstra-Task: {key}\nOkstra-Published: {published}\n"
            )
            _merge(ctx, path, published, message, f"{remote}'s published task branch", again)
            brought = "merged"
    claims = load_claims(repo, key)
    done = {
        n: s
        for n, s in claims.items()
        if s.claim.status == "done" and s.claim.head_commit is not None
    }
    merged: list[Merged] = []
    for stage in dependency_order([s for s in stage_map.stages if s.number in done]):
        c, claim_commit = done[stage.number].claim, done[stage.number].head
        assert c.head_commit is not None
        head = worktree_head(path, repo)
        assert head is not None
        if not repo.has_commit(c.head_commit):
            raise _not_here(key, c, remote)
        if repo.contains(head, c.head_commit):
            continue
        message = (
            f"integrate stage {stage.number} ({c.run_id}): {stage.title}\n\n"
            f"Okstra-Task: {key}\nOkstra-Stage: {stage.number}\nOkstra-Run: {c.run_id}\n"
            f"Okstra-Claim: {claim_commit}\n"
        )
        commit = _merge(ctx, path, c.head_commit, message, f"stage {stage.number}", again)
        merged.append(Merged(stage.number, c.run_id, c.head_commit, claim_commit, commit))
    head = worktree_head(path, repo)
    assert head is not None
    task_path, branch = str(path), lay.task_branch
    recorded = published if remote is not None else _last_recorded(repo, state.head, str(key))
    if head == recorded:
        return IntegrateResult(
            key, task_path, branch, head, (), brought, None, remote, False, attempt
        )
    # Stages a person's finished merge brought (after a conflict), recorded too.
    by_hand = [
        Merged(n, s.claim.run_id, s.claim.head_commit or "", s.head, "")
        for n, s in sorted(done.items())
        if n not in {m.stage for m in merged}
        and repo.contains(head, s.claim.head_commit or "")
        and (recorded is None or not repo.contains(recorded, s.claim.head_commit or ""))
    ]
    merged += by_hand
    event = _event(ctx, key, state, merged, head, branch)
    tref = task_ref(key)
    landed = RefUpdate(tref, event, state.head)
    try:
        repo.update_refs([landed], f"okstra: integrate {key}")
    except RefMoved:
        _reset(path, start, again)
        raise RaceLost() from None
    if remote is None:
        return IntegrateResult(
            key, task_path, branch, head, tuple(merged), brought, event, None, False, attempt
        )
    _publish(ctx, key, remote, landed, shared, head, published, merged, path, start, again)
    return IntegrateResult(
        key, task_path, branch, head, tuple(merged), brought, event, remote, True, attempt
    )


def _publish(
    ctx: Context,
    key: TaskKey,
    remote: str,
    landed: RefUpdate,
    shared: str,
    head: str,
    published: str | None,
    merged: list[Merged],
    path: Any,
    start: str,
    again: str,
) -> None:
    """The task event, the task branch and the claims it integrated that the remote lacks,
    in one atomic push leased on what the fetch saw; put back and :class:`RaceLost` when
    another clone got there first."""
    from .sync.transport import push_leased

    repo = ctx.repo
    updates = [
        RefUpdate(landed.name, landed.new, repo.read_ref(tracking_name(remote, landed.name))),
        RefUpdate(shared, head, published),
    ]
    for m in merged:
        ref = claim_ref(key, m.stage)
        theirs = repo.read_ref(tracking_name(remote, ref))
        if theirs != m.claim_commit and (theirs is None or repo.contains(m.claim_commit, theirs)):
            updates.append(RefUpdate(ref, m.claim_commit, theirs))
    outcome = push_leased(repo, remote, updates)
    if outcome.ok:
        return
    try:
        repo.update_refs(
            [RefUpdate(landed.name, landed.expected, landed.new)],
            f"okstra: undo integrate of {key}, which {remote} did not take",
        )
    except RefMoved as exc:
        raise Refused(
            f"the integrate of {key} was not taken by {remote} and its task event could not be "
            f"put back here ({exc}); run {okstra('sync', remote)}, then {again}",
            hint=okstra("sync", remote),
        ) from exc
    if outcome.lost_race:
        _reset(path, start, again)
        raise RaceLost()
    raise Refused(
        f"git push {remote} refused the task branch of {key} ({outcome.detail}); the merges "
        f"stay in the task worktree {path}, unpublished. Once the remote takes it: {again}",
        hint=again,
    )


def _event(
    ctx: Context, key: TaskKey, state: TaskState, merged: list[Merged], head: str, branch: str
) -> str:
    """The task event recording the integration (message only: the manifest is unchanged)."""
    stages = ", ".join(str(m.stage) for m in merged) or "none (published as it was)"
    lines = "".join(
        f"Okstra-Integrated: stage {m.stage} {m.run_id} done {m.done_commit} claim "
        f"{m.claim_commit}" + (f" merge {m.merge_commit}\n" if m.merge_commit else "\n")
        for m in merged
    )
    message = (
        f"integrate stage(s) {stages} into {branch} at {head[:12]}\n\n"
        f"{TASK_BRANCH_TRAILER}{head}\n{lines}".rstrip("\n")
    )
    return event_commit(ctx.repo, key, state.task, state.head, {}, message)


TASK_BRANCH_TRAILER = "Okstra-Task-Branch: "


def _last_recorded(repo: GitRepo, task_head: str, where: str) -> str | None:
    """The task branch head the task's latest integrate event recorded (None: never)."""
    for commit in reversed(repo.first_parents(task_head, None, where)):
        for text in repo.commit_info(commit).message.splitlines():
            if text.startswith(TASK_BRANCH_TRAILER):
                return text[len(TASK_BRANCH_TRAILER) :].strip()
    return None


def _check_clean(path: Any, again: str) -> None:
    conflicted = merge_in_progress(path)
    if conflicted is not None:
        raise _conflict_refusal(path, conflicted, "a merge left there", again)
    dirty = dirty_paths(path)
    if dirty:
        raise Refused(
            f"the task worktree {path} has uncommitted changes ({', '.join(dirty)}); commit "
            f"or stash them there, then integrate again: {again}",
            hint=again,
        )


def _merge(ctx: Context, path: Any, commit: str, message: str, what: str, again: str) -> str:
    proc = git(path, "merge", "--no-ff", "--no-edit", "--quiet", "-m", message, commit)
    if proc.returncode == 0:
        head = worktree_head(path, ctx.repo)
        assert head is not None
        return head
    conflicted = merge_in_progress(path)
    if conflicted is not None:
        raise _conflict_refusal(path, conflicted, f"merging {what}", again)
    raise BadInput(f"{path}: git merge of {what} failed: {(proc.stderr or proc.stdout).strip()}")


def _conflict_refusal(
    path: Any, conflicted: tuple[str, ...], what: str, again: str
) -> MergeConflict:
    finish = command("git", "-C", str(path), "commit", "--no-edit")
    abort = command("git", "-C", str(path), "merge", "--abort")
    return MergeConflict(
        f"{what} conflicts in the task worktree {path} (conflicted: "
        f"{', '.join(conflicted) or 'none left'}); nothing was published. Resolve the files "
        f"there and `git add` them, then finish with: {finish} && {again}\n"
        f"or give the merge up with: {abort}",
        str(path),
        f"{finish} && {again}",
    )


def _not_here(key: TaskKey, c: Claim, remote: str | None) -> Refused:
    assert c.head_commit is not None
    fix = okstra("sync", remote) if remote else okstra("stage", "list", key)
    where = f"neither here nor on {remote} (fetched just now)" if remote else "not in this clone"
    return Refused(
        f"stage {c.stage} of {key} is done at {c.head_commit[:12]} ({c.run_id}, {c.who}), but "
        f"that commit is {where}: its stage branch was never published. That clone publishes "
        f"it with: {fix}; then integrate again",
        hint=fix,
    )


def _reset(path: Any, start: str, again: str) -> None:
    """Put the task worktree back where this round found it: only this round's own merges
    (clean, made by git, never edited by hand) are dropped; they are redone next round."""
    proc = git(path, "reset", "--hard", "--quiet", start)
    if proc.returncode != 0:
        raise BadInput(
            f"{path}: could not put the task worktree back at {start[:12]} after a lost race "
            f"({proc.stderr.strip()}); check it, then: {again}"
        )


def _git(path: Any, again: str, *args: str) -> None:
    proc = git(path, *args)
    if proc.returncode != 0:
        raise BadInput(f"{path}: git {args[0]} failed ({proc.stderr.strip()}); then: {again}")


def abort_merge(path: str) -> None:
    """Give up a merge :class:`MergeConflict` left (a claim that only wanted to integrate)."""
    git(path, "merge", "--abort")
