"""Canonical JSON text: how okstra spells every record it stores (sorted keys, UTF-8) and the
camelCase of its field names."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def dumps_pretty(data: Any) -> bytes:
    """Canonical multi-line JSON for files people read (``task.json``, ``claim.json``)."""
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode()


def dumps_line(data: Any) -> str:
    """Canonical one-line JSON, for JSON-Lines notes (sorted keys, so lines compare exactly)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
