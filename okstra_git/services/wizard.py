"""The wizard protocol over a state file (SPEC §12): read the state, apply one answer, write it.

Every step replaces the file atomically, so a process killed between (or during) steps leaves
the previous state or the next one, and the next ``wizard step`` carries on from it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import wizard
from ..errors import Refused
from ..records.wizard import load_state, store_state
from ..shell import okstra


@dataclass(frozen=True)
class Reply:
    """What one ``wizard start``/``step`` prints: the prompt to show now."""

    prompt: dict[str, Any]
    """The current prompt (asked again, unchanged, after a rejected answer)."""
    error: str | None = None
    """Why the answer was not recorded; None when it was (or none was given)."""

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.error is None, "prompt": self.prompt}
        if self.error is not None:
            out["error"] = self.error
        return out


def start(path: str, task_type: str | None, key: str | None = None, restart: bool = False) -> Reply:
    """Begin a wizard in a new state file (``restart``: replace an existing one)."""
    state = wizard.start(task_type, key)
    if not restart and os.path.lexists(path):
        raise Refused(
            f"wizard state file {path} already exists: continue it with "
            f"{okstra('wizard', 'step', '--state-file', path)}, or begin again with --restart"
        )
    store_state(path, state, new=not restart)
    return Reply(wizard.current(state).prompt)


def step(path: str, answer: str | None = None) -> Reply:
    """Show the current prompt, or answer it. A rejected answer changes nothing on disk."""
    state = load_state(path)
    if answer is None:
        return Reply(wizard.current(state).prompt)
    try:
        state = wizard.answer(state, answer)
    except wizard.Rejected as exc:
        return Reply(wizard.current(state).prompt, str(exc))
    store_state(path, state)
    return Reply(wizard.current(state).prompt)
