"""What ``git okstra ci check`` writes: text, JSON, JUnit XML, or GitHub annotations with a
step summary. Loaded only by ``ci check``, which runs on every build: stdlib only."""

from __future__ import annotations

from ..core.errors import BadInput
from . import Output

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from ..services.cicheck import CiReport


CI_FORMATS = ("text", "json", "junit", "github")


def checked(report: CiReport, fmt: str, output: str | None) -> Output:
    """``ci check``: the report in ``fmt`` (to ``output``, a file, when given); ``--json``: the
    report itself. Exit 1 when no verdict opens the gate."""
    data = ci_data(report)
    return Output(
        data,
        lambda: ci_write(data, fmt, output),
        code=0 if report.passed else 1,
        error=None if report.passed else data["message"],
    )


def ci_data(report: CiReport) -> dict[str, Any]:
    """The report as ``--json`` and ``--format json`` give it, every format's fields."""
    from ..records.base import to_data
    from .gate import verdict_words

    opening = report.opening
    message = (
        f"{report.commit[:12]} carries an {verdict_words(opening, report.commit)}"
        if opening is not None
        else report.refusal
    )
    return {
        "rev": report.rev,
        "commit": report.commit,
        "tree": report.tree,
        "passed": report.passed,
        "match": report.match,
        "task": report.task,
        "verdict": to_data(opening) if opening is not None else None,
        "rejected": [{"verdict": to_data(r.verdict), "why": r.why} for r in report.rejected],
        "problems": report.problems,
        "notes": report.notes,
        "message": message,
    }


def ci_write(report: dict[str, Any], fmt: str, output: str | None) -> str:
    """Write ``report`` in ``fmt`` to ``output`` (a file) and return what goes on stdout."""
    writers: dict[str, Callable[[dict[str, Any], Path | None], str]] = {
        "text": _write_text,
        "json": _write_json,
        "junit": _write_junit,
        "github": _write_github,
    }
    if not output:  # pathlib (with urllib.parse, fnmatch…) only for a file to write: ~3 ms
        return writers[fmt](report, None)
    from pathlib import Path

    return writers[fmt](report, Path(output))


def _emit(text: str, output: Path | None) -> str:
    if output is None:
        return text
    from ..core.userfiles import write_atomic

    write_atomic(output, text.encode("utf-8"), "--output")
    return ""


def _write_text(report: dict[str, Any], output: Path | None) -> str:
    state = "passed" if report["passed"] else "FAILED"
    return _emit(f"okstra gate {state}: {report['message']}\n", output)


def _write_json(report: dict[str, Any], output: Path | None) -> str:
    from . import dump

    return _emit(dump(report), output)


def _write_junit(report: dict[str, Any], output: Path | None) -> str:
    import xml.etree.ElementTree as ET

    failures = "0" if report["passed"] else "1"
    suites = ET.Element("testsuites", name="okstra", tests="1", failures=failures, errors="0")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="okstra verification gate",
        tests="1",
        failures=failures,
        errors="0",
        skipped="0",
    )
    # The name stays the same on every commit, so a CI's test history follows one test; the
    # commit is a suite property and in the output.
    properties = ET.SubElement(suite, "properties")
    for name in ("rev", "commit", "tree"):
        ET.SubElement(properties, "property", name=name, value=report[name])
    case = ET.SubElement(
        suite, "testcase", classname="okstra.gate", name="accepted whole-task verdict"
    )
    if not report["passed"]:
        failure = ET.SubElement(
            case,
            "failure",
            type="okstra.gate",
            message=f"no accepted whole-task verdict on {report['commit'][:12]}",
        )
        failure.text = report["message"]
    ET.SubElement(case, "system-out").text = report["message"]
    ET.indent(suites)
    return _emit(ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n", output)


def _write_github(report: dict[str, Any], output: Path | None) -> str:
    """``::error``/``::notice`` workflow commands on stdout; Markdown to the step summary."""
    import os  # only here: ci check's text run loads no os (~6M instructions)

    level = "notice" if report["passed"] else "error"
    markdown = _markdown(report)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(markdown)
        except OSError as exc:
            raise BadInput(
                f"$GITHUB_STEP_SUMMARY {summary}: cannot append the summary ({exc.strerror})"
            ) from exc
    _step_outputs(report)
    _emit(markdown, output)
    return f"::{level} title=okstra verification gate::{_gh_escape(report['message'])}\n"


def _step_outputs(report: dict[str, Any]) -> None:
    """The step's outputs (``steps.<id>.outputs.passed`` …) appended to ``$GITHUB_OUTPUT``;
    the message, which can span lines, in GitHub's ``name<<DELIMITER`` form with a delimiter
    it cannot hold."""
    import os

    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    verdict = report["verdict"]
    values = {
        "passed": "true" if report["passed"] else "false",
        "commit": report["commit"],
        "tree": report["tree"],
        "verdict": verdict["verdict"] if verdict else "",
        "task": verdict["taskKey"] if verdict else (report["task"] or ""),
    }
    lines = [f"{name}={value}" for name, value in values.items()]
    delimiter = "okstra_" + os.urandom(8).hex()
    lines += [f"message<<{delimiter}", report["message"], delimiter]
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    except OSError as exc:
        raise BadInput(
            f"$GITHUB_OUTPUT {path}: cannot append the outputs ({exc.strerror})"
        ) from exc


def github_error(message: str) -> str:
    """An error (bad usage, a repository that cannot be read) as a workflow command, so
    ``--format github`` annotates it too."""
    return f"::error title=git okstra ci check::{_gh_escape(message)}\n"


def _gh_escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _markdown(report: dict[str, Any]) -> str:
    head = "passed ✅" if report["passed"] else "failed ❌"
    rows = [
        ("revision", f"`{report['rev']}`"),
        ("commit", f"`{report['commit']}`"),
        ("tree", f"`{report['tree']}`"),
        ("match mode", report["match"]),
    ]
    if report["task"]:
        rows.append(("task", report["task"]))
    verdict = report["verdict"]
    if verdict is not None:
        rows += [
            ("verdict", f"{verdict['verdict']} ({verdict['scope']}) for {verdict['taskKey']}"),
            ("verified commit", f"`{verdict['head']}`"),
            ("recorded", f"{verdict['recordedAt']} by {verdict['recordedBy']}"),
        ]
    lines = [f"## okstra verification gate: {head}", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {_md_cell(value)} |" for name, value in rows]
    lines += ["", report["message"], ""]
    if report["rejected"]:
        lines += ["Verdicts found that do not open the gate:", ""]
        lines += [
            f"- {r['verdict']['verdict']} ({r['verdict']['scope']}) for "
            f"{r['verdict']['taskKey']}: {r['why']}"
            for r in report["rejected"]
        ]
        lines.append("")
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
