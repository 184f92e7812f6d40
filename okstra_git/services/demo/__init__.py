"""``git okstra demo``: the whole lifecycle on a throw-away repository, as a user would type it.

Each part of okstra adds one step module here; a step runs real commands through
:class:`Demo` and states what it expects, so the demo exits 0 only if everything behaved.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from .world import Demo, Narrator, make_world


def _steps() -> list[Callable[[Demo], None]]:
    from . import board, claims, foundation, incremental, plans, push, reports, verify

    return [
        foundation.step, plans.step, incremental.step, claims.step, verify.step, reports.step,
        push.step, board.step,
    ]  # fmt: skip


def run_demo(directory: Path | None, narration: Narrator) -> int:
    """Run every step, told as it goes by ``narration``; returns 0 only when every command
    behaved as expected."""
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="okstra-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        from ...core.errors import BadInput

        raise BadInput(f"demo folder {root} is not empty; give --dir an empty or new folder")
    demo = make_world(root.resolve(), narration)
    narration.started(demo.root)
    for step in _steps():
        step(demo)
    narration.finished(demo.root)
    return 0
