"""``git okstra stage``: ready set, claims, done, release and the consumers view
(docs/workflow.md)."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, auto_or_number, command, duration, group, lease, number

TYPE_CHECKING = False  # typing is for the type checker: it costs every command ~3 ms
if TYPE_CHECKING:
    from datetime import timedelta
    from typing import Any

group(
    "stage",
    "Stage claims: refs/okstra/claims/<group>/<id>/stage-<N>.",
    about="A claim holds one or more ready stages for one run; the batch is claimed "
    "atomically (all stages or none), on one machine or through a shared remote.",
)


@command(
    "stage ready",
    "Show the ready set and the batch a claim would take, without claiming.",
    KEY,
    Arg("--take-over-expired", "Count stages whose claim lease expired as ready.", flag=True),
    about="A batch takes ready stages in number order while their effective steps add up to at "
    "most 8 (the run budget; always at least one stage). Each ready stage left out says why, "
    "and so does each stage that is not ready.",
)
def ready(key: str, take_over_expired: bool) -> Output:
    from ..services import claimview
    from ..services.context import open_context
    from ..views.stage import ready as ready_view

    ctx = open_context(plumbed=True)  # a read: no pygit2 to load (issue 25)
    return ready_view(claimview.readiness(ctx, ctx.key(key), take_over_expired))


@command(
    "stage claim",
    "Claim the ready batch (all stages or none) and print the run directive.",
    KEY,
    Arg(
        "--stage",
        "'auto' claims the batch; N claims stage N alone, if it is ready.",
        metavar="auto|N",
        default="auto",
        convert=auto_or_number,
    ),
    Arg(
        "--lease",
        "How long the claim holds unless renewed (90s, 30m, 2h, 1d; at most 366d); past it "
        "another run may take the stage over. 'none': held until done or released. Default: "
        "okstra.claim.lease (init sets 2h), else none.",
        metavar="DURATION",
        convert=lease,
    ),
    Arg("--take-over-expired", "Take stages whose claim lease expired (recorded).", flag=True),
    Arg("--no-worktree", "Claim only; make no task or stage worktree.", flag=True),
    Arg(
        "--resume",
        "Make the missing worktrees of RUN's claims (after an interrupted claim).",
        metavar="RUN",
    ),
    Arg(
        "--remote",
        "Claim through this shared remote: fetch, claim, push atomically with leases; if "
        "another clone won, undo, re-fetch and choose again.",
        metavar="REMOTE",
        complete="remote",
    ),
    about="Each claimed stage gets its own worktree and branch okstra/<group>/<id>/stage-<N>, "
    "based on the task worktree HEAD. Renew the lease while the work goes on (stage renew); a "
    "claim whose lease ran out is shown as expired, and another run may take it over.",
)
def claim(
    key: str,
    stage: int | None,
    lease: timedelta | str | None,
    take_over_expired: bool,
    no_worktree: bool,
    resume: str | None,
    remote: str | None,
) -> Output:
    from ..services import claims
    from ..services.claims.leases import claim_lease
    from ..services.context import open_context

    # Without worktrees a claim is refs and objects: git's plumbing serves it (no pygit2).
    ctx = open_context(plumbed=no_worktree and resume is None)
    task_key = ctx.key(key)
    if resume is not None:
        result = claims.resume(ctx, task_key, resume)
    elif remote is not None:
        from ..services.claims.claim import NothingReady, ready_here
        from ..services.claims.remote import claim_via_remote
        from ..views.stage import race_lost

        span = claim_lease(ctx, lease)
        offered = ready_here(ctx, task_key) if stage is None else []
        try:
            result = claim_via_remote(
                ctx, remote, task_key, stage, span, take_over_expired, worktrees=not no_worktree,
                race_lost=race_lost,
            )  # fmt: skip
        except NothingReady as exc:
            if not offered:
                raise
            # What this clone's records offered was claimed by other clones since it last
            # fetched: a race lost as expected, not a failure. Say what to do instead.
            return _taken_meanwhile(ctx, task_key, offered, str(exc))
    else:
        result = claims.claim(
            ctx,
            task_key,
            stage,
            claim_lease(ctx, lease),
            take_over_expired,
            worktrees=not no_worktree,
        )
    from ..views.stage import claimed

    return claimed(result)


def _taken_meanwhile(ctx: Any, key: Any, offered: list[int], why: str) -> Output:
    from ..services.status import next_for
    from ..views.stage import taken_meanwhile

    return taken_meanwhile(key, offered, why, next_for(ctx, key))


STAGE_NUMBER = Arg("--stage", "The stage.", metavar="N", required=True, convert=number)


@command(
    "stage renew",
    "Extend the lease of this clone's started claims of the task, so no one takes them over.",
    KEY,
    Arg("--stage", "Renew stage N's claim alone.", metavar="N", convert=number),
    Arg(
        "--lease",
        "The new lease, from now (90s, 30m, 2h, 1d). Default: each claim's own lease length.",
        metavar="DURATION",
        convert=duration,
    ),
    Arg(
        "--remote",
        "Renew through this shared remote, in one leased push (default: the remote holding "
        "the claim, for a claim taken with --remote).",
        metavar="REMOTE",
        complete="remote",
    ),
    about="Each renewal is compare-and-swapped against the claim as read (through the remote "
    "for a shared claim): when another run took the stage over, or it was released or done, "
    "the renewal is refused naming who holds it now. An agent renews well before the lease "
    "ends — `git okstra work` renews at a third of it.",
)
def renew(key: str, stage: int | None, lease: timedelta | None, remote: str | None) -> Output:
    from ..services.claims.leases import renew_via_remote
    from ..services.context import open_context
    from ..views.stage import renewed

    ctx = open_context()
    return renewed(renew_via_remote(ctx, remote, ctx.key(key), stage, lease))


@command(
    "stage done",
    "Record a stage done with its worktree HEAD, report and carry sidecar.",
    KEY,
    STAGE_NUMBER,
    Arg(
        "--report",
        "The stage's report: Markdown (stored as report.md) or report data of an "
        "implementation run (*.json, stored as report.json; start it with report init KEY "
        "--type implementation --stage N). Checked before anything is stored; format: "
        "`git okstra docs report-format`.",
        metavar="FILE",
        complete="file",
    ),
    Arg(
        "--carry",
        "The stage carry sidecar (a JSON object, e.g. carry/stage-N.json).",
        metavar="FILE",
        complete="file",
    ),
    Arg(
        "--head",
        "The head commit you expect; it must match the stage worktree's HEAD.",
        metavar="SHA",
    ),
    Arg(
        "--remote",
        "Publish the done claim and the stage's branch to this shared remote in one atomic, "
        "leased push (default: the remote holding the claim, for a claim taken with --remote).",
        metavar="REMOTE",
        complete="remote",
    ),
    about="The report's content is stored with the done claim, so every clone reads it: "
    "verify target and the directive of a stage that depends on this one show it readable "
    "(report data rendered to its Markdown). Report data must pass report validate (no "
    "'Replace:' prompt left, generatedAt not in the future, the approved plan's open §5 rows "
    "carried into its follow-ups, no final-verification next step while other stages are "
    "open); a Markdown report's §5, if it has one, must be readable. Report fields and rules: "
    "`git okstra docs report-format`.",
)
def done(
    key: str,
    stage: int,
    report: str | None,
    carry: str | None,
    head: str | None,
    remote: str | None,
) -> Output:
    from ..services.claims.remote import done_via_remote
    from ..services.context import open_context
    from ..views.stage import marked_done

    ctx = open_context(plumbed=True)  # a done is refs and objects (its worktree read as git does)
    result = done_via_remote(ctx, remote, ctx.key(key), stage, report, carry, head)
    return marked_done(result, report)


@command(
    "stage release",
    "End a started claim without done; the stage becomes ready again.",
    KEY,
    STAGE_NUMBER,
    Arg("--reason", "Why (kept in the claim for audit).", metavar="TEXT", required=True),
    Arg(
        "--run",
        "The run releasing its own claim, e.g. implementation-002.",
        metavar="RUN",
    ),
    Arg("--force", "Release another run's claim (recorded).", flag=True),
    Arg(
        "--remote",
        "Publish the release to this shared remote in one leased push (default: the remote "
        "holding the claim, for a claim taken with --remote).",
        metavar="REMOTE",
        complete="remote",
    ),
)
def release(
    key: str, stage: int, reason: str, run: str | None, force: bool, remote: str | None
) -> Output:
    from ..services.claims.remote import release_via_remote
    from ..services.context import open_context
    from ..views.stage import released

    ctx = open_context()
    return released(release_via_remote(ctx, remote, ctx.key(key), stage, reason, run, force))


@command("stage list", "The consumers view: stage, status, run, head, lease, report.", KEY)
def list_(key: str) -> Output:
    from ..services import claimview
    from ..services.context import open_context
    from ..views.stage import claim_list
    from ..views.task import lag_notice

    ctx = open_context(plumbed=True)  # a read: no pygit2 to load (issue 25)
    task_key = ctx.key(key)
    rows = claimview.list_claims(ctx, task_key)
    lags, err = lag_notice(ctx, task_key, f"the claims of {task_key}")
    return claim_list(rows, lags, err)
