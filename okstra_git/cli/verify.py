"""``git okstra verify``: the final-verification gate, and verdicts kept as git notes."""

from __future__ import annotations

from ..logic.verify_rules import VERDICTS
from ..views import Output
from .declare import KEY, Arg, auto_or_number, command, group

group(
    "verify",
    "Final verification: resolve the target, record verdicts, show them.",
    about="Verdicts are JSON lines in the note on the verified commit (and on its tree) in "
    "refs/notes/okstra/verdicts.",
)

STAGE = Arg(
    "--stage",
    "'auto' verifies the whole task; N verifies stage N alone.",
    metavar="auto|N",
    default="auto",
    convert=auto_or_number,
)
WORKTREE = Arg(
    "--worktree",
    "Verify this work tree instead of the resolved one.",
    metavar="PATH",
    complete="dir",
)


@command(
    "verify target",
    "Resolve what a final-verification run verifies; exit 1 if the gate is not met.",
    KEY,
    STAGE,
    WORKTREE,
    about="Whole-task: every stage done, every done commit merged into the task worktree HEAD, "
    "the tree clean outside .okstra/. Single-stage: stage N done and its worktree clean. "
    "Prints the VERIFICATION_TARGET block (or its data with --json).",
)
def target(key: str, stage: int | None, worktree: str | None) -> Output:
    from ..services.context import open_context
    from ..views import verify as views

    return views.target(open_context(plumbed=True), key, stage, worktree)  # git's speed


@command(
    "verify record",
    "Re-check the gate and the report, then add the verdict to the note on HEAD.",
    KEY,
    Arg(
        "--verdict",
        "The run's verdict (default: the report's finalVerdict.verdictToken).",
        metavar="VERDICT",
        choices=VERDICTS,
    ),
    Arg(
        "--report",
        "The run's report data (data.json).",
        metavar="FILE",
        required=True,
        complete="file",
    ),
    STAGE,
    WORKTREE,
    Arg("--expect-head", "Refuse unless the target HEAD is still this commit.", metavar="SHA"),
    Arg("--sign", "Sign the record with git's user.signingKey (ssh).", flag=True),
)
def record(
    key: str,
    verdict: str | None,
    report: str,
    stage: int | None,
    worktree: str | None,
    expect_head: str | None,
    sign: bool,
) -> Output:
    from ..services import verify
    from ..services.context import open_context
    from ..views import verify as views

    ctx = open_context()
    try:
        done = verify.record_verdict(
            ctx, ctx.key(key), verdict, report, stage, worktree, expect_head, sign
        )
    except verify.GateRefused as exc:
        return views.refusal(exc, key, ("verify", "record"))
    from ..services.status import next_for

    return views.recorded(done, next_for(ctx, ctx.key(key)))


@command(
    "verify show",
    "Verdicts on a commit and on commits with the same tree, newest first.",
    Arg("rev", "The commit.", metavar="REV", optional=True, default="HEAD"),
)
def show(rev: str) -> Output:
    from ..services.context import open_context
    from ..views import verify as views

    return views.show(open_context(plumbed=True), rev)  # a read: no pygit2 to load
