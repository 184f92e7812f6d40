"""The board's Stage Map graph and stage colours (``views.board``): pure, on plain data."""

from __future__ import annotations

import pytest

from okstra_git.views.board import STATES, graph, stage_state


def _stages(deps: dict[int, list[int]]) -> list[dict]:
    return [{"stage": n, "dependsOn": d} for n, d in deps.items()]


@pytest.mark.parametrize(
    "deps",
    [
        {1: [], 2: [1], 3: [1], 4: [2, 3]},
        {1: [], 2: [], 3: [1], 4: [2, 3]},
        {1: [], 2: [1], 3: [2], 4: [3], 5: [1], 6: [5, 4]},
        {5: [], 3: [5], 9: [5, 3]},
        {1: []},
    ],
)
def test_the_graph_has_one_rightward_edge_per_depends_on_and_no_stage_on_another(deps):
    drawn = graph(_stages(deps))
    assert sorted((e["from"], e["to"]) for e in drawn["edges"]) == sorted(
        (d, n) for n, ds in deps.items() for d in ds
    )
    at = drawn["at"]
    assert len(set(at.values())) == len(deps)
    for n, ds in deps.items():
        assert all(at[d][0] < at[n][0] for d in ds)
        assert 0 <= at[n][0] < drawn["width"] and 0 <= at[n][1] < drawn["height"]


def test_a_cycle_or_an_unknown_dependency_still_draws():
    drawn = graph(_stages({1: [2], 2: [1], 3: [7]}))
    assert len(drawn["at"]) == 3
    assert {(e["from"], e["to"]) for e in drawn["edges"]} == {(1, 2), (2, 1)}


def test_board_states_are_the_five_colours():
    assert STATES == ("blocked", "ready", "started", "done", "merged")
    done = {"state": "done", "merged": False}
    assert stage_state(done) == "done" and stage_state({**done, "merged": None}) == "done"
    assert stage_state({"state": "done", "merged": True}) == "merged"
    assert stage_state({"state": "expired", "merged": None}) == "started"
