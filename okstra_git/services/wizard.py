"""The wizard protocol over a state file (docs/workflow.md): read the state, apply one answer, write
it.

Every step replaces the file atomically, so a process killed between (or during) steps leaves
the previous state or the next one, and the next ``wizard step`` carries on from it. Steps on
one state file take turns (:func:`_turn`): two answering at once both land, one after the
other, instead of the second writing over the first; ``expect`` keeps an answer from landing
on a question its sender did not see.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ..core.errors import Conflict, Refused
from ..core.shell import okstra
from ..core.values import Value
from ..logic import wizard
from ..records.wizard import load_state, store_state


class Reply(Value):
    """What one ``wizard start``/``step`` prints: the prompt to show now."""

    prompt: dict[str, Any]
    """The current prompt (asked again, unchanged, after a rejected answer)."""
    error: str | None = None
    """Why the answer was not recorded; None when it was (or none was given)."""


TURN_WAIT = 10.0
"""Seconds a step waits for another step on the same folder's state files to finish."""


@contextlib.contextmanager
def _turn(path: str) -> Iterator[None]:
    """Hold the state file's folder (a flock on the folder itself: no lock file to leave
    behind, and the kernel frees a killed step's turn) while a step reads, decides and writes."""
    from ..git.reflocks import flock_within

    try:
        folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):  # no state file can be there: reading or
        yield  # writing it says so, naming the file
        return
    try:
        if not flock_within(folder, TURN_WAIT)[0]:
            raise Conflict(
                f"another wizard step on {path} has held its folder for {TURN_WAIT:g} s; "
                "retry once it has finished"
            )
        yield
    finally:
        os.close(folder)  # drops the flock


def done_stages(key: str) -> tuple[int, ...]:
    """The done stages of task ``key`` in the repository the wizard runs in: what the
    final-verification stage picker offers (none outside a repository or for an unknown task,
    where the picker still offers the whole task and typing a number in)."""
    from ..core.errors import OkstraError
    from ..records.claim import load_claims
    from .context import open_context

    try:
        ctx = open_context()
        states = load_claims(ctx.repo, ctx.key(key))
    except OkstraError:
        return ()
    return tuple(sorted(n for n, c in states.items() if c.claim.status == "done"))


def _knowing(state: wizard.State) -> wizard.State:
    """``state`` with the task's done stages read again when the stage picker is asked next."""
    if wizard.current(state).prompt["step"] != "verify_stage":
        return state
    return wizard.with_stages(state, done_stages(state.answers["task_key"]))


def start(path: str, task_type: str | None, key: str | None = None, restart: bool = False) -> Reply:
    """Begin a wizard in a new state file (``restart``: replace an existing one)."""
    state = _knowing(wizard.start(task_type, key))
    with _turn(path):
        if not restart and os.path.lexists(path):
            raise Refused(
                f"wizard state file {path} already exists: continue it with "
                f"{okstra('wizard', 'step', '--state-file', path)}, or begin again with --restart"
            )
        store_state(path, state, new=not restart)
    return Reply(wizard.current(state).prompt)


def step(path: str, answer: str | None = None, expect: str | None = None) -> Reply:
    """Show the current prompt, or answer it. A rejected answer changes nothing on disk, and
    so does an answer sent ``expect``-ing a step that is not the current one (another answer
    moved the wizard on since its sender looked)."""
    with _turn(path):
        loaded = load_state(path)
        state = _knowing(loaded)
        asked = wizard.current(state).prompt
        if answer is None:
            if state != loaded:
                store_state(path, state)
            return Reply(asked)
        if expect is not None and asked["step"] != expect:
            return Reply(
                asked,
                f"the wizard is at step {asked['step']!r}, not {expect!r}: another answer moved "
                "it on; nothing recorded",
            )
        try:
            state = _knowing(wizard.answer(state, answer))
        except wizard.Rejected as exc:
            if state != loaded:
                store_state(path, state)
            return Reply(asked, str(exc))
        store_state(path, state)
    return Reply(wizard.current(state).prompt)
