"""The wizard's state file (``--state-file``): one JSON object, replaced atomically each step.

The file is the only memory the wizard has between steps, and an agent (or a person) may edit
it, so a read checks it whole — structure, then that every answer is one the machine could have
recorded — and refuses it (exit 2) naming the field rather than guess.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import BadInput
from ..core.jsontext import dumps_pretty
from ..core.userfiles import read_json_object, sweep_dead_temps, write_atomic
from ..logic.wizard import State, check_state
from .base import check_own, from_data, to_data

SCHEMA_VERSION = 1
MAX_STATE_BYTES = 1 << 20
WHAT = "wizard state file"


def load_state(path: str | os.PathLike[str]) -> State:
    shown = os.fspath(path)
    _, data = read_json_object(shown, WHAT, MAX_STATE_BYTES)
    where = f"{WHAT} {shown}"
    if data.get("schemaVersion") != SCHEMA_VERSION:
        raise BadInput(
            f"{where}: schemaVersion {data.get('schemaVersion')!r} is not {SCHEMA_VERSION}; "
            "start the wizard again"
        )
    state = from_data(State, data, where)
    check_state(state, where)
    return state


def store_state(path: str | os.PathLike[str], state: State, *, new: bool = False) -> None:
    """Write ``state`` atomically (``new``: only if the file does not exist yet), first
    sweeping the temp files a killed writer left beside it."""
    data = {"schemaVersion": SCHEMA_VERSION, **to_data(state)}
    check_own(data, "wizard-state", f"{WHAT} {os.fspath(path)}")
    sweep_dead_temps(Path(path).parent)
    write_atomic(path, dumps_pretty(data), WHAT, new=new)
