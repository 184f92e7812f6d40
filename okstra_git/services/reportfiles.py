"""Report data files in, rendered views out: reading ``data.json`` and writing the Markdown
and HTML beside it. No git here, so ``report validate`` and ``report render`` stay light."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.errors import BadInput
from ..core.userfiles import read_json_object, write_atomic
from ..core.values import Value

MAX_DATA_BYTES = 16 << 20
"""Report data is a document's worth of JSON; anything larger is refused (exit 2)."""


def read_data(path: str | os.PathLike[str]) -> tuple[bytes, dict[str, Any]]:
    """The data file's bytes (for digests) and its JSON object; BadInput names the file."""
    return read_json_object(os.fspath(path), "report data", MAX_DATA_BYTES)


def default_outputs(data_path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Where ``report render`` writes by default: ``X.data.json`` → ``X.md`` and ``X.html``."""
    path = Path(data_path)
    stem = path.name.removesuffix(".json").removesuffix(".data")
    return path.with_name(stem + ".md"), path.with_name(stem + ".html")


class Rendered(Value):
    """The files ``report render`` wrote."""

    markdown: Path | None
    html: Path | None


def render_files(
    data: dict[str, Any],
    markdown: Path | None,
    html: Path | None,
    language: str | None = None,
) -> Rendered:
    """Render valid ``data`` to the given paths (each written atomically)."""
    from ..logic.reports.render import render_html, render_markdown

    if language is not None and language not in ("ko", "en"):
        raise BadInput(f"--lang {language!r}: ko or en")
    if markdown is not None:
        write_atomic(markdown, render_markdown(data, language).encode("utf-8"), "--md")
    if html is not None:
        write_atomic(html, render_html(data, language).encode("utf-8"), "--html")
    return Rendered(markdown, html)
