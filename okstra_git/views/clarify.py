"""What ``clarify status`` and ``clarify resume`` print (docs/workflow.md). ``clarify status``
reads a file alone: nothing here loads the git layer."""

from __future__ import annotations

from ..logic.clarify import UNRESOLVED, unresolved_approval_blockers
from ..records.base import to_data
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..logic.clarify import ClarificationReport
    from ..services.reports import Resumed


def status(report: str, parsed: ClarificationReport) -> Output:
    """The §5 rows of ``report``, those that still need the user first (each group in table
    order), and the rows that could not be read."""
    items = sorted(parsed.items, key=lambda item: item.status not in UNRESOLVED)
    blockers = unresolved_approval_blockers(parsed)
    if not parsed.schema_present:
        state = "schema-absent"
        text = (
            f"{report}: schema absent — no `## 5. Clarification Items` section (a legacy "
            f"4.5.9 / 5.1 / 5.2 layout, or no §5); the approval gate relies on the marker alone"
        )
    elif not items:
        state = "no-items"
        text = f"{report}: no items — §5 (line {parsed.line}) has no clarification rows"
    else:
        state = "items"
        lines = [
            f"{item.id or '-'}\t{item.status}\tBlocks={item.blocks}\t{item.kind or '-'}\t"
            f"line {item.line}\t{_short(item.statement)}"
            for item in items
        ]
        open_count = sum(item.status in UNRESOLVED for item in items)
        lines.append(
            f"{report}: {len(items)} item(s), {open_count} open or answered, "
            f"{len(blockers)} blocking approval"
        )
        text = "\n".join(lines)
    if parsed.malformed:
        text += "\n" + "\n".join(
            f"{report}:{row.line}: unreadable: {row.reason}" for row in parsed.malformed
        )
    return Output(
        {
            "file": report,
            "state": state,
            "schemaPresent": parsed.schema_present,
            "line": parsed.line,
            "items": [to_data(item) for item in items],
            "approvalBlockers": [item.id for item in blockers],
            "malformed": [to_data(row) for row in parsed.malformed],
        },
        text,
    )


def resumed(done: Resumed, key: str) -> Output:
    """The report staged as the next run's clarification response, and the command that
    reruns the phase."""
    appended = f" with {len(done.sidecars)} user response(s)" if done.sidecars else ""
    return Output(
        {**to_data(done), "taskKey": key},
        f"staged {done.report}{appended} as {done.staged}\n"
        f"{done.open_items} §5 row(s) still open or answered for the next run to reconcile\n"
        f"rerun the phase: {done.command}",
    )


def _short(text: str, width: int = 72) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
