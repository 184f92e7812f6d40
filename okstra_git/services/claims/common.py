"""What the claim commands share: whose a claim is, the implementation run it belongs to."""

from __future__ import annotations

from datetime import datetime

from ...core.errors import BadInput, Refused
from ...core.keys import TaskKey
from ...core.shell import okstra as shell_okstra
from ...core.values import Value
from ...records.claim import Claim, ClaimState, claim_ref, load_claim, load_claims
from ...records.run import load_run
from ...records.task import require_task
from ..context import Context
from ..runs import finish_run
from ..snapshots import load_stage_map

RUN_TYPE = "implementation"


class RunLeftRunning(Value):
    """A done or a release left its run running: what finishes it (views/stage.py's
    ``run_note`` says it)."""

    run_id: str
    finish: str
    """``git okstra run finish KEY --type implementation --seq N``, without its ``--status``."""
    why: str
    """``no-report``: every stage is done, but this ``stage done`` had no ``--report``;
    ``some-done`` or ``none-done``: a release left no started stage, some or none of the
    batch done."""


class Unpublished(Value):
    """What a done recorded here but could not publish to ``remote`` yet, and the command that
    does (views/stage.py's ``publish_note`` says it)."""

    remote: str
    sync: str
    """``git okstra sync REMOTE``."""
    error: str | None = None
    """Why the remote could not be reached; None: the task ref moved there (sync merges it)."""


def iso_seconds(moment: datetime) -> str:
    return moment.replace(microsecond=0).isoformat()


def release_command(key: TaskKey, stage: int, run: str) -> str:
    return shell_okstra(
        "stage", "release", key, "--stage", stage, "--run", run, "--reason", "interrupted"
    )


def not_started(key: TaskKey, c: Claim) -> Refused:
    if c.status == "released":
        claim_again = shell_okstra("stage", "claim", key, "--stage", c.stage)
        return Refused(
            f"stage {c.stage} of {key} was released ({c.run_id}, by {c.released_by}: "
            f"{c.release_reason}), so it cannot be marked done; claim it again to continue its "
            "work",
            hint=claim_again,
        )
    listing = shell_okstra("stage", "list", key)
    return Refused(
        f"stage {c.stage} of {key} was marked done meanwhile ({c.run_id})",
        hint=listing,
    )


def finish_run_if_done(
    ctx: Context, key: TaskKey, c: Claim, report: str | None
) -> tuple[bool, RunLeftRunning | None]:
    """Finish the run ``completed`` once none of its batch is still started under it.

    The run's report is the one given with the batch's last ``stage done``: finishing a run
    ``completed`` needs one, and only this call has a path that is sure to exist now.
    """
    seq = idle_run(ctx, key, c)
    if seq is None:
        return False, None
    if report is None:
        finish = shell_okstra("run", "finish", key, "--type", RUN_TYPE, "--seq", seq)
        return False, RunLeftRunning(c.run_id, finish, "no-report")
    finish_run(ctx, key, RUN_TYPE, seq, "completed", report)
    return True, None


def idle_run(ctx: Context, key: TaskKey, c: Claim) -> str | None:
    """The seq of ``c``'s run when it is still running but holds none of its batch started."""
    claims = load_claims(ctx.repo, key)
    held = [claims[n].claim for n in c.batch if n in claims]
    if any(h.run_id == c.run_id and h.status == "started" for h in held):
        return None
    seq = c.run_id.removeprefix(f"{RUN_TYPE}-")
    record = load_run(ctx.repo, require_task(ctx.repo, key), RUN_TYPE, seq)
    return seq if record is not None and record.status == "running" else None


def require_claim(ctx: Context, key: TaskKey, stage: int) -> ClaimState:
    state = load_claim(ctx.repo, key, stage)
    if state is None:
        numbers = load_stage_map(ctx, key).numbers
        if stage not in numbers:
            raise BadInput(
                f"--stage {stage}: the plan of {key} has no stage {stage} (stages: "
                f"{', '.join(map(str, numbers)) or 'none'})"
            )
        claim_it = shell_okstra("stage", "claim", key, "--stage", stage)
        raise Refused(
            f"stage {stage} of {key} has no claim ({claim_ref(key, stage)}): nobody has claimed it "
            "yet",
            hint=claim_it,
        )
    return state
