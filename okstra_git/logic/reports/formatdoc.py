"""``docs/report-format.md``, generated from ``schemas/final-report.schema.json``: every field
with its type and description, every enum value with its meaning (the schema's
``x-enumDescriptions``), and the rules beyond the schema from their docstrings.

``python -m okstra_git.logic.reports.formatdoc > docs/report-format.md`` rewrites the committed
page; ``tests/logic/test_report_format_doc.py`` fails when it is stale, or when a field or an
enum value of the schema has no description. Pure but for reading the shipped schema.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

SCHEMA = "schemas/final-report.schema.json"
REGENERATE = "python -m okstra_git.logic.reports.formatdoc > docs/report-format.md"
DOCUMENT = "The document"

# The checks `report validate` adds from the task's records, and `verify record` on top
# (okstra_git.logic.reports.consistency): they need the repository, so they are not rules of
# the data alone.
RECORD_RULES = (
    (
        "task-claims",
        "The report is of its task; a final verification's stages are the Stage Map's (or the "
        "one stage), done, with the implementation reports their claims recorded; a stage "
        "report's header.stage is a Stage Map stage.",
    ),
    (
        "open-stages",
        "An implementation report names final-verification as the next step only when no "
        "other stage of the task is still open; until then the task goes on implementing.",
    ),
    (
        "plan-items-carried",
        "An implementation report carries every §5 row the approved plan left open or answered "
        "into a follow-up row of origin open-question that names its id (report init writes "
        "those rows).",
    ),
    (
        "generated-at",
        "header.generatedAt is not more than 5 minutes ahead of the clock (checked with "
        "--no-task too) and not more than 5 minutes before the run started (the run's record; "
        "a stage report: its stage's claim).",
    ),
    (
        "incremental",
        "A run whose record holds an incremental scope decision carries that same decision in "
        "implementationPlanning.incrementalDecision.",
    ),
    (
        "verify-record",
        "verify record: the report is a final-verification report whose verdict, scope and "
        "stages are the ones being recorded.",
    ),
)


def _schema() -> dict[str, Any]:
    from ...core.resources import data_dir

    path = data_dir("schemas") / "final-report.schema.json"
    loaded: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return loaded


def _md(text: str) -> str:
    """Docstring and description text as Markdown: RST's ``x`` as `x`, one line."""
    return " ".join(text.replace("``", "`").split())


def _cell(text: str) -> str:
    return _md(text).replace("|", "\\|")


def _anchor(name: str) -> str:
    return name.lower()


def _ref_name(node: dict[str, Any]) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _type(node: dict[str, Any], defs: dict[str, Any]) -> str:
    """What a field holds, in words, linking to the section of a named definition."""
    name = _ref_name(node)
    if name is not None:
        target = defs[name]
        if "properties" in target:
            return f"[{name}](#{_anchor(name)})"
        return _type({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs)
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" if v is not None else "null" for v in node["enum"])
    kind = node.get("type")
    if kind == "array":
        items = node.get("items", {})
        least = node.get("minItems")
        head = "list" if not least else f"list (at least {least})"
        return f"{head} of {_type(items, defs)}"
    if kind == "string":
        if "x-message" in node and ("pattern" in node or "minLength" in node):
            return f"text ({_md(node['x-message'])})"
        return "text"
    if kind == "integer":
        bounds = [
            f"≥ {node['minimum']}" if "minimum" in node else "",
            f"≤ {node['maximum']}" if "maximum" in node else "",
        ]
        shown = " ".join(b for b in bounds if b)
        return f"integer {shown}".strip()
    if kind == "number":
        return "number ≥ 0" if node.get("minimum") == 0 else "number"
    if kind == "boolean":
        return "true or false"
    if kind == "object":
        return "object"
    return "value"


def _description(node: dict[str, Any], defs: dict[str, Any], where: str) -> str:
    said = node.get("description")
    name = _ref_name(node)
    if said is None and name is not None:
        said = defs[name].get("description")
    if not said:
        raise ValueError(f"{SCHEMA}: {where} has no description")
    return _md(said)


def _values(node: dict[str, Any], defs: dict[str, Any], where: str) -> list[str]:
    """The enum values of a field with their meanings, as list lines (none for a non-enum)."""
    name = _ref_name(node)
    target = defs[name] if name is not None else node
    if "enum" not in target:
        return []
    meanings = target.get("x-enumDescriptions") or node.get("x-enumDescriptions") or {}
    lines = []
    for value in target["enum"]:
        meaning = meanings.get(value)
        if not meaning:
            raise ValueError(f"{SCHEMA}: {where} value {value!r} has no x-enumDescriptions entry")
        lines.append(f"`{value}` — {_md(meaning)}")
    return lines


def _table(
    title: str, node: dict[str, Any], defs: dict[str, Any], where: str, out: list[str]
) -> list[tuple[str, dict[str, Any], str]]:
    """One object's section; returns the anonymous nested objects to describe after it."""
    required = set(node.get("required", []))
    nested: list[tuple[str, dict[str, Any], str]] = []
    out += ["| Field | Holds | Required | Meaning |", "|---|---|---|---|"]
    for field, sub in node["properties"].items():
        at = f"{where}.{field}"
        holds = _type(sub, defs)
        items = sub.get("items", {}) if sub.get("type") == "array" else {}
        inner = sub if "properties" in sub else items if "properties" in items else None
        if inner is not None:
            label = (field if title == DOCUMENT else f"{title}.{field}") + (
                "[]" if inner is items else ""
            )
            holds = holds.replace("object", f"[{label}](#{_anchor(_slug(label))})")
            nested.append((label, inner, at))
        meaning = _description(sub, defs, at)
        values = _values(items if items and "enum" in items else sub, defs, at)
        if values:
            meaning += "<br>" + "<br>".join(values)
        out.append(
            f"| `{field}` | {_cell(holds)} | {'yes' if field in required else ''} | "
            f"{_cell(meaning)} |"
        )
    return nested


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", label.lower()).replace(" ", "-")


def _order(schema: dict[str, Any]) -> list[str]:
    """The named definitions that hold fields, in the order the document first refers to them."""
    defs = schema["$defs"]
    seen: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            name = _ref_name(node)
            if name is not None and name not in seen and "properties" in defs[name]:
                seen.append(name)
                walk(defs[name])
            for key, value in node.items():
                if key != "$defs":
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema)
    return seen


def render() -> str:
    """The whole page."""
    from .rules import PROMPT, RULES

    schema = _schema()
    defs = schema["$defs"]
    out = [
        "# Report data format (`data.json`)",
        "",
        f"<!-- Generated from {SCHEMA} by `{REGENERATE}`; do not edit by hand "
        "(tests/logic/test_report_format_doc.py fails when this page is stale). -->",
        "",
        _md(schema["description"]),
        "",
        "Report data is what a run's report writer produces: one JSON object per run, "
        "`runs/<type>/reports/final-report-<type>-<seq>.data.json` in the task's workspace. The "
        "commands that take it:",
        "",
        "- `git okstra report init KEY [--type TYPE] [--stage N] [--verdict V] [--out FILE]` "
        "starts it from the task's records: the run number, the Stage Map, the stages still "
        "open, the plan's unresolved §5 rows, the verified stages and their reports, and with "
        "`--verdict` that verdict in every field the rules tie together. It refuses, with the "
        "reason, where no valid report can exist yet (a final verification with no done stage). "
        f"Every text beginning `{PROMPT}` is a prompt to replace: `report validate` refuses "
        "the report, naming each one, until it is written.",
        "- `git okstra report validate DATA` checks the schema, every rule below and, inside "
        "the repository, the task's records; `git okstra report render DATA` writes the "
        "canonical Markdown and the HTML view.",
        "- `git okstra stage done KEY --stage N --report FILE` takes a stage's report: Markdown "
        "(stored with the done claim as `report.md`) or report data of an implementation run "
        "(`*.json`, checked like `report validate`, stored as `report.json`). Every view "
        "(`verify target`, the directive of a dependent stage, `--json`) shows it readable: "
        "Markdown as written, report data rendered to its Markdown. "
        "`git okstra report init KEY --type implementation --stage N` starts one.",
        "- `git okstra run finish … --report FILE` and `git okstra verify record KEY --report "
        "DATA` check it the same way before they record anything.",
        "",
        "## Rules beyond the schema",
        "",
        "Each problem `report validate` prints names the field (a JSON pointer) and its rule.",
        "",
        "| Rule | What it checks |",
        "|---|---|",
        "| `schema` | The JSON Schema below: types, required fields, enum values, patterns. |",
    ]
    for rule in RULES:
        doc = rule.__doc__
        if not doc:
            raise ValueError(f"rule {rule.__name__} has no docstring to document it")
        name = rule.__name__.lstrip("_").replace("_", "-")
        out.append(f"| `{name}` | {_cell(doc)} |")
    out += [
        "",
        "With the task's records (inside the repository; `report validate --no-task` skips them):",
        "",
        "| Rule | What it checks |",
        "|---|---|",
        *(f"| `{name}` | {_cell(text)} |" for name, text in RECORD_RULES),
        "",
        "## Fields",
        "",
        "### The document",
        "",
    ]
    pending = _table(DOCUMENT, schema, defs, "", out)
    for name in _order(schema):
        node = defs[name]
        out += ["", f"### {name}", ""]
        if node.get("description"):
            out += [_md(node["description"]), ""]
        pending += _table(name, node, defs, f"#/$defs/{name}", out)
    while pending:
        label, node, at = pending.pop(0)
        out += ["", f"### {label}", ""]
        pending += _table(label, node, defs, at, out)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
