"""Claim leases (docs/agents.md): the default lease of a claim, and renewing this
clone's claims while their work goes on.

A lease is how a claim of an agent that died frees itself: past ``leaseExpiresAt`` another run
may take the stage over (``stage claim --take-over-expired``). A live agent renews it: each
renewal is one more commit on the claim ref, compare-and-swapped against the claim as read, so
a renewal and a take-over never both land; through the shared remote when the claim is shared
there, by one leased push, so no other clone can be taking it over at the same moment either.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from ...core.errors import BadInput, Conflict, Refused
from ...core.keys import TaskKey
from ...core.shell import command, okstra
from ...core.strict import lease as parse_lease
from ...core.values import Value
from ...git.repo import OLD_LOCK_SECONDS, RefMoved, RefUpdate, cas_retry
from ...records.claim import (
    DEFAULT_LEASE,
    LEASE_KEY,
    Claim,
    claim_commit,
    claim_ref,
    load_claims,
)
from ..context import Context
from ..layout import layout
from ..ownership import is_ours
from .common import iso_seconds, require_claim


def default_lease(ctx: Context) -> timedelta | None:
    """``okstra.claim.lease``: the lease of a claim that names none (None: no lease)."""
    text = ctx.repo.config_get(LEASE_KEY)
    if text is None:
        return None
    try:
        return parse_lease(text)
    except ValueError as exc:
        fix = command("git", "config", LEASE_KEY, DEFAULT_LEASE)
        raise BadInput(f"config {LEASE_KEY} = {text!r}: {exc}; set it with: {fix}") from None


def claim_lease(ctx: Context, given: timedelta | str | None) -> timedelta | None:
    """The lease a claim takes: ``given`` (``none``: no lease), else the configured default."""
    if given is None:
        return default_lease(ctx)
    if isinstance(given, str):
        return parse_lease(given)
    return given


class Renewed(Value):
    """One claim whose lease was moved."""

    stage: int
    run_id: str
    lease_expires_at: str
    """The new end of the lease."""
    previous: str | None
    """Where it ended before (None: the claim had no lease)."""
    had_expired: bool
    """The old lease had run out, and nobody had taken the stage over meanwhile."""


class RenewResult(Value):
    """What ``stage renew`` did."""

    key: TaskKey
    renewed: list[Renewed]
    """The claims renewed, in stage order."""
    published: str | None = None
    """The remote the renewal was pushed to (a claim shared there)."""


def renewable(ctx: Context, key: TaskKey, stage: int | None) -> list[Claim]:
    """The started claims of ``key`` this clone holds (``stage`` alone when given); refused,
    saying why, when there is none."""
    lay = layout(ctx, key)
    listing = okstra("stage", "list", key)
    if stage is not None:
        c = require_claim(ctx, key, stage).claim
        if c.status != "started":
            raise Refused(
                f"stage {stage} of {key} is {c.status} ({c.run_id}); only a started claim has a "
                "lease to renew",
                hint=listing,
            )
        if not is_ours(ctx, lay, c):
            raise Refused(
                f"stage {stage} of {key} is held by run {c.run_id} ({c.who}), not by this "
                "clone: only the clone holding a claim renews it",
                hint=listing,
            )
        return [c]
    mine = [
        s.claim
        for _, s in sorted(load_claims(ctx.repo, key).items())
        if s.claim.status == "started" and is_ours(ctx, lay, s.claim)
    ]
    if not mine:
        raise Refused(
            f"this clone holds no started claim of {key}, so there is no lease to renew",
            hint=listing,
        )
    return mine


def renew(
    ctx: Context,
    key: TaskKey,
    stage: int | None = None,
    lease: timedelta | None = None,
    publish: Callable[[list[RefUpdate]], None] | None = None,
    runs: dict[int, str] | None = None,
) -> RenewResult:
    """Move the lease of this clone's started claims of ``key`` (or of ``stage``) to ``lease``
    from now — by default each claim's own lease length — in one ref transaction.

    Each claim ref is compare-and-swapped against the value read, and the claim must still be
    the same run's, started: a take-over, release or done that landed first wins, and the
    renewal is refused naming it. ``runs`` (stage → run id) pins the runs the caller set out to
    renew, read before a fetch could bring another clone's take-over. ``publish`` (``stage
    renew --remote``) gets the ref changes once they landed here, and pushes them or puts them
    back and raises.
    """
    if runs:
        claims = load_claims(ctx.repo, key)
        for number, run in sorted(runs.items()):
            found = claims.get(number)
            if found is None or found.claim.status != "started" or found.claim.run_id != run:
                raise _changed_hands(ctx, key, number, run)
    wanted = {c.stage: c for c in renewable(ctx, key, stage)}
    if runs:
        wanted = {n: c for n, c in wanted.items() if n in runs}
    for c in wanted.values():
        if lease is None and c.lease_seconds is None:
            renew_it = okstra("stage", "renew", key, "--stage", c.stage, "--lease", DEFAULT_LEASE)
            raise Refused(
                f"stage {c.stage} of {key} was claimed without a lease (it holds until done or "
                f"released), so there is nothing to renew; to give it one: {renew_it}",
                hint=renew_it,
            )
    refs = [claim_ref(key, n) for n in sorted(wanted)]

    def attempt() -> tuple[list[RefUpdate], list[Renewed]]:
        now = datetime.now(UTC)
        current = load_claims(ctx.repo, key)
        updates, renewed = [], []
        for number, first in sorted(wanted.items()):
            state = current.get(number)
            c = state.claim if state is not None else None
            if state is None or c is None or c.status != "started" or c.run_id != first.run_id:
                raise _changed_hands(ctx, key, number, first.run_id)
            span = lease if lease is not None else timedelta(seconds=c.lease_seconds or 0)
            previous = c.lease_expires_at
            expired = c.lease_expired(now)
            c.lease_expires_at = iso_seconds(now + span)
            c.lease_seconds = int(span.total_seconds())
            subject = f"renew stage {number} lease to {c.lease_expires_at} ({c.run_id})"
            commit = claim_commit(ctx.repo, key, c, state.head, subject)
            updates.append(RefUpdate(claim_ref(key, number), commit, state.head))
            renewed.append(Renewed(number, c.run_id, c.lease_expires_at, previous, expired))
        ctx.repo.update_refs(updates, f"okstra: renew the lease of {key}")
        return updates, renewed

    updates, renewed = cas_retry(ctx.repo, attempt, refs)
    if publish is not None:
        publish(updates)
    return RenewResult(key, renewed)


def _changed_hands(ctx: Context, key: TaskKey, stage: int, run: str) -> Refused:
    state = load_claims(ctx.repo, key).get(stage)
    c = state.claim if state is not None else None
    now_is = "gone" if c is None else f"{c.status} by run {c.run_id} ({c.who})"
    listing = okstra("stage", "list", key)
    return Refused(
        f"stage {stage} of {key} changed hands before its lease was renewed: the claim of run "
        f"{run} is now {now_is}",
        hint=listing,
    )


def renew_via_remote(
    ctx: Context,
    remote: str | None,
    key: TaskKey,
    stage: int | None = None,
    lease: timedelta | None = None,
) -> RenewResult:
    """``stage renew`` of claims shared through a remote (``--remote R``, or the one remote
    holding the first claim exactly as this clone does, i.e. one taken with ``--remote``).

    Each round fetches, renews here, and pushes the claim refs in one atomic push leased on
    what the remote held at that fetch. When another clone moved one of them meanwhile (a
    take-over of an expired claim, a release with ``--force``), nothing lands there, the local
    renewal is put back, and the round starts over from a fresh fetch, which then shows who
    holds the stage: a renewal never silently overwrites another clone's write, and never
    silently loses to one.
    """
    import random
    import time

    # The sync engine only here: a claim's own start-up (which reads the default lease) never
    # loads it (tests/cli/test_cli.py::test_a_claim_on_this_clone_loads_no_sync_engine).
    from ...core.tracking import tracking_name
    from ..sync.engine import pull
    from ..sync.transport import check_remote, push_leased, remote_locks
    from .remote import CLAIM_ATTEMPTS, RemoteRaceLost, shared_through, turn

    runs = {c.stage: c.run_id for c in renewable(ctx, key, stage)}  # before any fetch
    if remote is None:
        remote = shared_through(ctx.repo, claim_ref(key, min(runs)))
        if remote is None:
            return renew(ctx, key, stage, lease, runs=runs)
    check_remote(ctx.repo, remote)
    refs = [claim_ref(key, n) for n in sorted(runs)]

    seen: dict[str, str | None] = {}
    """The claims as this round's fetch found them on the remote: what the push is leased on,
    so a push that lands means no other clone wrote them since."""

    def publish(updates: list[RefUpdate]) -> None:
        leased = [RefUpdate(u.name, u.new, seen[u.name]) for u in updates]
        outcome = push_leased(ctx.repo, remote, leased)
        if outcome.ok:
            return
        if not outcome.lost_race:
            raise Refused(f"git push {remote} refused the renewal: {outcome.detail}")
        found = remote_locks(ctx.repo, remote, refs, OLD_LOCK_SECONDS)
        if found is not None:
            raise Conflict(found.text, hint=found.command)
        undo = [RefUpdate(u.name, u.expected, u.new) for u in updates]
        # A claim another command of this clone wrote since (a done) is left as it is: the
        # next round's fetch shows what holds.
        with contextlib.suppress(RefMoved):
            ctx.repo.update_refs(undo, f"okstra: undo the renewal {remote} did not take")
        raise RemoteRaceLost(f"the renewal lost the race on {remote}")

    for _ in range(CLAIM_ATTEMPTS):
        try:
            # In turn with this clone's other remote writes of the task (claims/remote.py).
            with turn(ctx, key):
                pulled = pull(ctx, remote)
                blocked = pulled.blocking(refs)
                if blocked:
                    sync = okstra("sync", remote)
                    raise Refused(
                        f"{', '.join(blocked)} could not be brought in step with {remote}, so "
                        f"the renewal cannot be published; see why and settle it: {sync}",
                        hint=sync,
                    )
                seen.update((ref, ctx.repo.read_ref(tracking_name(remote, ref))) for ref in refs)
                result = renew(ctx, key, stage, lease, publish=publish, runs=runs)
        except RemoteRaceLost:
            time.sleep(0.05 + random.random() * 0.2)  # let the other clone's push settle
            continue
        return RenewResult(result.key, result.renewed, published=remote)
    raise Conflict(
        f"the claims of {key} kept moving on {remote} during {CLAIM_ATTEMPTS} tries to renew "
        f"them; see {okstra('stage', 'list', key)}"
    )
