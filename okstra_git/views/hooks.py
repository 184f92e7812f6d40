"""What ``hooks install`` and ``hooks uninstall`` print."""

from __future__ import annotations

from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..services.hooks import Outcome


def installed(outcome: Outcome) -> Output:
    """What install or uninstall did, where the gate lives, and the notes for a person."""
    lines = [f"{outcome.action} ({outcome.manager})"]
    if outcome.gate is not None:
        lines.append(f"gate: {outcome.gate}")
    lines += [f"note: {note}" for note in outcome.notes]
    return Output(
        {
            "action": outcome.action,
            "manager": outcome.manager,
            "gate": str(outcome.gate) if outcome.gate else None,
            "notes": outcome.notes,
        },
        "\n".join(lines),
    )
