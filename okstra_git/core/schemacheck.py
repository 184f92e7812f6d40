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

# The pre-push hook checks verdict lines here: no typing, json, re, functools or os import (json
# and re load enum and functools, ~5 ms under the hook's python -S; os ~6M instructions). The
# verdict schema's patterns are checked without re (:func:`_plain_search`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

    Check = Callable[[Any, str, list[str]], None]
    """A compiled schema node: ``check(value, at, out)`` appends what is wrong at ``at``."""

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


_SCHEMAS: dict[str, dict[str, Any]] = {}


def schema(name: str) -> dict[str, Any]:
    """``schemas/<name>.schema.json``, parsed once per process."""
    found = _SCHEMAS.get(name)
    if found is None:
        from .jsontext import loads
        from .lightos import join
        from .resources import data_path

        path = join(data_path("schemas"), f"{name}.schema.json")
        with open(path, encoding="utf-8") as fh:
            found = _SCHEMAS[name] = loads(fh.read())
    return found


def problems(data: Any, name: str) -> list[str]:
    """Every way ``data`` fails ``schemas/<name>.schema.json``, as ``path: what`` lines (empty:
    valid)."""
    root = schema(name)
    found: list[str] = []
    _checker(root, root)(data, "", found)
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


def _pattern(text: str) -> re.Pattern[str]:
    """The schema's pattern, its final ``$`` made ``\\Z``: Python's ``$`` also matches before a
    trailing newline, which would let ``"<sha>\\n"`` pass as a sha (jsonschema lets it)."""
    import re

    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1] + "\\Z"
    return re.compile(text)


def _re_search(text: str) -> Callable[[str], bool]:
    find = _pattern(text).search
    return lambda value: find(value) is not None


_HEX = "0123456789abcdef"
_HEX_RUN = "[0-9a-f]{"
_LITERAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 :-")


def _plain_search(text: str) -> Callable[[str], bool] | None:
    """``_pattern(text).search(value) is not None`` without re, for the one shape of pattern the
    verdict schema uses: ``^``, plain characters (letters, digits, space, ``:``, ``-``, the
    escape ``\\n``), then at most one ``[0-9a-f]{N}``, then at most a final ``$``. None for
    any other pattern (re decides those)."""
    if not text.startswith("^"):
        return None
    body = text[1:]
    whole = body.endswith("$")
    body = body[:-1] if whole else body
    hex_digits = 0
    if body.endswith("}") and _HEX_RUN in body:
        body, _, count = body[:-1].rpartition(_HEX_RUN)
        if not (count.isascii() and count.isdigit()):
            return None
        hex_digits = int(count)
    prefix = body.replace("\\n", "\n")
    if not set(prefix) <= _LITERAL | {"\n"} or prefix.count("\n") != body.count("\\n"):
        return None  # another escape or a special character: re's to read
    size = len(prefix) + hex_digits

    def search(value: str) -> bool:
        if not value.startswith(prefix) or len(value) < size or (whole and len(value) != size):
            return False
        return not value[len(prefix) : size].strip(_HEX)  # every one of them a hex digit

    return search


_COMPILED: dict[int, tuple[dict[str, Any], Check]] = {}
"""id of a schema node → (the node, kept alive so its id stays its own; its checker)."""


def _checker(rules: dict[str, Any], root: dict[str, Any]) -> Check:
    """The checker of a schema node, compiled once: the keywords' rules are read and turned
    into small functions when the node is first checked, not again for every value (sync
    checks 10k records against the same few schemas). A keyword outside the subset raises
    ``ValueError`` then, as reading it did."""
    found = _COMPILED.get(id(rules))
    if found is not None and found[0] is rules:
        return found[1]
    made = (_keyword(keyword, rule, rules, root) for keyword, rule in rules.items())
    steps = [step for step in made if step is not None]

    def check(value: Any, at: str, out: list[str]) -> None:
        for step in steps:
            step(value, at, out)

    _COMPILED[id(rules)] = (rules, check)
    return check


def _check(
    value: Any, rules: dict[str, Any], root: dict[str, Any], at: str, out: list[str]
) -> None:
    _checker(rules, root)(value, at, out)


def _keyword(keyword: str, rule: Any, rules: dict[str, Any], root: dict[str, Any]) -> Check | None:
    """The check one keyword of a node makes, in the words the node's problems are told in
    (``at`` is the path, ``(top)`` for the whole record); None for a keyword that checks
    nothing by itself (annotations, ``then``/``else``: ``if`` picks them)."""
    if keyword in _ANNOTATIONS or keyword in ("then", "else"):
        return None
    if keyword == "$ref":
        if not rule.startswith("#/$defs/"):
            raise ValueError(f"schema $ref {rule!r}: only #/$defs/… is understood")
        target = root["$defs"][rule[len("#/$defs/") :]]

        def ref(value: Any, at: str, out: list[str]) -> None:
            _checker(target, root)(value, at, out)  # on use: a definition may refer to itself

        return ref
    if keyword == "type":
        names = [rule] if isinstance(rule, str) else rule
        tests = [_TYPES[n] for n in names]
        expected = " or ".join(names)

        def type_(value: Any, at: str, out: list[str]) -> None:
            if not any(test(value) for test in tests):
                out.append(f"{at or '(top)'}: expected {expected}, found {_json_type(value)}")

        return type_
    if keyword == "const":

        def const(value: Any, at: str, out: list[str]) -> None:
            if not _same(value, rule):
                out.append(f"{at or '(top)'}: must be {_dumps(rule)}")

        return const
    if keyword == "enum":
        plain = frozenset(o for o in rule if type(o) is str)
        every_text = len(plain) == len(rule)

        def enum(value: Any, at: str, out: list[str]) -> None:
            if type(value) is str and every_text:
                if value in plain:
                    return
            elif any(_same(value, option) for option in rule):
                return
            out.append(f"{at or '(top)'}: {_shown(value)} is not one of {_dumps(rule)}")

        return enum
    if keyword == "pattern":
        search = _plain_search(rule) or _re_search(rule)

        def pattern(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, str) and not search(value):
                out.append(f"{at or '(top)'}: {_shown(value)} does not match {rule!r}")

        return pattern
    if keyword == "minLength":

        def min_length(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, str) and len(value) < rule:
                out.append(f"{at or '(top)'}: shorter than {rule} character(s)")

        return min_length
    if keyword == "maxLength":

        def max_length(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, str) and len(value) > rule:
                out.append(f"{at or '(top)'}: longer than {rule} character(s)")

        return max_length
    if keyword in ("minimum", "maximum"):
        less = keyword == "minimum"
        number = _TYPES["number"]

        def bound(value: Any, at: str, out: list[str]) -> None:
            if number(value) and (value < rule if less else value > rule):
                said = "less" if less else "more"
                out.append(f"{at or '(top)'}: {value} is {said} than {rule}")

        return bound
    if keyword in ("items", "minItems", "maxItems", "uniqueItems"):
        return _array(keyword, rule, root)
    if keyword in ("properties", "required", "additionalProperties"):
        return _object(keyword, rules, root)
    if keyword in ("allOf", "anyOf", "oneOf"):
        subs = list(rule)

        def combined(value: Any, at: str, out: list[str]) -> None:
            results = [_errors(value, sub, root, at) for sub in subs]
            matched = sum(1 for errors in results if not errors)
            if keyword == "allOf":
                for errors in results:
                    out.extend(errors)
            elif matched == 0:
                out.append(f"{at or '(top)'}: matches none of the allowed shapes ({results[0][0]})")
            elif keyword == "oneOf" and matched > 1:
                out.append(
                    f"{at or '(top)'}: matches {matched} of the shapes, where exactly one must"
                )

        return combined
    if keyword == "if":
        then, otherwise = rules.get("then"), rules.get("else")

        def if_(value: Any, at: str, out: list[str]) -> None:
            branch = then if not _errors(value, rule, root, at) else otherwise
            if branch is not None:
                _checker(branch, root)(value, at, out)

        return if_
    raise ValueError(f"schema keyword {keyword!r} is not understood by schemacheck")


def _object(keyword: str, rules: dict[str, Any], root: dict[str, Any]) -> Check:
    properties = rules.get("properties", {})
    if keyword == "required":
        names = list(rules["required"])

        def required(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, dict):
                for name in names:
                    if name not in value:
                        out.append(f"{at or '(top)'}: missing {name!r}")

        return required
    if keyword == "properties":
        subs = list(properties.items())

        def props(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, dict):
                for name, sub in subs:
                    if name in value:
                        path = f"{at}/{name}" if at else name
                        _checker(sub, root)(value[name], path, out)

        return props
    extra = rules["additionalProperties"]

    def additional(value: Any, at: str, out: list[str]) -> None:
        if not isinstance(value, dict):
            return
        for name in value:
            if name in properties:
                continue
            if extra is False:
                out.append(f"{at or '(top)'}: unexpected field {name!r}")
            elif isinstance(extra, dict):
                _checker(extra, root)(value[name], f"{at}/{name}" if at else name, out)

    return additional


def _array(keyword: str, rule: Any, root: dict[str, Any]) -> Check:
    if keyword == "items":

        def items(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, list):
                check = _checker(rule, root)
                for index, item in enumerate(value):
                    check(item, f"{at}/{index}" if at else str(index), out)

        return items
    if keyword == "minItems":

        def min_items(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, list) and len(value) < rule:
                out.append(f"{at or '(top)'}: fewer than {rule} item(s)")

        return min_items
    if keyword == "maxItems":

        def max_items(value: Any, at: str, out: list[str]) -> None:
            if isinstance(value, list) and len(value) > rule:
                out.append(f"{at or '(top)'}: more than {rule} item(s)")

        return max_items

    def unique(value: Any, at: str, out: list[str]) -> None:
        if (
            isinstance(value, list)
            and rule
            and any(_same(a, b) for i, a in enumerate(value) for b in value[i + 1 :])
        ):
            out.append(f"{at or '(top)'}: items are not unique")

    return unique


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


def _dumps(value: Any) -> str:
    """``json.dumps(value)``. A ``const`` fails all the time inside an ``if`` (the verdict
    schema's), so a plain string, whole number, boolean or null is spelled here, as json
    would (it escapes ``"``, ``\\`` and all outside space to ``~``); json does the rest."""
    if value is None or type(value) is bool:
        return {None: "null", True: "true", False: "false"}[value]
    if type(value) is int:
        return str(value)
    plain = type(value) is str and value.isascii() and value.isprintable()
    if plain and '"' not in value and "\\" not in value:
        return f'"{value}"'
    import json

    return json.dumps(value, ensure_ascii=True)


def _shown(value: Any) -> str:
    text = _dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
