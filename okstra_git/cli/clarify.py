"""``git okstra clarify``: the §5 Clarification Items of a report (docs/workflow.md)."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command, group

group("clarify", "Clarification items (§5) of a report.")


@command(
    "clarify status",
    "List the §5 rows, open and answered first.",
    Arg("report", "A report or plan (Markdown).", metavar="REPORT", complete="file"),
)
def status(report: str) -> Output:
    from ..logic.clarify import UNRESOLVED, parse_clarification_items, unresolved_approval_blockers
    from ..logic.planfile import read_plan_file
    from ..records.base import to_data

    parsed = parse_clarification_items(read_plan_file(report, "report").text)
    # Stable sort: rows that still need the user first, each group in table order.
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


@command(
    "clarify resume",
    "Open the task's latest report in $EDITOR, then stage it as the next run's clarification "
    "response and print the command that reruns the phase.",
    KEY,
    Arg("--no-edit", "Stage the report as it is, without opening an editor.", flag=True),
    about="The report (and any user-responses/user-response-*.md sidecars of its run, "
    "appended in name order) becomes .okstra/tasks/<group>/<id>/instruction-set/"
    "clarification-response.md. Nothing is staged when the editor fails or §5 cannot be read.",
)
def resume(key: str, no_edit: bool) -> Output:
    from ..records.base import to_data
    from ..services import reports
    from ..services.context import open_context

    ctx = open_context()
    editor = None if no_edit else reports.editor_from_environment()
    done = reports.resume_clarification(ctx, ctx.key(key), editor)
    appended = f" with {len(done.sidecars)} user response(s)" if done.sidecars else ""
    return Output(
        {**to_data(done), "taskKey": str(ctx.key(key))},
        f"staged {done.report}{appended} as {done.staged}\n"
        f"{done.open_items} §5 row(s) still open or answered for the next run to reconcile\n"
        f"rerun the phase: {done.command}",
    )


def _short(text: str, width: int = 72) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
