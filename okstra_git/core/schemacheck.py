"""JSON Schema checks for records read back, without importing jsonschema. Pure.

Writes validate with jsonschema itself (``records.base.check_schema``). Readers of records a
remote may have forged — ``sync`` adopting thousands of fetched task and claim refs, the
pre-push hook reading verdict lines — need the same answer at a fraction of the cost (the
jsonschema import alone is ~55 ms, and one validation ~0.3 ms). This interprets the subset of
JSON Schema 2020-12 that ``schemas/`` uses (one deliberate difference: a pattern's final ``$``
does not match before a trailing newline); a keyword outside it raises ``ValueError``, so a
schema that grows one fails closed instead of being half-checked (the tests run every schema
through both this and jsonschema and compare).
"""

from __future__ import annotations

import functools
import json
import os
import re

TYPE_CHECKING = False  # the pre-push hook checks verdict lines here: no typing import
if TYPE_CHECKING:
    from typing import Any

_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$defs", "$comment"})
KEYWORDS = _ANNOTATIONS | {
    "$ref", "type", "const", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum",
    "items", "minItems", "maxItems", "uniqueItems", "properties", "required",
    "additionalProperties", "allOf", "anyOf", "oneOf", "if", "then", "else",
}  # fmt: skip
"""Every keyword understood; any other raises."""
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


@functools.cache
def schema(name: str) -> dict[str, Any]:
    """``schemas/<name>.schema.json``, parsed once per process."""
    from .resources import data_path

    with open(os.path.join(data_path("schemas"), f"{name}.schema.json"), encoding="utf-8") as fh:
        return json.load(fh)


def problems(data: Any, name: str) -> list[str]:
    """Every way ``data`` fails ``schemas/<name>.schema.json``, as ``path: what`` lines (empty:
    valid)."""
    root = schema(name)
    found: list[str] = []
    _check(data, root, root, "", found)
    return found


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@functools.cache
def _pattern(text: str) -> re.Pattern[str]:
    """The schema's pattern, its final ``$`` made ``\\Z``: Python's ``$`` also matches before a
    trailing newline, which would let ``"<sha>\\n"`` pass as a sha (jsonschema lets it)."""
    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1] + "\\Z"
    return re.compile(text)


def _check(
    value: Any, rules: dict[str, Any], root: dict[str, Any], at: str, out: list[str]
) -> None:
    where = at or "(top)"
    for keyword, rule in rules.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword == "$ref":
            if not rule.startswith("#/$defs/"):
                raise ValueError(f"schema $ref {rule!r}: only #/$defs/… is understood")
            _check(value, root["$defs"][rule[len("#/$defs/") :]], root, at, out)
        elif keyword == "type":
            names = [rule] if isinstance(rule, str) else rule
            if not any(_TYPES[n](value) for n in names):
                out.append(f"{where}: expected {' or '.join(names)}, found {_json_type(value)}")
        elif keyword == "const":
            if not _same(value, rule):
                out.append(f"{where}: must be {json.dumps(rule)}")
        elif keyword == "enum":
            if not any(_same(value, option) for option in rule):
                out.append(f"{where}: {_shown(value)} is not one of {json.dumps(rule)}")
        elif keyword in ("pattern", "minLength", "maxLength"):
            if isinstance(value, str):
                if keyword == "pattern" and _pattern(rule).search(value) is None:
                    out.append(f"{where}: {_shown(value)} does not match {rule!r}")
                if keyword == "minLength" and len(value) < rule:
                    out.append(f"{where}: shorter than {rule} character(s)")
                if keyword == "maxLength" and len(value) > rule:
                    out.append(f"{where}: longer than {rule} character(s)")
        elif keyword in ("minimum", "maximum"):
            if _TYPES["number"](value) and (value < rule if keyword == "minimum" else value > rule):
                out.append(
                    f"{where}: {value} is {'less' if keyword == 'minimum' else 'more'} than {rule}"
                )
        elif keyword in ("items", "minItems", "maxItems", "uniqueItems"):
            if isinstance(value, list):
                _array(keyword, rule, value, root, at, out)
        elif keyword in ("properties", "required", "additionalProperties"):
            if isinstance(value, dict):
                _object(keyword, value, rules, root, at, out)
        elif keyword in ("allOf", "anyOf", "oneOf"):
            results = [_errors(value, sub, root, at) for sub in rule]
            matched = sum(1 for errors in results if not errors)
            if keyword == "allOf":
                for errors in results:
                    out.extend(errors)
            elif matched == 0:
                out.append(f"{where}: matches none of the allowed shapes ({results[0][0]})")
            elif keyword == "oneOf" and matched > 1:
                out.append(f"{where}: matches {matched} of the shapes, where exactly one must")
        elif keyword in ("if", "then", "else"):
            if keyword == "if":
                branch = "then" if not _errors(value, rule, root, at) else "else"
                if branch in rules:
                    _check(value, rules[branch], root, at, out)
        else:
            raise ValueError(f"schema keyword {keyword!r} is not understood by schemacheck")


def _object(
    keyword: str,
    value: dict[str, Any],
    rules: dict[str, Any],
    root: dict[str, Any],
    at: str,
    out: list[str],
) -> None:
    where = at or "(top)"
    properties = rules.get("properties", {})
    if keyword == "required":
        for name in rules["required"]:
            if name not in value:
                out.append(f"{where}: missing {name!r}")
    elif keyword == "properties":
        for name, sub in properties.items():
            if name in value:
                _check(value[name], sub, root, f"{at}/{name}" if at else name, out)
    else:
        extra = rules["additionalProperties"]
        for name in value:
            if name in properties:
                continue
            if extra is False:
                out.append(f"{where}: unexpected field {name!r}")
            elif isinstance(extra, dict):
                _check(value[name], extra, root, f"{at}/{name}" if at else name, out)


def _array(
    keyword: str, rule: Any, value: list[Any], root: dict[str, Any], at: str, out: list[str]
) -> None:
    where = at or "(top)"
    if keyword == "items":
        for index, item in enumerate(value):
            _check(item, rule, root, f"{at}/{index}" if at else str(index), out)
    elif keyword == "minItems" and len(value) < rule:
        out.append(f"{where}: fewer than {rule} item(s)")
    elif keyword == "maxItems" and len(value) > rule:
        out.append(f"{where}: more than {rule} item(s)")
    elif (
        keyword == "uniqueItems"
        and rule
        and any(_same(a, b) for i, a in enumerate(value) for b in value[i + 1 :])
    ):
        out.append(f"{where}: items are not unique")


def _errors(value: Any, rules: dict[str, Any], root: dict[str, Any], at: str) -> list[str]:
    found: list[str] = []
    _check(value, rules, root, at, found)
    return found


def _json_type(value: Any) -> str:
    return next(
        n
        for n in ("null", "boolean", "integer", "number", "string", "array", "object")
        if _TYPES[n](value)
    )


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."
