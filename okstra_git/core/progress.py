"""A progress meter for okstra's own long steps, drawn as git draws its own.

``Checking records:  45% (4500/10000)`` is rewritten in place on stderr, then ends
``…, done.``: only when stderr is a terminal, and only once the step has taken
``GIT_PROGRESS_DELAY`` seconds (git's variable and default, 2), so a short step says nothing.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("GIT_PROGRESS_DELAY", "2")))
    except ValueError:
        return 2.0


class Progress:
    """``count`` of ``total`` done, shown as a percentage; use as a context manager, or call
    :meth:`done` at the end."""

    def __init__(self, title: str, total: int) -> None:
        self.title = title
        self.total = total
        self.count = 0
        self._percent = -1
        self._shown = False
        self._since = time.monotonic() if total and sys.stderr.isatty() else None
        self._delay = _delay() if self._since is not None else 0.0

    def tick(self, done: int = 1) -> None:
        """``done`` more of them are done."""
        self.count += done
        if self._since is None:
            return
        percent = min(100, self.count * 100 // self.total)
        if percent == self._percent:
            return
        if not self._shown and time.monotonic() - self._since < self._delay:
            return
        self._percent = percent
        self._shown = True
        sys.stderr.write(f"{self.title}: {percent:3d}% ({self.count}/{self.total})\r")
        sys.stderr.flush()

    def done(self) -> None:
        """The step is over: the meter's last line, when it was shown."""
        if self._shown:
            self._shown = False
            sys.stderr.write(f"{self.title}: 100% ({self.total}/{self.total}), done.\n")
            sys.stderr.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.done()
        elif self._shown:  # cut short: end the line, so what follows starts on its own
            sys.stderr.write("\n")
            sys.stderr.flush()
