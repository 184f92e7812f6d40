"""What ``report validate``, ``report init`` and ``report render`` print. ``report validate``
and ``report render`` need no repository: nothing here loads the git layer."""

from __future__ import annotations

from ..core.shell import okstra
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..core.keys import TaskKey
    from ..logic.nextstep import Step
    from ..logic.reports.rules import Problem
    from ..services.reportfiles import Rendered
    from ..services.reports import RecordsChecked


NOT_CHECKED = {
    "asked": "task records not checked (--no-task)",
    "bad-key": "task records not checked: header.taskKey is not a task key",
    "no-repository": "task records not checked: not in a git repository",
    "no-task": "task records not checked: no task {key} in this repository",
}
"""Why ``report validate`` did not check the report against its task's records."""


def records_note(checked: RecordsChecked) -> str:
    """``report validate``'s ``taskRecords``: what its report was checked against, or why not."""
    if checked.skipped is None:
        return f"checked against the records of {checked.key}"
    return NOT_CHECKED[checked.skipped].format(key=checked.key)


def validated(
    data: str,
    report: dict[str, Any],
    problems: list[Problem],
    checked: RecordsChecked,
    then: str | None = None,
    step: Step | None = None,
) -> Output:
    """Valid with what the report is of, or every problem with its pointer and rule (exit 1);
    how the task's records were checked; and, valid, what follows (:func:`_after`)."""
    note = records_note(checked)
    header = report.get("header")
    if not isinstance(header, dict):
        header = {}
    what = f"{header.get('taskType')} {header.get('seq')} of {header.get('taskKey')}"
    lines = [p.render(data) for p in problems]
    summary = f"{data}: {len(problems)} problem(s)" if problems else f"{data}: valid — {what}"
    result = {
        "file": data,
        "valid": not problems,
        "problems": [
            {"pointer": p.pointer, "rule": p.rule, "message": p.message} for p in problems
        ],
        "taskRecords": note,
    }
    text = "\n".join([*lines, f"{summary}; {note}"])
    if problems:
        return Output(result, text, code=1, error="\n".join([f"{summary}:", *lines]))
    after = _after(then, step)
    result.update(then=then, next=step.to_data() if step is not None else None)
    return Output(result, "\n".join([text, *after]))


def _validate_line(path: Path, step: Step | None) -> str:
    """``report validate PATH``, in the task's clone when there is one (its records are what
    it checks the data against)."""
    if step is None:
        return okstra("report", "validate", path)
    from ..logic.nextstep import line, okstra_argv

    return line(okstra_argv("report", "validate", path), step.cwd)


def _after(then: str | None, step: Step | None) -> list[str]:
    """The line that records the report (the task's next step, given this data as its
    ``--report``), else the task's next step as it is."""
    if then is not None:
        return [f"then record it: {then}"]
    if step is not None:
        return [f"next ({step.kind}, {step.who}): {step.command or step.why}"]
    return []


def started(
    task_key: TaskKey,
    path: Path,
    data: dict[str, Any],
    prompts: list[str],
    stage: int | None,
    verdict: str | None,
    out: str | None,
    then: str | None = None,
    step: Step | None = None,
) -> Output:
    """Where the report data was written, the prompts left to fill, how to check it (a
    final verification started without its verdict: how to start it again with one) and what
    follows (:func:`_after`)."""
    header = data["header"]
    what = f"{header['taskType']} {header['seq']}" + (
        f" stage {header['stage']}" if "stage" in header else ""
    )
    lines = [
        f"wrote {path} ({what} of {task_key})",
        f"fill in its {len(prompts)} prompt(s) (text beginning 'Replace:'): {', '.join(prompts)}",
        f"then check it: {_validate_line(path, step)}",
    ]
    if header["taskType"] == "final-verification" and verdict is None:
        again = [
            "report",
            "init",
            task_key,
            "--verdict",
            "V",
            *(("--out", out) if out else ()),
            "--force",
        ]
        if stage is not None:
            again[4:4] = ["--stage", str(stage)]
        lines.insert(
            1,
            "its verdict is blocked until you decide it: start it again with the verdict "
            f"(accepted, conditional-accept or blocked): {okstra(*again)}",
        )
    return Output(
        {
            "path": str(path),
            "taskType": header["taskType"],
            "seq": header["seq"],
            "stage": header.get("stage"),
            "prompts": prompts,
            "data": data,
            "then": then,
            "next": step.to_data() if step is not None else None,
        },
        "\n".join([*lines, *_after(then, step)]),
    )


def rendered(done: Rendered) -> Output:
    """The Markdown and HTML files written."""
    written = [str(p) for p in (done.markdown, done.html) if p is not None]
    return Output(
        {
            "markdown": str(done.markdown) if done.markdown else None,
            "html": str(done.html) if done.html else None,
        },
        "\n".join(f"wrote {p}" for p in written),
    )
