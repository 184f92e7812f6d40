"""Render valid report data as the canonical Markdown and the self-contained HTML view.

Both come from the same layout (:mod:`.view`) and the same label table; only the way one value
is written differs. Markdown values go through :func:`~okstra_git.core.mdtable.encode_cell`, so a
value is one line that cannot break a table or open a block; an HTML value's inline Markdown
(code spans, emphasis, safe links) is rendered, everything else escaped, ``<br>`` kept as a line
break (:func:`.view.inline_html`).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from ...core.mdtable import encode_cell
from ...core.resources import data_dir
from .view import Meta, build, id_links, inline_html, markdown_code


def markdown_cell(cell: Meta | str) -> str:
    """One table cell of the Markdown: a meta cell stacks ``**id**<br>label: value`` lines."""
    if not isinstance(cell, Meta):
        return encode_cell(cell)
    lines = [f"**{encode_cell(cell.headline)}**"]
    lines += [
        f"{encode_cell(label)}: {encode_cell(value, code=code)}"
        for label, value, code in cell.lines
    ]
    return "<br>".join(lines)


def render_markdown(data: dict[str, Any], language: str | None = None) -> str:
    """The canonical Markdown of valid report data (validate it first)."""
    from ..templates import render

    context = build(data, language or data["header"]["language"])
    return render(
        "report.md.j2",
        **context,
        md=encode_cell,
        code=lambda value: encode_cell(value, code=True),
        cell=markdown_cell,
        span=markdown_code,
    )


def render_html(data: dict[str, Any], language: str | None = None) -> str:
    """The self-contained HTML view (CSS and JS inline, no network) of valid report data."""
    from markupsafe import Markup

    from ..templates import render

    context = build(data, language or data["header"]["language"])
    links = id_links(context["ids"])
    script = (data_dir("templates") / "report.js").read_text("utf-8")
    style = (data_dir("templates") / "report.css").read_text("utf-8")

    def text(value: Any) -> Markup:
        return Markup(inline_html(value, links))

    def cell(value: Meta | str) -> Markup:
        if not isinstance(value, Meta):
            return text(value)
        lines = [Markup("<strong>{}</strong>").format(value.headline)]
        for label, item, code in value.lines:
            shown = Markup("<code>{}</code>").format(item) if code else text(item)
            lines.append(Markup('<span class="k">{}:</span> {}').format(label, shown))
        return Markup("<br>").join(lines)

    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return render(
        "report.html.j2",
        **context,
        text=text,
        cell=cell,
        script=Markup(script),
        style=Markup(style),
        script_hash=f"sha256-{digest}",
    )
