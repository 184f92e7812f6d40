"""``git okstra work``: the worker loop an agent runs under (docs/agents.md)."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command, lease, number

TYPE_CHECKING = False  # typing is for the type checker: it costs every command ~3 ms
if TYPE_CHECKING:
    from datetime import timedelta

    from ..services.worker import Progress


@command(
    "work",
    "Work a task stage after stage: claim the next batch, run CMD in each stage's worktree, "
    "renew the lease meanwhile, mark the stage done or release it, go on.",
    KEY,
    Arg(
        "--remote",
        "Claim, renew, mark done and release through this shared remote (the team flow).",
        metavar="REMOTE",
        complete="remote",
    ),
    Arg(
        "--lease",
        "The lease of each claim (90s, 30m, 2h, 1d, or none); renewed at a third of it while "
        "CMD runs. Default: okstra.claim.lease.",
        metavar="DURATION",
        convert=lease,
    ),
    Arg(
        "--stage",
        "Work stage N alone: wait until it is ready (its dependencies done, no other run "
        "holding it), claim it, run CMD, mark it done and integrate it, then stop — one loop "
        "per stage, as parallel agents each take one. Default: every stage, batch after batch.",
        metavar="N",
        convert=number,
    ),
    Arg("--once", "Work one batch, then stop (refused when nothing is ready now).", flag=True),
    # Last, so usage reads as the command line does: options, then -- CMD ARGS.
    Arg(
        "cmd",
        "The agent's command and its arguments, after --.",
        metavar="CMD",
        repeat=True,
        after_dashes=True,
    ),
    about="CMD runs once per claimed stage, in the stage's worktree, with OKSTRA_TASK, "
    "OKSTRA_STAGE, OKSTRA_STAGES (the batch), OKSTRA_RUN, OKSTRA_DIRECTIVE (the run directive, "
    "a file), OKSTRA_REPORT (where to write the stage's report), OKSTRA_BASE, OKSTRA_WORKTREE, "
    "OKSTRA_TASK_WORKTREE, OKSTRA_REPOSITORY and OKSTRA_REMOTE set; its output goes to stderr. "
    "When CMD exits 0 with its work committed and the worktree clean, the stage is marked done "
    "with the report CMD wrote (if any) and integrated into the published task branch (a merge "
    "conflict stops the loop, exit 1); otherwise it is released, every commit kept on its "
    "branch, and this loop does not take it again. The loop waits for stages other runs hold "
    "or that wait on others, takes over a claim whose lease ran out, and ends when every stage "
    "is done (exit 0) or only stages it gave back are left (exit 1). Ctrl-C or SIGTERM stops "
    "CMD and releases what the loop holds (exit 130 or 143). Progress: one line per step on "
    "stderr.",
)
def work(
    key: str,
    remote: str | None,
    lease: timedelta | str | None,
    stage: int | None,
    once: bool,
    cmd: list[str],
) -> Output:
    import sys

    from ..services.context import open_context
    from ..services.status import next_for
    from ..services.worker import work as run
    from ..views.stage import race_lost, run_directive
    from ..views.work import progress, worked

    def say(step: Progress) -> None:  # one line a step, beside the command's own output
        sys.stderr.write(progress(step) + "\n")
        sys.stderr.flush()

    ctx = open_context()
    done = run(
        ctx, ctx.key(key), cmd, remote, lease, once,
        say=say, directive=run_directive, output=sys.stderr.fileno(), stage=stage,
        race_lost=race_lost,
    )  # fmt: skip
    return worked(done, next_for(ctx, done.key))
