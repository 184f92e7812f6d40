"""Regular expressions compiled when first used. Pure.

re compiles a pattern in Python: 0.4-2.4M instructions each, so the two dozen a plan parser
defines cost a claim as much as its own work. Those a command may never need (the rarer
Markdown forms, the record shapes of other commands) are defined with :func:`lazy` and called
where they are used: ``_FENCE().fullmatch(line)``, compiled once per process.
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import AnyStr


def lazy(pattern: AnyStr, flags: int = 0) -> Callable[[], re.Pattern[AnyStr]]:
    """``re.compile(pattern, flags)``, made by the first call and returned by every call."""
    return functools.cache(functools.partial(re.compile, pattern, flags))
