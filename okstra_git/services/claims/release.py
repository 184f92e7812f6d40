"""Ending a claim without done: ``stage release``; the stage becomes ready again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from ...core.errors import BadInput, Refused
from ...core.keys import TaskKey
from ...core.machine import hostname
from ...core.shell import okstra as shell_okstra
from ...core.values import Value
from ...git.repo import RefUpdate, cas_retry
from ...records.claim import Claim, claim_commit, claim_holder, claim_ref, load_claims
from ...records.task import now_iso
from ..context import Context
from ..identity import ensure_clone_id
from ..ownership import is_ours
from .common import RUN_TYPE, RunLeftRunning, idle_run, require_claim


class ReleaseResult(Value):
    """A released claim, and what is left of its run."""

    claim: Claim
    """The claim as stored now."""
    run_note: RunLeftRunning | None
    """When the run holds no started stage any more but is still running: the command that
    finishes it (a released run is never finished behind the user's back)."""


def release(
    ctx: Context,
    key: TaskKey,
    stage: int,
    reason: str,
    run: str | None,
    force: bool,
    publish: Callable[[list[RefUpdate]], None] | None = None,
) -> ReleaseResult:
    """End a started claim without done; another run's claim only with ``force``. Audited.
    The stage's worktree and branch stay as they are: the next claim of the stage continues
    there, so no commit and no uncommitted file is lost by a release. ``publish`` (``stage
    release --remote``, see ``remote.release_via_remote``) gets the claim's change once it
    landed here, and pushes it or puts it back and raises."""
    if not reason.strip():
        raise BadInput("--reason must say why the claim is released (it is kept for audit)")
    ref = claim_ref(key, stage)
    who = f"{ctx.repo.identity()} on {hostname()} (clone {ensure_clone_id(ctx.repo)})"
    run = run or _only_run_here(ctx, key)

    def attempt() -> tuple[Claim, RefUpdate]:
        current = require_claim(ctx, key, stage)
        c = current.claim
        if c.status != "started":
            raise Refused(
                f"stage {stage} of {key} is {c.status} ({c.run_id}); only a started claim "
                "can be released"
            )
        if not force and not is_ours(ctx, None, c):
            # Naming its run is no proof of holding it: only the clone that took a claim, or
            # a recorded --force, ends it (docs/workflow.md).
            held = claim_holder(c, datetime.now(UTC)).held_by
            raise Refused(
                f"stage {stage} of {key} is held by {held}: another clone's claim, so this "
                "clone cannot release it (that clone releases it; when its agent is gone, "
                "wait for the lease to run out and take it over, or end it here with --force, "
                "recorded)"
            )
        if not force and run != c.run_id:
            held = claim_holder(c, datetime.now(UTC)).held_by
            yours = shell_okstra(
                "stage", "release", key, "--stage", stage, "--reason", reason, "--run", c.run_id
            )
            raise Refused(
                f"stage {stage} of {key} is held by {held}"
                + (f", not {run}" if run else "")
                + f"; if that run is yours, release it with: {yours}; another run's claim only "
                "with --force (recorded)"
            )
        c.status = "released"
        c.released_at = now_iso()
        c.released_by = who + (" (--force)" if force else "")
        c.release_reason = reason.strip()
        forced = " (forced)" if force else ""
        said = " ".join(c.release_reason.split())  # the subject line: the reason cannot add lines
        subject = f"release stage {stage} of {c.run_id}{forced}: {said}"
        commit = claim_commit(ctx.repo, key, c, current.head, subject)
        update = RefUpdate(ref, commit, current.head)
        ctx.repo.update_refs([update], f"okstra: release stage {stage}")
        return c, update

    stored, update = cas_retry(ctx.repo, attempt, [ref])
    if publish is not None:
        publish([update])
    seq = idle_run(ctx, key, stored)
    if seq is None:
        return ReleaseResult(stored, None)
    finish = shell_okstra("run", "finish", key, "--type", RUN_TYPE, "--seq", seq)
    claims = load_claims(ctx.repo, key)
    some_done = any(
        claims[n].claim.run_id == stored.run_id and claims[n].claim.status == "done"
        for n in stored.batch
        if n in claims
    )
    why = "some-done" if some_done else "none-done"
    return ReleaseResult(stored, RunLeftRunning(stored.run_id, finish, why))


def _only_run_here(ctx: Context, key: TaskKey) -> str | None:
    """The run holding started claims of ``key`` in this clone, when there is exactly one: then
    it is the releaser's own, and ``--run`` need not be typed."""
    runs = {
        s.claim.run_id
        for s in load_claims(ctx.repo, key).values()
        if s.claim.status == "started" and is_ours(ctx, None, s.claim)
    }
    return runs.pop() if len(runs) == 1 else None
