"""A stage report stored with its done claim, as a person or an agent reads it.

``stage done --report`` stores Markdown as ``report.md`` and report data as ``report.json``
(``records.claim``). Every view that shows a stage report (``verify target``, the directive of a
dependent stage, ``stage show``, the board) shows the Markdown as written and report data
rendered to its canonical Markdown; data that no longer renders (a record written by another
version, edited by hand) is shown as indented JSON. Pure.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


DATA_NAME = "report.json"
_SHAPE_ONLY = frozenset({"starter-prompt", "generated-at", "header-stage"})
"""Rules whose failure leaves the data renderable."""


def report_data(name: str, text: str) -> dict[str, Any] | None:
    """The report data of a stored report: ``report.json``, or a ``report.md`` that holds report
    data all the same (stored before the two had names of their own). None for Markdown, or
    text that is not a JSON object."""
    if name != DATA_NAME and not text.lstrip().startswith("{"):
        return None  # Markdown, the usual stored report: read without loading json
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or (name != DATA_NAME and "header" not in data):
        return None
    return data


def readable_report(name: str, text: str) -> str:
    """The stored report as Markdown to read: Markdown as written; report data rendered as
    ``report render`` renders it, or as indented JSON in a ``json`` block when it does not pass
    the report rules. Ends with one line break."""
    data = report_data(name, text)
    if data is None and name != DATA_NAME:
        return text.rstrip() + "\n"
    if data is not None:
        from .rules import validate

        # What the renderer needs is the shape; a report stored by an older okstra (no
        # generatedAt, a prompt left) still reads as its Markdown.
        blocking = [
            p
            for p in validate(data)
            if p.rule not in _SHAPE_ONLY and p.pointer != "/header/generatedAt"
        ]
        if not blocking:
            from .render import render_markdown

            return render_markdown(data).rstrip() + "\n"
    import json

    try:
        shown = json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        shown = text.rstrip()
    return fenced(shown, "json")


def report_view(name: str | None, text: str | None) -> dict[str, Any]:
    """A stage's stored report as ``--json`` and every document showing it hold it:
    ``reportFile`` (the name it is stored under; None without a report), ``report`` (the
    Markdown to read, :func:`readable_report`) and ``reportData`` (the stored report data; None
    for Markdown)."""
    if name is None or text is None:
        return {"reportFile": None, "report": None, "reportData": None}
    return {
        "reportFile": name,
        "report": readable_report(name, text),
        "reportData": report_data(name, text),
    }


def fenced(text: str, info: str = "") -> str:
    """``text`` as one fenced code block, its fence longer than any run of backticks in it, so
    nothing inside can close the block early (CommonMark). Ends with one line break."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}\n"
