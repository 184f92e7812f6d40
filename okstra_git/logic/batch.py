"""Which stages a claim may take (docs/workflow.md, seed 000 §2.3). Pure: no git here.

The **ready set** is every stage that is not done, whose depends-on are all done, and that no
live claim holds. The **batch** is the front of the ready set in stage-number order, taken while
the summed effective steps stay within the run budget — and always at least one stage, so a
stage that alone exceeds the budget still runs (by itself).

A ``started`` claim whose lease has expired still holds its stage unless the caller asked to
take expired claims over: taking a stage from a run that may still be working is never implicit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.errors import BadInput, Refused
from ..core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .stagemap import Stage

RUN_STEP_BUDGET = 8
"""Most summed effective steps one implementation run takes on (seed 000: the run budget)."""

STARTED = "started"
EXPIRED = "expired"
DONE = "done"
RELEASED = "released"


class Holder(Value):
    """What a stage's claim ref says, reduced to what selection needs."""

    state: str
    """``started`` (live), ``expired`` (started, lease past), ``done`` or ``released``."""
    run_id: str
    """The run named in the claim."""
    who: str = ""
    """Who holds it and where, e.g. ``Bob <bob@example.org> on build-7`` (empty: unknown)."""
    lease_expires_at: str | None = None
    """When a started claim's lease runs out; None: it has no lease (held until released)."""

    @property
    def held_by(self) -> str:
        """``run R (WHO, lease …)``: enough to find the holder and judge whether it is alive."""
        lease = f"lease until {self.lease_expires_at}" if self.lease_expires_at else "no lease"
        return f"run {self.run_id} ({self.who + ', ' if self.who else ''}{lease})"


class Selection(Value):
    """The outcome of one selection over a Stage Map and its claims."""

    ready: tuple[int, ...]
    """Ready stages in number order."""
    batch: tuple[int, ...]
    """What a claim takes: a prefix of ``ready`` within the budget, or the one asked for."""
    blocked: dict[int, str]
    """Stages that are not ready, with the reason in words."""
    take_over: tuple[int, ...]
    """Batch members whose expired claim the new claim replaces."""
    steps: int
    """Summed effective steps of the batch."""
    left_out: dict[int, str]
    """Ready stages the batch does not take, with the reason in words (the run budget, or
    ``--stage N`` asking for one stage): the next claim takes them."""


def _steps(stage: Stage) -> int:
    if stage.effective_steps is None:
        raise BadInput(
            f"stage {stage.number} has no whole-number effective steps; fix the Stage Map "
            "(git okstra plan validate)"
        )
    return stage.effective_steps


def _blocked_reason(
    stage: Stage, holders: Mapping[int, Holder], take_over_expired: bool
) -> str | None:
    holder = holders.get(stage.number)
    if holder is not None:
        if holder.state == DONE:
            return f"done ({holder.run_id})"
        if holder.state == STARTED:
            return f"held by {holder.held_by}"
        if holder.state == EXPIRED and not take_over_expired:
            return (
                f"held by {holder.held_by}, whose lease expired; take it over with "
                "--take-over-expired"
            )
    waiting = [d for d in stage.depends_on if holders.get(d, _NONE).state != DONE]
    if waiting:
        return "waiting for stage(s) " + ", ".join(str(d) for d in waiting) + " (not done)"
    return None


_NONE = Holder(state="", run_id="")


def select(
    stages: Sequence[Stage],
    holders: Mapping[int, Holder],
    *,
    stage: int | None = None,
    take_over_expired: bool = False,
    budget: int = RUN_STEP_BUDGET,
) -> Selection:
    """Ready set and batch; ``stage`` asks for exactly that stage (refused unless ready).

    Returns an empty batch when nothing is ready in auto mode; the caller decides what that
    means (``stage ready`` shows it, ``stage claim`` refuses).
    """
    ordered = sorted(stages, key=lambda s: s.number)
    by_number = {s.number: s for s in ordered}
    blocked: dict[int, str] = {}
    ready: list[int] = []
    for item in ordered:
        reason = _blocked_reason(item, holders, take_over_expired)
        if reason is None:
            ready.append(item.number)
        else:
            blocked[item.number] = reason
    left_out: dict[int, str] = {}
    if stage is not None:
        if stage not in by_number:
            known = ", ".join(str(n) for n in by_number) or "none"
            raise BadInput(f"--stage {stage}: the plan has no stage {stage} (stages: {known})")
        if stage in blocked:
            raise Refused(f"stage {stage} is not ready: {blocked[stage]}")
        batch = [stage]
        left_out = {
            n: f"ready; --stage {stage} asks for stage {stage} alone" for n in ready if n != stage
        }
    else:
        batch, total = [], 0
        for at, number in enumerate(ready):
            cost = _steps(by_number[number])
            if batch and total + cost > budget:
                left_out[number] = (
                    f"ready, left for the next run: its {cost} step(s) on top of the batch's "
                    f"{total} would pass the run budget of {budget} steps"
                )
                for later in ready[at + 1 :]:
                    left_out[later] = (
                        f"ready, left for the next run: a batch takes ready stages in number "
                        f"order and stops at the first that does not fit the run budget of "
                        f"{budget} (stage {number})"
                    )
                break
            batch.append(number)
            total += cost
    take_over = tuple(
        n for n in batch if holders.get(n, _NONE).state == EXPIRED and take_over_expired
    )
    return Selection(
        ready=tuple(ready),
        batch=tuple(batch),
        blocked=blocked,
        take_over=take_over,
        steps=sum(_steps(by_number[n]) for n in batch),
        left_out=left_out,
    )
