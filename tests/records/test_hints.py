"""records.base reads a field's annotation as eval would, without compiling it (``hint``)."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import pytest

import okstra_git
from okstra_git.core.values import _Fields
from okstra_git.records.base import hint


def _record_classes() -> list[type]:
    for found in pkgutil.walk_packages(okstra_git.__path__, "okstra_git."):
        if not found.name.endswith("__main__"):
            importlib.import_module(found.name)
    seen, pending = [], list(_Fields.__subclasses__())
    while pending:
        cls = pending.pop()
        seen.append(cls)
        pending.extend(cls.__subclasses__())
    return seen


def _outcome(build, text: str, scope: dict) -> tuple[str, object]:
    try:
        return "value", build(text, scope)
    except Exception as exc:  # the same error as eval, whatever it is
        return "error", type(exc)


def test_every_value_class_annotation_reads_as_eval_reads_it() -> None:
    """Every annotation of every value class in okstra (records and the rest): the same
    object eval gives (equal, and of the same type), or the same error."""
    checked = 0
    for cls in _record_classes():
        scope = vars(sys.modules[cls.__module__])
        for text in vars(cls).get("__annotations__", {}).values():
            ours, theirs = _outcome(hint, text, scope), _outcome(eval, text, scope)
            assert ours == theirs and type(ours[1]) is type(theirs[1]), (cls, text)
            checked += 1
    assert checked > 300


@pytest.mark.parametrize(
    "text",
    [
        "int | None",
        "None | int",
        "tuple[str, ...]",
        "dict[str, tuple[bytes | None, bytes | None]]",
        "list[list[int]] | dict[str, int] | None",
        "collections.abc.Mapping[str, int]",
        "Callable[[str], int] | None",
        "list[int",
        "list[int]]",
        "int |",
        "'str'",
        "True",
        "1 + 1",
        "missing_name | None",
        "collections.nothing",
        "int[str]",
    ],
)
def test_each_form_or_its_error_is_evals(text: str) -> None:
    import collections.abc
    from collections.abc import Callable

    scope = {"collections": collections, "Callable": Callable}
    assert _outcome(hint, text, scope) == _outcome(eval, text, scope)
