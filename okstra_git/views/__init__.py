"""What commands print: ``--json`` objects and the text people read.

No jsonschema or jinja2 imports at module level: these run on hot paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def dump(data: dict[str, Any]) -> str:
    """``--json`` output: one JSON object, sorted keys, UTF-8 kept readable."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


@dataclass(frozen=True)
class Output:
    """A command's result; the CLI prints ``data`` with ``--json``, else ``text``."""

    data: dict[str, Any]
    """The ``--json`` object; the CLI adds ``"ok"`` (and the failure fields when ``code``)."""
    text: str | Callable[[], str] | None = None
    """What people read on stdout; a callable is called only without ``--json`` (so a Jinja
    template is never loaded for an agent's ``--json``)."""
    err: str = ""
    """Printed on stderr in both modes (warnings, refusal lines)."""
    code: int = 0
    """The exit code: 0 done, 1 the expected "no" (a check failed, a gate not met)."""
    error: str | None = None
    """With a non-zero ``code``: the one-paragraph reason ``--json`` carries as ``"error"``."""
    hint: str | None = None
    """With a non-zero ``code``: the command that fixes it (``okstra_git.shell``), or None."""

    def render_text(self) -> str:
        return self.text() if callable(self.text) else self.text or ""
