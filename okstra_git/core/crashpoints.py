"""Named points where a test makes the process kill itself (SIGKILL), to prove that every
write survives a kill: the next command completes the operation or finds the previous state.
A no-op unless ``OKSTRA_TEST_CRASH_AT`` is set."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

CRASH_ENV = "OKSTRA_TEST_CRASH_AT"
"""Names a crash point where the process kills itself: ``NAME`` (its first pass) or
``NAME#N`` (its N-th pass in the process, e.g. the second transaction of a command)."""
_crash_passes: dict[str, int] = {}


def crash_point(name: str, then: Callable[[], None] | None = None) -> None:
    """Die by SIGKILL when ``OKSTRA_TEST_CRASH_AT`` names this point: the kill -9 tests' hook.
    ``then`` runs just before (it kills a child whose work must die with the process)."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition("#")
    if point != name:
        return
    _crash_passes[name] = _crash_passes.get(name, 0) + 1
    if _crash_passes[name] == int(nth or 1):
        import signal

        if then is not None:
            then()
        os.kill(os.getpid(), signal.SIGKILL)
