"""pygit2, imported on first use: ``from .lazy import pygit2`` names a stand-in whose first
attribute read imports the module (~60 ms of CPU) and puts it in the stand-in's place.

Modules of the git layer name it so, and the type checker sees the real module
(``if TYPE_CHECKING: import pygit2``): a command served by git's plumbing alone
(``plumbed.PlumbedRepo``) never pays for it.
"""

from __future__ import annotations

import sys


class _Lazy:
    def __getattr__(self, name: str) -> object:
        import pygit2

        for module in list(sys.modules.values()):  # every importer's name, now the module
            if getattr(module, "pygit2", None) is self:
                module.pygit2 = pygit2  # type: ignore[attr-defined]
        return getattr(pygit2, name)


pygit2 = _Lazy()
