"""Find the shipped data folders (schemas/, templates/, hooks/).

In a wheel they live in ``okstra_git/_data/``; in a source checkout (editable install, tests)
they are the top-level folders beside the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    shipped = _PACKAGE_DIR / "_data" / name
    if shipped.is_dir():
        return shipped
    return _PACKAGE_DIR.parent / name
