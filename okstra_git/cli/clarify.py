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
    from ..logic.clarify import parse_clarification_items
    from ..logic.planfile import read_plan_file
    from ..views.clarify import status as view

    return view(report, parse_clarification_items(read_plan_file(report, "report").text))


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
    from ..services import reports
    from ..services.context import open_context
    from ..views.clarify import resumed

    ctx = open_context()
    editor = None if no_edit else reports.editor_from_environment()
    done = reports.resume_clarification(ctx, ctx.key(key), editor)
    return resumed(done, str(ctx.key(key)))
