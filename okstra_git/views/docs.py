"""``git okstra docs``: the list of shipped documents, or one of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import Output


def listing(docs: dict[str, Path], title: Callable[[Path], str]) -> Output:
    rows = [(name, title(path)) for name, path in docs.items()]
    width = max((len(name) for name, _ in rows), default=0)
    text = "".join(f"{name.ljust(width)}  {heading}\n" for name, heading in rows)
    text += "Read one with: git okstra docs NAME\n"
    data = {"documents": [{"name": n, "title": t, "path": str(docs[n])} for n, t in rows]}
    return Output(data, text)


def document(name: str, path: Path, path_only: bool) -> Output:
    body = path.read_text("utf-8")
    text = f"{path}\n" if path_only else body
    return Output({"name": path.stem, "path": str(path), "text": body}, text)
