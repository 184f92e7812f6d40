"""Task keys and slugs (docs/workflow.md): pure, no git."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_git.core.errors import BadInput
from okstra_git.core.keys import parse_task_key, slug

REF_SAFE = re.compile(r"^[a-z0-9_][a-z0-9._-]*$")


def test_three_parts_kept_byte_exact() -> None:
    key = parse_task_key("Proj:Grp 1:Fix ~^ bug")
    assert (key.project, key.group, key.task_id) == ("Proj", "Grp 1", "Fix ~^ bug")
    assert str(key) == "Proj:Grp 1:Fix ~^ bug"


def test_two_parts_take_the_default_project() -> None:
    assert str(parse_task_key("g:i", "proj")) == "proj:g:i"
    with pytest.raises(BadInput, match="exactly three"):
        parse_task_key("g:i")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a:b", "exactly three"),
        ("a:b:c:d", "exactly three"),
        ("a::c", "task-group is empty"),
        (":b:c", "project-id is empty"),
        ("a:b:", "task-id is empty"),
        ("a:...:c", "only of dots or whitespace"),
        ("a:  :c", "only of dots or whitespace"),
        ("a:b:c\x07", "control character U\\+0007"),
        ("a:b\n:c", "control character U\\+000A"),
        ("a:b\x85:c", "control character U\\+0085"),
    ],
)
def test_bad_keys_are_refused_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(BadInput, match=problem):
        parse_task_key(text)


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ("Feature X", "feature-x"),
        ("a..b", "a-b"),
        ("name.lock", "name-lock"),
        ("~^?*[\\", "u-"),
        ("..hidden.", "hidden"),
        ("ok_name-1.2", "ok_name-1.2"),
    ],
)
def test_slug_examples(part: str, expected: str) -> None:
    assert slug(part).startswith(expected)


def test_non_ascii_falls_back_to_a_hash() -> None:
    assert re.fullmatch(r"u-[0-9a-f]{10}", slug("기능"))
    assert slug("기능") != slug("버그")


def test_long_parts_stay_short_and_distinct() -> None:
    a, b = slug("x" * 300 + "a"), slug("x" * 300 + "b")
    assert len(a) <= 64 and a != b


@given(st.text(min_size=1, max_size=80))
def test_any_part_gives_a_ref_safe_segment(part: str) -> None:
    segment = slug(part)
    assert REF_SAFE.match(segment), segment
    assert ".." not in segment and not segment.endswith((".lock", ".", "-"))
