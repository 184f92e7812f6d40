"""The pure gate and verdict rules: exact refusal texts and routing."""

from __future__ import annotations

import pytest

from okstra_git.logic import verify_rules as rules

SHA1, SHA2 = "1" * 40, "2" * 40

# The refusals, byte for byte.
NOT_DONE_2 = "final-verification(whole-task): stage 2 not done — run implementation --stage 2 first"
NOT_MERGED_3 = (
    f"final-verification(whole-task): stage 3 done commit {SHA2} not merged into task worktree "
    "HEAD — merge stage branches then retry"
)
DIRTY = (
    "final-verification: worktree has uncommitted source changes (outside .okstra/) — commit "
    "or stash before verifying"
)


def test_whole_task_reports_every_offence_in_stage_order_then_dirty():
    lines = rules.whole_task_refusals([3, 1, 2], {1: SHA1, 3: SHA2}, unmerged={SHA2}, dirty=True)
    assert lines == [NOT_DONE_2, NOT_MERGED_3, DIRTY]


def test_whole_task_passes_when_all_done_merged_clean():
    assert rules.whole_task_refusals([1, 2], {1: SHA1, 2: SHA2}, set(), False) == []


def test_single_stage_ignores_other_stages_and_checks_its_worktree():
    assert rules.single_stage_refusals(2, "p:g:i", SHA1, "/wt", SHA1, False) == []
    assert rules.single_stage_refusals(2, "p:g:i", None, "/wt", None, True) == [
        "final-verification(single-stage): stage 2 not done — run implementation --stage 2 first"
    ]
    [gone] = rules.single_stage_refusals(2, "p:g:i", SHA1, "/wt", None, False)
    assert "/wt no longer exists" in gone and "--stage auto" in gone
    moved = rules.single_stage_refusals(2, "p:g:i", SHA1, "/wt", SHA2, True)
    assert len(moved) == 2 and SHA2 in moved[0] and moved[1] == DIRTY


@pytest.mark.parametrize(
    ("scope", "verdict", "route"),
    [
        ("whole-task", "accepted", "release-handoff"),
        ("whole-task", "conditional-accept", "implementation"),
        ("whole-task", "blocked", "implementation"),
        ("single-stage", "accepted", "done"),
        ("single-stage", "conditional-accept", "implementation"),
        ("single-stage", "blocked", "implementation"),
    ],
)
def test_routing_opens_release_handoff_only_for_whole_task_accepted(scope, verdict, route):
    assert rules.routing(scope, verdict) == route


def test_next_phase_after_a_single_stage_done():
    assert rules.next_phase("done", all_stages_done=False) == "implementation"
    assert rules.next_phase("done", all_stages_done=True) == "final-verification"
    assert rules.next_phase("release-handoff", True) == "release-handoff"
