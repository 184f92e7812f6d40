"""core.patterns: a pattern compiled on its first use, once."""

from __future__ import annotations

import re

from okstra_git.core.patterns import lazy


def test_a_lazy_pattern_is_compiled_once_when_first_called() -> None:
    pattern = lazy(r"<br\s*/?>", re.IGNORECASE)
    assert pattern.cache_info().currsize == 0  # type: ignore[attr-defined]  # nothing yet
    first = pattern()
    assert first is pattern() and first.flags & re.IGNORECASE
    assert first.split("a<BR/>b") == ["a", "b"]
    assert lazy(rb"[0-9a-f]{40}")().fullmatch(b"0" * 40)
