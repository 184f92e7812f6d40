"""What commands print, shared by the typer CLI and the lean entry (``lean.py``).

No typer, jsonschema or jinja2 imports at module level: these run on hot paths.
"""

from __future__ import annotations

import json
from typing import Any


def dump(data: dict[str, Any]) -> str:
    """``--json`` output: one JSON object, sorted keys, UTF-8 kept readable."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
