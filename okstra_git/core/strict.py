"""Strict parsers for values from the command line, config, user files and stored records.

Pure: no git. Each takes text (or bytes) and the name of where it came from, and returns the
value or raises BadInput naming both, so a hostile or mistyped value is a clear exit 2 before
anything is written — never a traceback, an overflow, or a value no later reader can parse:

- numbers are ASCII digits (``int("²")`` and ``"٣".isdigit()`` would accept others) and
  bounded, so every stored number fits a 64-bit integer;
- JSON has no ``NaN``/``Infinity`` (other JSON readers refuse them), no number beyond a
  64-bit integer or a finite double, no duplicate keys, no lone surrogate (it cannot be written
  back as UTF-8) and a bounded depth (deep nesting would overflow the recursion of every reader);
- paths with ``~user`` name a real user's home.
"""

from __future__ import annotations

from .errors import BadInput

# The gate reads verdicts through here on every push: no typing, pathlib, datetime, json, re,
# functools or os (re and json load enum and functools, ~5 ms under the hook's python -S; os
# ~6M instructions); the patterns below are compiled by re's own cache where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import timedelta
    from pathlib import Path
    from typing import Any, TypeVar

    T = TypeVar("T")

MAX_INT = 2**63 - 1
"""The largest whole number accepted anywhere (a signed 64-bit integer, as git and most JSON
readers hold them)."""
MAX_STAGE = 999_999_999
"""The largest stage number; the Stage Map parser reads at most nine digits too."""
MAX_JSON_DEPTH = 64
"""Deepest nesting of JSON arrays and objects accepted (okstra's records need under 10)."""
MAX_DURATION_DAYS = 366
"""The longest duration (claim leases): a lease is hours; a year is plainly a mistake."""

_DURATION = r"([0-9]{1,12})([smhd])"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_LINE_BREAKS = "[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"
"""Every character ``str.splitlines`` breaks at: none may enter a one-line value."""
_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F]"


def parsed(parse: Callable[[str], T], text: str, what: str) -> T:
    """``parse(text)``, its ValueError turned into BadInput naming ``what`` — for services;
    the CLI declares the same parsers as option converters, which name the option."""
    try:
        return parse(text)
    except ValueError as exc:
        raise BadInput(f"{what} {text!r}: {exc}") from None


def is_digits(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes ``²`` and ``٣``, which ``int`` refuses or
    reads as another number): for names read from trees and refs, which a remote may forge."""
    # [0-9]{1,19} without re: an ASCII string's digits are exactly 0-9.
    return 0 < len(text) <= 19 and text.isascii() and text.isdigit()


def whole_number(text: str, low: int = 0, high: int = MAX_INT) -> int:
    """``text`` as a whole number in ``low..high``: ASCII digits only, no sign or spaces."""
    if not is_digits(text) or not low <= int(text) <= high:
        raise ValueError(f"expected a whole number from {low} to {high} (ASCII digits)")
    return int(text)


def stage_number(text: str) -> int:
    """A Stage Map number, 1..MAX_STAGE, as typed."""
    if not is_digits(text) or not 1 <= int(text) <= MAX_STAGE:
        raise ValueError("expected a stage number such as 2 (ASCII digits)")
    return int(text)


def stage_choice(text: str) -> int | None:
    """``auto`` (``None``: the batch, or the whole task) or one stage number."""
    if text == "auto":
        return None
    try:
        return stage_number(text)
    except ValueError:
        raise ValueError("expected 'auto' or a stage number such as 2 (ASCII digits)") from None


def run_seq(text: str) -> str:
    """A run number as written (``001``): three to nine ASCII digits, kept as text."""
    import re

    if re.fullmatch(r"[0-9]{3,9}", text) is None:
        raise ValueError("expected a 3-digit run number such as 001 (ASCII digits)")
    return text


def duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``2h``, ``1d``: one positive number and one unit, at most
    MAX_DURATION_DAYS."""
    import re

    match = re.fullmatch(_DURATION, text)
    if match is not None:
        from datetime import timedelta

        span = timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
        if timedelta(0) < span <= timedelta(days=MAX_DURATION_DAYS):
            return span
    raise ValueError(
        f"expected a positive duration such as 90s, 30m, 2h or 1d, at most {MAX_DURATION_DAYS}d"
    )


NO_LEASE = "none"
"""The lease that says a claim has none: held until it is done or released."""


def lease(text: str) -> timedelta | None:
    """A claim's lease: a :func:`duration`, or ``none`` (None: no lease)."""
    if text == NO_LEASE:
        return None
    try:
        return duration(text)
    except ValueError as exc:
        raise ValueError(f"{exc}, or {NO_LEASE}") from None


def line_break(text: str) -> str | None:
    """The first character of ``text`` that ``str.splitlines`` breaks at, or None."""
    import re

    found = re.search(_LINE_BREAKS, text)
    return found.group() if found is not None else None


def one_line(text: str, what: str) -> str:
    """``text`` unchanged when it holds no line break of any kind, else BadInput: values shown
    in directives and printed commands must not add a line."""
    found = line_break(text)
    if found is not None:
        raise BadInput(
            f"{what} {text!r} holds a line break (U+{ord(found):04X}); it would add a line to "
            "the run directive and to printed commands — rename it"
        )
    return text


def home_path(value: str, what: str) -> Path:
    """``value`` as a path with a leading ``~`` or ``~user`` expanded; an unknown user is
    refused (``os.path.expanduser`` would leave ``~nosuchuser`` as a relative folder name)."""
    why = unknown_home(value)
    if why is not None:
        raise BadInput(f"{what} = {value!r}: {why}")
    import os
    from pathlib import Path

    return Path(os.path.expanduser(value))


def unknown_home(value: str) -> str | None:
    """Why ``value``'s leading ``~user`` names no folder, or ``None`` when it does (or has none)."""
    if not value.startswith("~"):
        return None
    import os

    user = value[1:].partition("/")[0]
    if os.path.expanduser("~" + user).startswith("~"):
        return f"there is no user {user!r} on this machine, so '~{user}' names no folder"
    return None


# ---------------------------------------------------------------------------------------------
# JSON


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))  # checked first: int() of 5000 digits is itself refused
    if digits > 19 or abs(int(text)) > MAX_INT:
        raise ValueError(f"the {digits}-digit integer {text[:24]}… is beyond a 64-bit integer")
    return int(text)


def _finite_float(text: str) -> float:
    import math

    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is beyond a double")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):  # readers disagree on which value wins: refuse both
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return data


_DECODE: Callable[[str], Any] | None = None


def _decode(text: str) -> Any:
    """``json.JSONDecoder(...).decode(text)`` with the strict hooks above."""
    global _DECODE
    if _DECODE is None:
        from .jsontext import decoder

        _DECODE = decoder(
            parse_constant=_no_constant,
            parse_int=_bounded_int,
            parse_float=_finite_float,
            object_pairs_hook=_unique_keys,
        )
    return _DECODE(text)


def json_value(raw: bytes | str, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """One JSON document, strictly (see the module docstring), or BadInput naming ``where``."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise BadInput(
                f"{where}:{line}: not UTF-8 JSON (byte {exc.start} is not UTF-8)"
            ) from exc
    else:
        text = raw
    # Without a "\\u" escape (or, in a str, a character beyond ASCII) there is no surrogate
    # to look for: the common record is judged without re.
    strings = ("\\u" in text and _has(_SURROGATE_ESCAPE, text)) or (
        not isinstance(raw, bytes) and not text.isascii() and _has_surrogate(text)
    )
    try:
        if text.startswith("\ufeff"):  # as json.loads says it (the decoder alone does not)
            from json import JSONDecodeError

            raise JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        data = _decode(text)
    except ValueError as exc:
        from json import JSONDecodeError  # a failure: only now is json worth loading

        if isinstance(exc, JSONDecodeError):
            raise BadInput(
                f"{where}: not UTF-8 JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
            ) from exc
        raise BadInput(f"{where}: not accepted JSON: {exc}") from exc  # from the hooks above
    except RecursionError:
        raise BadInput(f"{where}: JSON nested deeper than {max_depth} levels") from None
    # Every array and object opens with a bracket: a text with few cannot nest deep (the count
    # is a tenth of the cost of the walk, which a listing of 100k records pays per record).
    if strings or text.count("{") + text.count("[") > max_depth:
        _check_tree(data, where, max_depth, strings)
    return data


def _has(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


def _has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (U+D800–U+DFFF, a lone one in a record):
    the only code points UTF-8 cannot encode, so the encoder finds them, in C. Compiling
    that character class costs re ~2M instructions, a tenth of a claim's own work."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_tree(data: Any, where: str, max_depth: int, strings: bool) -> None:
    """Depth, and (when the text had a ``\\uD8xx`` escape) lone surrogates, without recursion."""
    pending: list[tuple[Any, int]] = [(data, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, (dict, list)):
            if depth >= max_depth:
                raise BadInput(f"{where}: JSON nested deeper than {max_depth} levels")
            items = value.values() if isinstance(value, dict) else value
            pending.extend((item, depth + 1) for item in items)
    found = not_text(data) if strings else None
    if found is not None:
        raise BadInput(
            f"{where}: {found[0]} holds a lone surrogate escape (\\ud800–\\udfff), which is not "
            "text; fix the file"
        )


def not_text(data: Any) -> tuple[str, str] | None:
    """``(path, string)`` of the first string (or key) in JSON-ready ``data`` holding a lone
    surrogate — what Python makes of bytes that are not UTF-8 (a file name, a command-line
    argument) and what no UTF-8 record can hold; None when every string is text."""
    import json

    # One pass in C for the common case (every string is text): the encoder copies a lone
    # surrogate through as it is, so it shows in its output. Only then is the record walked.
    try:
        if not _has_surrogate(json.dumps(data, ensure_ascii=False)):
            return None
    except (TypeError, ValueError):  # not JSON-ready data: the walk below judges it
        pass
    pending: list[tuple[Any, str]] = [(data, "(top)")]
    while pending:
        value, path = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if _has_surrogate(key):
                    return f"{path}/{key}", key
                pending.append((item, f"{path}/{key}"))
        elif isinstance(value, list):
            pending.extend((item, f"{path}/{n}") for n, item in enumerate(value))
        elif isinstance(value, str) and _has_surrogate(value):
            return path, value
    return None


def json_object(raw: bytes | str, where: str) -> dict[str, Any]:
    """:func:`json_value` that must be an object."""
    data = json_value(raw, where)
    if not isinstance(data, dict):
        raise BadInput(f"{where}: expected a JSON object, found {type(data).__name__}")
    return data
