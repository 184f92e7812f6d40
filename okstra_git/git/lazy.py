"""pygit2, imported on first use: ``from .lazy import pygit2`` names a stand-in whose first
attribute read imports the module (~60 ms of CPU) and puts it in the stand-in's place.

Modules of the git layer name it so, and the type checker sees the real module
(``if TYPE_CHECKING: import pygit2``): a command served by git's plumbing alone
(``plumbed.PlumbedRepo``) never pays for it.
"""

from __future__ import annotations

import os
import sys


def _env_true(name: str) -> bool:
    """An environment variable as git reads a boolean one (``git_env_bool``)."""
    value = os.environ.get(name, "").strip().lower()
    if value in ("true", "yes", "on"):
        return True
    try:
        return int(value) != 0
    except ValueError:
        return False


class _Lazy:
    def __getattr__(self, name: str) -> object:
        import pygit2

        if _env_true("GIT_CONFIG_NOSYSTEM"):
            # git then reads no system config (/etc/gitconfig); libgit2 would, and an identity
            # or setting git ignores would decide okstra's commits.
            pygit2.settings.search_path[pygit2.enums.ConfigLevel.SYSTEM] = ""
        for module in list(sys.modules.values()):  # every importer's name, now the module
            if getattr(module, "pygit2", None) is self:
                module.pygit2 = pygit2  # type: ignore[attr-defined]
        return getattr(pygit2, name)


pygit2 = _Lazy()
