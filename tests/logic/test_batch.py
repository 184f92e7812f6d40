"""Ready set and batch selection (docs/workflow.md): pure, no git."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from plans import DIAMOND_PLAN

from okstra_git.core.errors import BadInput, Refused
from okstra_git.logic.batch import DONE, EXPIRED, RELEASED, RUN_STEP_BUDGET, STARTED, Holder, select
from okstra_git.logic.stagemap import Stage, parse_plan


def stage(number: int, steps: int, depends: tuple[int, ...] = ()) -> Stage:
    return Stage(number, f"s{number}", steps, depends, (), (), None)


def held(state: str, run: str = "implementation-001") -> Holder:
    return Holder(state, run)


DIAMOND = parse_plan(DIAMOND_PLAN, "plan.md").stages  # 1 → {2, 3} → 4; steps 2, 3, 3, 2


def test_diamond_moves_forward_as_dependencies_finish() -> None:
    first = select(DIAMOND, {})
    assert first.ready == (1,) and first.batch == (1,) and first.steps == 2
    assert first.blocked == {
        2: "waiting for stage(s) 1 (not done)",
        3: "waiting for stage(s) 1 (not done)",
        4: "waiting for stage(s) 2, 3 (not done)",
    }
    claimed = select(DIAMOND, {1: held(STARTED)})
    assert claimed.ready == () and claimed.batch == ()
    assert claimed.blocked[1] == "held by run implementation-001 (no lease)"
    second = select(DIAMOND, {1: held(DONE)})
    assert second.ready == (2, 3) and second.batch == (2, 3) and second.steps == 6
    assert second.blocked[1] == "done (implementation-001)"
    half = select(DIAMOND, {1: held(DONE), 2: held(DONE), 3: held(STARTED, "implementation-002")})
    assert half.batch == () and half.blocked[4] == "waiting for stage(s) 3 (not done)"
    last = select(DIAMOND, {1: held(DONE), 2: held(DONE), 3: held(DONE)})
    assert last.batch == (4,)


def test_a_held_stage_names_run_holder_and_lease() -> None:
    bob = Holder(STARTED, "implementation-003", "Bob <b@x> on build-7", "2026-06-06T12:00:00+00:00")
    blocked = select(DIAMOND, {1: bob}).blocked[1]
    assert blocked == (
        "held by run implementation-003 (Bob <b@x> on build-7, lease until "
        "2026-06-06T12:00:00+00:00)"
    )
    with pytest.raises(Refused, match=r"not ready: held by run implementation-003 \(Bob"):
        select(DIAMOND, {1: bob}, stage=1)


def test_batch_is_a_prefix_within_the_run_budget() -> None:
    stages = [stage(1, 3), stage(2, 3), stage(3, 3), stage(4, 1), stage(5, 1)]
    # 3 + 3 = 6; stage 3 would make 9 > 8: the batch stops there (a prefix, never skipping
    # ahead to the smaller stages 4 and 5).
    assert select(stages, {}).batch == (1, 2)
    assert select(stages, {1: held(STARTED), 2: held(STARTED)}).batch == (3, 4, 5)
    exact = [stage(1, 6), stage(2, 2), stage(3, 1)]
    assert select(exact, {}).batch == (1, 2) and select(exact, {}).steps == RUN_STEP_BUDGET


def test_a_stage_over_the_budget_still_runs_alone() -> None:
    stages = [stage(2, 9), stage(1, 1)]
    assert select(stages, {}).batch == (1,)
    assert select(stages, {1: held(DONE)}).batch == (2,)


def test_released_is_ready_again_and_expired_needs_take_over() -> None:
    stages = [stage(1, 2), stage(2, 2)]
    assert select(stages, {1: held(RELEASED)}).batch == (1, 2)
    expired = {1: held(EXPIRED, "implementation-007")}
    plain = select(stages, expired)
    assert plain.batch == (2,) and "--take-over-expired" in plain.blocked[1]
    taking = select(stages, expired, take_over_expired=True)
    assert taking.batch == (1, 2) and taking.take_over == (1,)


def test_explicit_stage_only_when_ready() -> None:
    assert select(DIAMOND, {1: held(DONE)}, stage=3).batch == (3,)
    with pytest.raises(Refused, match=r"stage 4 is not ready: waiting for stage\(s\) 2, 3"):
        select(DIAMOND, {1: held(DONE)}, stage=4)
    with pytest.raises(Refused, match="stage 1 is not ready: done"):
        select(DIAMOND, {1: held(DONE)}, stage=1)
    with pytest.raises(BadInput, match="the plan has no stage 9"):
        select(DIAMOND, {}, stage=9)


def test_missing_step_count_is_named() -> None:
    with pytest.raises(BadInput, match="stage 1 has no whole-number effective steps"):
        select([Stage(1, "x", None, (), (), (), None)], {})


@given(
    st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=12),
    st.lists(st.sampled_from(["", STARTED, EXPIRED, DONE, RELEASED]), max_size=12),
    st.booleans(),
)
def test_batch_properties(steps: list[int], states: list[str], take_over: bool) -> None:
    stages = [stage(i + 1, s) for i, s in enumerate(steps)]
    holders = {i + 1: held(s) for i, s in enumerate(states) if s}
    sel = select(stages, holders, take_over_expired=take_over)
    assert list(sel.ready) == sorted(sel.ready)
    assert set(sel.ready).isdisjoint(sel.blocked) and len(sel.ready) + len(sel.blocked) == len(
        stages
    )
    for n in sel.ready:
        assert holders.get(n, held("")).state in ("", RELEASED) or (
            take_over and holders[n].state == EXPIRED
        )
    if sel.ready:
        assert sel.batch and sel.batch == sel.ready[: len(sel.batch)]
        assert sel.steps <= RUN_STEP_BUDGET or len(sel.batch) == 1
        rest = sel.ready[len(sel.batch) :]
        assert not rest or sel.steps + steps[rest[0] - 1] > RUN_STEP_BUDGET
    else:
        assert sel.batch == ()


def test_a_ready_stage_left_out_of_the_batch_says_why() -> None:
    """The budget of 8: stage 2 does not fit on top of stage 1; stage 3 would, but a batch is
    the front of the ready set, so it waits too — and each says so."""
    found = select([stage(1, 5), stage(2, 4), stage(3, 2)], {})
    assert found.batch == (1,) and found.ready == (1, 2, 3)
    assert found.left_out == {
        2: "ready, left for the next run: its 4 step(s) on top of the batch's 5 would pass the "
        f"run budget of {RUN_STEP_BUDGET} steps",
        3: "ready, left for the next run: a batch takes ready stages in number order and stops "
        f"at the first that does not fit the run budget of {RUN_STEP_BUDGET} (stage 2)",
    }
    whole = select([stage(1, 4), stage(2, 4)], {})
    assert whole.batch == (1, 2) and whole.left_out == {}
    asked = select([stage(1, 1), stage(2, 1)], {}, stage=2)
    assert asked.left_out == {1: "ready; --stage 2 asks for stage 2 alone"}
