"""Find the shipped data folders (schemas/, templates/, hooks/).

In a wheel they live in ``okstra_git/_data/``; in a source checkout (editable install, tests)
they are the top-level folders beside the package.
"""

from __future__ import annotations

import sys

from .lightos import dirname, isdir, join, realpath

# The pre-push hook reads a schema through here: no typing, no pathlib, not even os (the hook's
# python -S has not loaded it; ~6M instructions of a protected push), see core/lightos.py.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_PACKAGE_DIR = dirname(dirname(realpath(__file__)))  # okstra_git/


def data_path(name: str) -> str:
    """The shipped folder ``name`` (``schemas``, ``templates``…) as a plain path."""
    shipped = join(_PACKAGE_DIR, "_data", name)
    if isdir(shipped):
        return shipped
    return join(dirname(_PACKAGE_DIR), name)


def install_folder() -> str:
    """The folder that holds the ``okstra_git`` package (site-packages, or a source checkout)."""
    return dirname(_PACKAGE_DIR)


def data_dir(name: str) -> Path:
    from pathlib import Path

    return Path(data_path(name))


def installed_executable() -> str | None:
    """This installation's ``git-okstra`` console script, by absolute path.

    Hooks record it so they run the same okstra (and Python) that installed them, without a
    PATH shim's cost (pyenv's adds ~60 ms); and a script, not ``python -m``, so a folder named
    ``okstra_git`` in the pushed repository can never shadow the real package.
    """
    import os
    import shutil
    import sysconfig
    from pathlib import Path

    name = "git-okstra.exe" if os.name == "nt" else "git-okstra"
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    return str(Path(found).resolve()) if found else None


def okstra_command() -> list[str]:
    """argv that runs this installation's ``git okstra`` (``python -m`` when not installed)."""
    exe = installed_executable()
    return [exe] if exe else [sys.executable, "-m", "okstra_git"]
