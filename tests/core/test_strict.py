"""The strict parsers (pure): what they accept round-trips, everything else is refused."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_git.core.errors import BadInput
from okstra_git.core.strict import (
    MAX_DURATION_DAYS,
    MAX_INT,
    MAX_STAGE,
    duration,
    json_value,
    not_text,
    parsed,
    stage_choice,
    stage_number,
    whole_number,
)

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_INT, MAX_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)


@given(_JSON, st.booleans())
def test_any_plain_json_round_trips(value, ascii_only: bool):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert json_value(text, "x") == value
    assert json_value(text.encode(), "x") == value


@given(st.integers(1, MAX_STAGE))
def test_stage_numbers_round_trip(number: int):
    assert stage_number(str(number)) == number
    assert stage_choice(str(number)) == number


@given(st.text(max_size=12))
def test_a_stage_is_ascii_digits_or_refused(text: str):
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_STAGE:
        assert stage_number(text) == int(text)
    else:
        with pytest.raises(ValueError, match="stage number"):
            stage_number(text)


@given(st.integers(1, MAX_DURATION_DAYS * 86400), st.sampled_from("smhd"))
def test_durations_are_bounded(count: int, unit: str):
    seconds = count * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    if seconds <= MAX_DURATION_DAYS * 86400:
        assert duration(f"{count}{unit}") == timedelta(seconds=seconds)
    else:
        with pytest.raises(ValueError, match="at most 366d"):
            duration(f"{count}{unit}")


def test_parsed_names_where_the_value_came_from():
    with pytest.raises(BadInput, match=r"--seq '1x': expected a whole number from 0 to 5"):
        parsed(lambda t: whole_number(t, 0, 5), "1x", "--seq")
    assert stage_choice("auto") is None


@pytest.mark.parametrize(
    "text", ["NaN", "-Infinity", "[1e999]", '"\\udc00"', '{"a":{"a":1,"a":2}}']
)
def test_what_other_json_readers_would_choke_on_is_refused(text: str):
    with pytest.raises(BadInput, match="where"):
        json_value(text, "where")


@given(
    st.recursive(
        st.text() | st.integers(),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=8,
    )
)
def test_not_text_finds_exactly_the_strings_holding_a_surrogate(data):
    """Any string or key with a code point U+D800–U+DFFF (alone or paired: Python keeps
    both halves as they are) is named, with its path; text beyond the BMP is text."""
    import re

    def surrogates(value) -> bool:
        if isinstance(value, str):
            return re.search("[\ud800-\udfff]", value) is not None
        if isinstance(value, list):
            return any(surrogates(v) for v in value)
        if isinstance(value, dict):
            return any(surrogates(k) or surrogates(v) for k, v in value.items())
        return False

    found = not_text(data)
    assert (found is not None) == surrogates(data)
    if found is not None:
        assert surrogates(found[1])


def test_not_text_names_where_the_surrogate_is():
    assert not_text({"a": ["ok", "\U0001f600", "é"]}) is None
    assert not_text({"a": ["ok", "x\udc80y"]}) == ("(top)/a/1", "x\udc80y")
    assert not_text({"k\ud83d\ude00": 1}) == ("(top)/k\ud83d\ude00", "k\ud83d\ude00")
