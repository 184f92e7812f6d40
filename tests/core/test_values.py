"""values.Value: what the converted classes relied on from @dataclass(frozen=True)."""

from __future__ import annotations

import pytest

from okstra_git.core.values import Record, Value, field, init, remember
from okstra_git.logic.batch import Holder
from okstra_git.logic.stagemap import Finding
from okstra_git.records.approval import Approval
from okstra_git.records.base import from_data, to_data


def test_equal_and_hashed_by_field_values_and_never_assigned():
    a = Finding("S1", (1, 2), 3, "no")
    assert a == Finding("S1", (1, 2), 3, "no") and hash(a) == hash(Finding("S1", (1, 2), 3, "no"))
    assert a != Finding("S1", (1, 2), 4, "no") and a != ("S1", (1, 2), 3, "no")
    assert len({a, Finding("S1", (1, 2), 3, "no")}) == 1
    with pytest.raises(AttributeError, match="immutable"):
        a.line = 4  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del a.line
    assert a.line == 3


def test_replace_copies_with_changes_and_repr_names_every_field_in_order():
    held = Holder("started", "implementation-001")
    moved = held.replace(state="expired")
    assert (moved.state, moved.run_id, moved.who, held.state) == (
        "expired",
        "implementation-001",
        "",
        "started",
    )
    assert repr(held) == (
        "Holder(state='started', run_id='implementation-001', who='', lease_expires_at=None)"
    )
    with pytest.raises(TypeError):
        held.replace(holder="x")


def test_init_refuses_a_field_left_out_or_one_it_does_not_have():
    class Pair(Value):
        __slots__ = ("left", "right")
        left: int
        right: int

        def __init__(self, left: int, right: int | None = None) -> None:
            if right is None:
                init(self, left=left)
            else:
                init(self, left=left, rigth=right)

    with pytest.raises(TypeError, match="fields not set: right"):
        Pair(1)
    with pytest.raises(AttributeError):
        Pair(1, 2)


def test_a_default_factory_makes_a_new_default_for_each_value():
    class Report(Record):
        name: str
        done: list[int] = field(default_factory=list)
        seen: dict[str, int] = field(default_factory=dict)

    first, second = Report("a"), Report(name="b")
    first.done.append(1)
    first.seen["x"] = 1
    assert (second.done, second.seen) == ([], {})
    assert Report("c", [2]).done == [2] and Report("c", seen={"y": 2}).seen == {"y": 2}
    assert first == Report("a", [1], {"x": 1})


def test_a_value_record_round_trips_through_its_json():
    when = "2026-01-01T00:00:00+00:00"
    approval = Approval("p:g:i", "plans/p.md", "a" * 40, "A <a@x>", when, "B")
    data = to_data(approval)
    assert data["approvedBy"] == "A <a@x>" and "recordedBy" not in data
    assert from_data(Approval, data, "test") == approval


def test_a_slot_that_is_not_a_field_keeps_what_is_worked_out_from_the_fields():
    class Word(Value):
        __slots__ = ("_upper", "text")
        text: str

        def __init__(self, text: str) -> None:
            init(self, text=text)

        @property
        def upper(self) -> str:
            try:
                return self._upper
            except AttributeError:
                return remember(self, "_upper", self.text.upper())

    word = Word("a")
    assert word.upper == "A" and word._upper == "A"
    assert word == Word("a") and repr(word).endswith(".Word(text='a')")
    assert word.replace().upper == "A"


def test_a_record_copy_shares_nothing_a_change_could_reach():
    from okstra_git.records.claim import Claim

    claim = Claim(
        task_key="p:g:i",
        stage=2,
        run_id="implementation-001",
        status="started",
        started_at="2026-01-01T00:00:00+00:00",
        host="h",
        user="U <u@example.invalid>",
        base_commit="a" * 40,
        started_head_commit="a" * 40,
        worktree_path="",
        branch="",
        batch=[1, 2],
        plan_blob="b" * 40,
        history=["implementation-000"],
    )
    copy = claim.copy()
    assert copy == claim and copy is not claim
    copy.batch.append(3)
    copy.history.clear()
    copy.status = "done"
    assert (claim.batch, claim.history, claim.status) == ([1, 2], ["implementation-000"], "started")
