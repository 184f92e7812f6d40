"""What commands print: ``--json`` objects and the text people read.

No jsonschema or jinja2 imports at module level: these run on hot paths.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing import: every command, the pre-push hook too, loads this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def dump(data: dict[str, Any]) -> str:
    """``--json`` output: one JSON object, sorted keys, UTF-8 kept readable."""
    import json  # not at module level: the pre-push hook prints no JSON

    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


class Output:
    """A command's result; the CLI prints ``data`` with ``--json``, else ``text``.

    ``data``: the ``--json`` object (the CLI adds ``"ok"``, and the failure fields when
    ``code`` is not 0). ``text``: what people read on stdout; a callable is called only
    without ``--json`` (so a Jinja template is never loaded for an agent's ``--json``).
    ``err``: printed on stderr in both modes (warnings, refusal lines). ``code``: the exit
    code, 0 done, 1 the expected "no" (a check failed, a gate not met). ``error`` and
    ``hint``: with a non-zero ``code``, the one-paragraph reason and the command that fixes
    it (``okstra_git.shell``) that ``--json`` carries.
    """

    # A plain class, not a dataclass: every command imports it (~0.5 ms saved per run).
    __slots__ = ("code", "data", "err", "error", "hint", "text")

    def __init__(
        self,
        data: dict[str, Any],
        text: str | Callable[[], str] | None = None,
        *,
        err: str = "",
        code: int = 0,
        error: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.data = data
        self.text = text
        self.err = err
        self.code = code
        self.error = error
        self.hint = hint

    def render_text(self) -> str:
        return self.text() if callable(self.text) else self.text or ""
