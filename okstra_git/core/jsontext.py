"""Canonical JSON text: how okstra spells every record it stores (sorted keys, UTF-8) and the
camelCase of its field names; and reading JSON without loading the ``json`` package.

The pre-push hook parses verdict lines on every push, and importing ``json`` loads ``re``,
``enum`` and ``functools`` with it (~5 ms under the hook's ``python -S``). :func:`decoder` runs
the very scanner ``json.JSONDecoder`` runs (CPython's ``_json``); only a text it does not take
whole is handed to ``json`` itself, which then raises its own error.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_SPACE = " \t\n\r"
"""What ``json.decoder.WHITESPACE`` matches around a document."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def dumps_pretty(data: Any) -> bytes:
    """Canonical multi-line JSON for files people read (``task.json``, ``claim.json``)."""
    import json

    return (json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode()


def dumps_line(data: Any) -> str:
    """Canonical one-line JSON, for JSON-Lines notes (sorted keys, so lines compare exactly)."""
    import json

    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class _Hooks:
    """What ``_json.make_scanner`` reads of a ``json.JSONDecoder``: its options."""

    strict = True
    object_hook = None

    def __init__(self, **hooks: Any) -> None:
        self.parse_int = hooks.get("parse_int") or int
        self.parse_float = hooks.get("parse_float") or float
        constants = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
        self.parse_constant = hooks.get("parse_constant") or constants.__getitem__
        self.object_pairs_hook = hooks.get("object_pairs_hook")


def decoder(**hooks: Any) -> Callable[[str], Any]:
    """``json.JSONDecoder(**hooks).decode``, the same answer and the same errors, for hooks
    among ``parse_int``, ``parse_float``, ``parse_constant`` and ``object_pairs_hook``."""

    def by_json(text: str) -> Any:
        import json

        return json.JSONDecoder(**hooks).decode(text)

    try:
        from _json import make_scanner
    except ImportError:  # not CPython
        return by_json
    scan = make_scanner(_Hooks(**hooks))  # type: ignore[arg-type]  # it reads these attributes

    def decode(text: str) -> Any:
        # JSONDecoder.decode is this scan between two runs of whitespace. Whatever does not
        # scan whole is decoded again by json, which raises its own error: the scanner can only
        # word one once json.decoder is loaded, and the hooks raise the same again.
        try:
            value, end = scan(text, len(text) - len(text.lstrip(_SPACE)))
        except Exception:  # json's answer, below, is the one given
            return by_json(text)
        if text[end:].strip(_SPACE):  # json says "Extra data"
            return by_json(text)
        return value

    return decode


_PLAIN: Callable[[str], Any] | None = None


def loads(text: str) -> Any:
    """``json.loads(text)`` of a ``str``."""
    global _PLAIN
    if text.startswith("\ufeff"):  # json.loads refuses a BOM, in its own words
        import json

        return json.loads(text)
    if _PLAIN is None:
        _PLAIN = decoder()
    return _PLAIN(text)
