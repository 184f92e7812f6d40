"""The documents shipped with okstra (docs/*.md): readable on any install, wheel or checkout."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import BadInput
from ..core.resources import data_dir


def shipped() -> dict[str, Path]:
    """Each shipped document by its name (the file name without ``.md``), sorted."""
    folder = data_dir("docs")
    return {path.stem: path for path in sorted(folder.glob("*.md"))}


def find(name: str) -> Path:
    """The document ``name`` (``plan-format`` or ``plan-format.md``)."""
    docs = shipped()
    wanted = name.removesuffix(".md")
    if wanted not in docs:
        raise BadInput(f"no document {name!r}; the documents: {', '.join(docs) or '(none)'}")
    return docs[wanted]


def title(path: Path) -> str:
    """A document's first heading, without the ``#``."""
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem
