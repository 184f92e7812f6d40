"""``git okstra report``: a run's report data — check it, start it, render it (docs/workflow.md)."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command, group, number

group(
    "report",
    "Report data (data.json): validate it, start it for a phase, render Markdown and HTML.",
    about="Every field, its meaning and the rules beyond the schema: `git okstra docs "
    "report-format` (generated from schemas/final-report.schema.json). validate and render need "
    "no repository.",
)

DATA = Arg("data", "The report data (data.json).", metavar="DATA", complete="file")
LANG = Arg(
    "--lang",
    "The label language (default: the data's header.language).",
    metavar="LANG",
    choices=("ko", "en"),
)


@command(
    "report validate",
    "Check report data against the schema and every rule; exit 1 listing every problem.",
    DATA,
    Arg(
        "--no-task",
        "Skip the checks against the task's records in this repository.",
        flag=True,
    ),
    about="Every problem at once, each with the JSON pointer of its field and its rule. A "
    "report is also checked against its task when the task is in this repository: a "
    "final-verification report's stages are the Stage Map's (or the one stage), done, and list "
    "the implementation reports their claims recorded; a run whose record holds an incremental "
    "scope decision carries that decision.",
)
def validate(data: str, no_task: bool) -> Output:
    from ..logic.reports.rules import validate as check
    from ..services.reportfiles import read_data

    report = read_data(data)[1]
    problems = check(report)
    if no_task:
        from ..services.reports import RecordsChecked, clock_check

        problems += clock_check(report)
        checked = RecordsChecked(skipped="asked")
    else:
        from ..services.reports import records_check

        found, checked = records_check(report)
        problems += found
    from ..views.report import validated

    then, step = None, None
    if not problems and checked.skipped is None:
        from ..services.reports import report_step

        header = report["header"]
        then, step = report_step(None, str(header["taskKey"]), data, header)
    return validated(data, report, problems, checked, then, step)


@command(
    "report init",
    "Start the report data (data.json) of the task's phase from its records; fill its prompts.",
    KEY,
    Arg(
        "--type",
        "The phase (default: the task's current phase; final-verification with --verdict).",
        metavar="TYPE",
        dest="task_type",
    ),
    Arg(
        "--stage",
        "implementation: the report of stage N alone (a stage report, for stage done "
        "--report); final-verification: verify stage N alone (default: the whole task).",
        metavar="N",
        convert=number,
    ),
    Arg(
        "--verdict",
        "final-verification: the verdict, set everywhere the rules tie it — the verdict card, "
        "the final verdict, the next step, the first recommended step, the reader summary's "
        "command and the phase-continuation row — so verify record takes the filled report "
        "as it is; conditional-accept and blocked also start one acceptance blocker to write.",
        metavar="V",
        choices=("accepted", "conditional-accept", "blocked"),
    ),
    Arg("--lang", "The label language.", metavar="LANG", choices=("ko", "en"), default="en"),
    Arg(
        "--out",
        "Where to write (default: the run's reports/final-report-<type>-<seq>.data.json; a "
        "stage report's, stage-<N>-report-implementation-<seq>.data.json beside the stage "
        "report task status names); "
        "missing folders are made.",
        metavar="FILE",
        complete="file",
    ),
    Arg("--force", "Overwrite an existing file.", flag=True),
    about="A planning run starts from the plan's Stage Map; an implementation report from the "
    "stages still open (while any is, it hands over to implementation, not final-verification) "
    "and the approved plan's §5 rows still open or answered, each carried into a follow-up "
    "row; a final verification from the done stages and the implementation reports their "
    "claims recorded — refused, with the reason, when no stage it would verify is done. The run "
    "is the phase's running run (a stage report: its claim's run), else the next one; "
    "header.generatedAt is now. Every text beginning 'Replace:' is a prompt that report validate "
    "refuses until it is written; nothing else needs editing. Field by field: "
    "`git okstra docs report-format`.",
)
def init(
    key: str,
    task_type: str | None,
    stage: int | None,
    verdict: str | None,
    lang: str,
    out: str | None,
    force: bool,
) -> Output:
    from ..services import reports
    from ..services.context import open_context

    ctx = open_context()
    task_key = ctx.key(key)
    if out is not None:
        # The steps printed after it run in the task's clone (git -C CLONE): they name the
        # file absolute, not relative to the folder this ran in.
        import os

        out = os.path.abspath(out)
    path, data = reports.init_report(ctx, task_key, task_type, stage, lang, out, force, verdict)
    from ..logic.reports.rules import starter_prompts
    from ..views.report import started

    then, step = reports.report_step(ctx, key, str(path), data["header"])
    return started(task_key, path, data, starter_prompts(data), stage, verdict, out, then, step)


@command(
    "report render",
    "Write the canonical Markdown and the self-contained HTML view of report data.",
    DATA,
    Arg("--md", "Write the Markdown here.", metavar="OUT", complete="file"),
    Arg("--html", "Write the HTML view here.", metavar="OUT", complete="file"),
    LANG,
    about="Without --md or --html both are written beside DATA (X.data.json → X.md, X.html). "
    "The data must pass report validate's rules. The HTML view has CSS and JS inline and "
    "fetches nothing; its Export user response button downloads "
    "user-response-<type>-<seq>.md, which clarify resume appends to the next run's input.",
)
def render(data: str, md: str | None, html: str | None, lang: str | None) -> Output:
    from pathlib import Path

    from ..core.errors import BadInput
    from ..core.shell import okstra
    from ..logic.reports.rules import validate as check
    from ..services.reportfiles import default_outputs, read_data, render_files

    report = read_data(data)[1]
    problems = check(report)
    if problems:
        raise BadInput(
            f"report data {data} breaks {len(problems)} rule(s), so nothing was rendered:\n"
            + "\n".join(f"  - {p.line()}" for p in problems),
            hint=okstra("report", "validate", data),
        )
    markdown: Path | None
    page: Path | None
    if md is None and html is None:
        markdown, page = default_outputs(data)
    else:
        markdown = Path(md) if md else None
        page = Path(html) if html else None
    done = render_files(report, markdown, page, lang)
    from ..views.report import rendered

    return rendered(done)
