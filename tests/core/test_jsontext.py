"""Reading JSON without the json package: json's values and json's errors, text by text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import okstra_git
from okstra_git.core import strict
from okstra_git.core.jsontext import decoder, loads

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)
_SPACE = st.text(" \t\n\r\x0b\xa0", max_size=3)
_TEXTS = st.one_of(
    st.tuples(_SPACE, _VALUES, _SPACE).map(lambda t: t[0] + json.dumps(t[1]) + t[2]),
    st.text('{}[]":, \t\n0123456789.eE+-truefalsnINFaity\\u\ufeff', max_size=24),
    st.text(max_size=12),
)


def outcome(decode: Any, text: str) -> tuple[str, str]:
    try:
        return "value", repr(decode(text))  # repr: NaN is equal to itself there
    except Exception as exc:  # which exception, and its words, are compared
        return type(exc).__name__, str(exc)


@given(_TEXTS)
def test_loads_answers_as_json_loads(text: str):
    assert outcome(loads, text) == outcome(json.loads, text)


@given(_TEXTS)
def test_a_decoder_with_hooks_answers_as_json_decoder(text: str):
    hooks: dict[str, Any] = {
        "parse_constant": strict._no_constant,
        "parse_int": strict._bounded_int,
        "parse_float": strict._finite_float,
        "object_pairs_hook": strict._unique_keys,
    }
    assert outcome(decoder(**hooks), text) == outcome(json.JSONDecoder(**hooks).decode, text)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json", "not UTF-8 JSON (line 1 column 2: Expecting property name enclosed in "
         "double quotes)"),
        ('"\x01"', "not UTF-8 JSON (line 1 column 2: Invalid control character at)"),
        ('{"a": tru}', "not UTF-8 JSON (line 1 column 7: Expecting value)"),
        ("", "not UTF-8 JSON (line 1 column 1: Expecting value)"),
        ("[1] 2", "not UTF-8 JSON (line 1 column 5: Extra data)"),
        ("[1e999]", "not accepted JSON: the number 1e999 is beyond a double"),
    ],
)  # fmt: skip
def test_errors_are_json_s_where_json_is_not_loaded(text: str, said: str):
    """The pre-push hook never loads json unless a text fails to parse: json's words then."""
    root = str(Path(okstra_git.__file__).resolve().parent.parent)
    code = (
        f"import sys; sys.path.insert(0, {root!r})\n"
        "from okstra_git.core.errors import BadInput\n"
        "from okstra_git.core.strict import json_value\n"
        "assert 'json' not in sys.modules\n"
        "try:\n"
        "    json_value(sys.argv[1], 'x')\n"
        "except BadInput as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-S", "-c", code, text], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, f"x: {said}\n"), proc.stderr
