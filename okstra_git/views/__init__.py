"""What commands print: ``--json`` objects and the text people read.

No jsonschema or jinja2 imports at module level: these run on hot paths.
"""

from __future__ import annotations

from ..core.values import Value

TYPE_CHECKING = False  # no typing import: every command, the pre-push hook too, loads this
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO


def dump(data: dict[str, Any]) -> str:
    """``--json`` output: one JSON object, sorted keys, UTF-8 kept readable — exactly
    ``json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2)``, written here because
    the ``json`` module writes indented JSON in pure Python, a value at a time: a third of the
    time of ``task list --json`` over 100k tasks."""
    import json  # not at module level: the pre-push hook prints no JSON

    return _indented(data, "\n", json) + "\n"


def _indented(value: Any, newline: str, json: Any) -> str:
    """``value`` as ``json.dumps(..., indent=2)`` writes it at the indent of ``newline``."""
    head = newline + "  "
    encode = json.encoder.encode_basestring
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = sorted(value)  # mixed key types raise TypeError, as json's sort does
        if type(keys[0]) is not str or type(keys[-1]) is not str:  # numbers, None: json's
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)
            return text.replace("\n", newline)
        parts = [encode(key) + ": " + _item(value[key], head, json, encode) for key in keys]
        return "{" + head + ("," + head).join(parts) + newline + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        parts = [_item(item, head, json, encode) for item in value]
        return "[" + head + ("," + head).join(parts) + newline + "]"
    return _scalar(value, json)


def _item(value: Any, newline: str, json: Any, encode: Callable[[str], str]) -> str:
    if type(value) is str:
        return encode(value)
    if value is None:
        return "null"
    return _indented(value, newline, json)


def _scalar(value: Any, json: Any) -> str:
    if type(value) is str:
        return json.encoder.encode_basestring(value)
    return json.dumps(value, ensure_ascii=False)  # numbers, booleans, null; refuses the rest


class Output(Value):
    """A command's result; the CLI prints ``data`` with ``--json``, else ``text``."""

    data: dict[str, Any]
    """The ``--json`` object (the CLI adds ``"ok"``, and the failure fields when ``code`` is
    not 0)."""
    text: str | Callable[[], str] | None = None
    """What people read on stdout; a callable is called only without ``--json`` (so a Jinja
    template is never loaded for an agent's ``--json``)."""
    err: str = ""
    """Printed on stderr in both modes (warnings, refusal lines)."""
    code: int = 0
    """The exit code: 0 done, 1 the expected "no" (a check failed, a gate not met)."""
    error: str | None = None
    """With a non-zero ``code``: the one-paragraph reason ``--json`` carries."""
    hint: str | None = None
    """With a non-zero ``code``: the command that fixes it (``okstra_git.core.shell``)."""

    def render_text(self) -> str:
        return self.text() if callable(self.text) else self.text or ""

    def print_text(self, stdout: TextIO, stderr: TextIO) -> None:
        """Printed without ``--json``: ``err`` on ``stderr``, then the text on ``stdout``
        (ending in a newline) when there is any."""
        stderr.write(self.err)
        text = self.render_text()
        if text:
            stdout.write(text if text.endswith("\n") else text + "\n")
