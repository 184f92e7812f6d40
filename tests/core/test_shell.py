"""Printed commands come back from shlex.split as the argv they were built from."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_git.core.errors import BadInput
from okstra_git.core.shell import command, okstra

_ONE_LINE = st.text(
    st.characters(blacklist_characters="\n\r\0\v\f\x1c\x1d\x1e\x85\u2028\u2029"), max_size=30
)


@given(st.lists(_ONE_LINE, min_size=1, max_size=5))
def test_any_one_line_words_round_trip(words: list[str]) -> None:
    line = command(*words)
    assert "\n" not in line
    assert shlex.split(line) == words


def test_a_hostile_key_stays_one_word() -> None:
    key = "p:g:x';touch PWNED;'"
    line = okstra("stage", "done", key, "--stage", 2)
    assert shlex.split(line) == ["git", "okstra", "stage", "done", key, "--stage", "2"]


@pytest.mark.parametrize("word", ["a\nb", "a\rb", "a\0b", "a\u2028b", "a\x85b"])
def test_a_line_break_is_refused_not_printed(word: str) -> None:
    with pytest.raises(BadInput, match="line break"):
        command("git", word)
