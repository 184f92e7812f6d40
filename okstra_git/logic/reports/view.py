"""The report as both views lay it out: sections, and tables whose short code fields stack in
one meta cell (seed 000, compact tables) beside wide prose columns. Built once from valid
report data; the Markdown and HTML templates only choose how to write each cell. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...core.shell import okstra
from ...core.values import Value
from ..mdinline import markdown_html
from .labels import labels as labels_of
from .rules import FINAL_VERIFICATION, IMPLEMENTATION_PLANNING, object_rows, report_ids


class Meta(Value):
    """A meta cell: a bold headline, then ``label: value`` lines."""

    headline: str
    """The row's id (or agent, origin)."""
    lines: tuple[tuple[str, str, bool], ...]
    """``(label, value, is_code)``; code values are shown as code."""


Cell = Meta | str


class Row(Value):
    """One table row."""

    id: str | None
    """The anchored id of the row, if it has one."""
    cells: tuple[Cell, ...]
    """One cell per column."""


class Table(Value):
    """A compact table: a meta column, then prose columns."""

    anchor: str
    """Section anchor in the HTML view."""
    title: str
    """Its heading."""
    columns: tuple[str, ...]
    """Column headers."""
    rows: tuple[Row, ...]
    """Rows; none means the empty line is printed instead."""
    empty: str
    """The one-line placeholder for an empty table."""
    audit: bool = True
    """Audit material, hidden in the HTML reader mode."""


def _meta(headline: str, *lines: tuple[str, Any, bool]) -> Meta:
    """A meta cell, leaving out lines whose value is missing or empty."""
    kept = tuple(
        (label, ", ".join(map(str, value)) if isinstance(value, list) else str(value), code)
        for label, value, code in lines
        if value not in (None, "", [])
    )
    return Meta(headline, kept)


class _Spec(Value):
    """How one compact table is laid out from report data."""

    name: str
    """Its key in the tables the templates get, and its title's label."""
    anchor: str
    """Section anchor in the HTML view."""
    path: tuple[str, ...]
    """Where its rows are in the data."""
    meta: tuple[tuple[str, str, bool], ...]
    """Meta cell lines: ``(label key, field, is_code)``; lists are joined with commas."""
    prose: tuple[tuple[str, str], ...]
    """Wide columns: ``(label key, field)``."""
    empty: str
    """Label key of the one-line placeholder."""
    headline: str = "id"
    """The field in bold at the top of the meta cell."""
    audit: bool = True
    """Audit material, hidden in the HTML reader mode."""
    extra: Callable[[dict[str, Any], dict[str, str]], list[tuple[str, Any, bool]]] | None = None
    """More meta lines computed from the row."""


def _positions(row: dict[str, Any], L: dict[str, str]) -> list[tuple[str, Any, bool]]:
    return [(p["itemId"], p["position"], False) for p in row["workersPosition"]]


def _execution(row: dict[str, Any], L: dict[str, str]) -> list[tuple[str, Any, bool]]:
    tokens = None
    if "rawTokens" in row or "billableTokens" in row:
        tokens = f"{row.get('rawTokens', '-')} / {row.get('billableTokens', '-')}"
    cost = f"${row['costUsd']:.2f}" if "costUsd" in row else None
    duration = _duration(row["durationSeconds"]) if "durationSeconds" in row else None
    return [
        (L["tokens"], tokens, False),
        (L["cost"], cost, False),
        (L["duration"], duration, False),
    ]


_TICKET = ("ticket", "ticketId", True)
_SPECS = (
    _Spec("summary", "summary", ("summary",), (_TICKET, ("source", "source", False)),
          (("oneLine", "text"),), "empty.summary", audit=False),
    _Spec("consensus", "consensus", ("consensus",),
          (_TICKET, ("sourceItems", "sourceItems", False)),
          (("statement", "statement"), ("evidenceColumn", "evidence")), "empty.consensus"),
    _Spec("differences", "differences", ("differences",), (_TICKET,),
          (("disagreement", "disagreement"), ("evidenceColumn", "evidence")),
          "empty.differences", extra=_positions),
    _Spec("primaryEvidence", "primary-evidence", ("evidence", "primary"),
          (_TICKET, ("sourceItems", "sourceItems", False), ("sourceLine", "source", True)),
          (("evidenceColumn", "evidence"),), "empty.primary"),
    _Spec("secondaryEvidence", "secondary-evidence", ("evidence", "secondary"), (_TICKET,),
          (("hypothesis", "hypothesis"), ("sourceConfidence", "sourceConfidence")),
          "empty.secondary"),
    _Spec("risks", "risks", ("risks",), (_TICKET,),
          (("item", "item"), ("riskIfIgnored", "riskIfIgnored"),
           ("mitigationOwner", "mitigationOwner")), "empty.risks", audit=False),
    _Spec("acceptanceBlockers", "acceptance-blockers", ("finalVerification", "acceptanceBlockers"),
          (("severity", "severity", True), ("followUpPhase", "followUpPhase", True),
           ("sourceItems", "sourceItems", False)),
          (("statement", "statement"), ("evidenceColumn", "evidence")), "empty.blockers",
          audit=False),
    _Spec("residualRisks", "residual-risks", ("finalVerification", "residualRisks"),
          (("severity", "severity", True), ("sourceItems", "sourceItems", False)),
          (("statement", "statement"), ("evidenceColumn", "evidence"), ("trigger", "trigger")),
          "empty.residual", audit=False),
    _Spec("planItems", "plan-items",
          ("implementationPlanning", "planBodyVerification", "planItems"),
          (("stage", "stage", False), ("kind", "kind", True), ("verdict", "verdict", True),
           ("carriedFrom", "carriedForwardFromSeq", True), ("sourceItems", "sourceItems", False)),
          (("statement", "statement"), ("evidenceColumn", "evidence")), "empty.planItems"),
    _Spec("followUps", "follow-ups", ("followUpTasks",),
          (("newTaskId", "newTaskId", True), ("suggestedTaskType", "suggestedTaskType", True),
           ("autoSpawn", "autoSpawn", True), ("priority", "priority", True)),
          (("taskScope", "scope"), ("deferReason", "reason")), "empty.followUps",
          headline="origin", audit=False),
    _Spec("executionStatus", "execution-status", ("executionStatus",),
          (("role", "role", False), ("model", "model", True), ("status", "status", True)),
          (("keyFindings", "summary"),), "empty.execution", headline="agent", extra=_execution),
)  # fmt: skip


def _table(spec: _Spec, data: dict[str, Any], L: dict[str, str]) -> Table:
    rows = []
    for _, row in object_rows(data, *spec.path):
        lines = [(L[label], row.get(field), code) for label, field, code in spec.meta]
        if spec.extra is not None:
            lines += spec.extra(row, L)
        prose = tuple(str(row.get(field, "")) for _, field in spec.prose)
        rows.append(Row(row.get("id"), (_meta(str(row[spec.headline]), *lines), *prose)))
    columns = (L["record"], *(L[label] for label, _ in spec.prose))
    return Table(spec.anchor, L[spec.name], columns, tuple(rows), L[spec.empty], spec.audit)


def build(data: dict[str, Any], language: str) -> dict[str, Any]:
    """Everything the templates print, from valid report data."""
    L = labels_of(language)
    header = data["header"]
    task_type = header["taskType"]
    key = header["taskKey"]
    tables = {spec.name: _table(spec, data, L) for spec in _SPECS}
    verification = data.get("finalVerification") if task_type == FINAL_VERIFICATION else None
    planning = data.get("implementationPlanning") if task_type == IMPLEMENTATION_PLANNING else None
    critic = data.get("convergence", {}).get("critic")
    return {
        "data": data,
        "L": L,
        "language": language,
        "header": header,
        "task_type": task_type,
        "tables": tables,
        "reader": _reader(data, L),
        "verdict": data["finalVerdict"],
        "verification": verification,
        "planning": planning,
        "critic": _critic_line(critic, L) if critic else None,
        "stages": _stages(planning, L) if planning else [],
        "clarification": data["clarificationItems"],
        "c5_groups": _by_ticket(data["clarificationItems"]),
        "c5_columns": [L[f"c5.{c}"] for c in _C5],
        "carry_in": data.get("clarificationCarryIn"),
        "incremental": (planning or {}).get("incrementalDecision"),
        "commands": {
            "approve": okstra("plan", "approve", key),
            "resume": okstra("clarify", "resume", key),
        },
        "ids": sorted(_ids(data)),
    }


_C5 = ("id", "ticketId", "kind", "statement", "expectedForm", "blocks", "status", "userInput")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m {rest}s" if minutes else f"{rest}s"


def _reader(data: dict[str, Any], L: dict[str, str]) -> list[tuple[str, str, bool]]:
    """The reader summary's lines ``(label, value, is_code)``; the verdict card stands in for a
    report written without one (seed 001)."""
    summary = data.get("readerSummary")
    if summary is None:
        card = data["verdictCard"]
        return [
            (L["verdictToken"], card["verdictToken"], True),
            (L["direction"], card["direction"], True),
            (L["nextStep"], card["nextStep"], False),
        ]
    return [
        (L[field], summary[field], field == "recommendedCommand")
        for field in ("decision", "humanAction", "blockers", "skippableAudit", "recommendedCommand")
    ]


def _critic_line(critic: dict[str, Any], L: dict[str, str]) -> str:
    if not critic.get("enabled"):
        return f"{L['critic']}: {L['criticOff']}"
    who = " / ".join(str(critic[k]) for k in ("provider", "model") if critic.get(k))
    head = f"{L['critic']} ({', '.join(p for p in (critic.get('mode'), who) if p)})"
    counts = ("candidatesProposed", "confirmedBlockers", "downgradedToResidual")
    if all(k in critic for k in counts):
        proposed, confirmed, downgraded = (critic[k] for k in counts)
        return f"{head}: " + L["criticCounts"].format(
            proposed=proposed, confirmed=confirmed, downgraded=downgraded
        )
    return head


def _stages(planning: dict[str, Any], L: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "number": s["stage"],
            "title": s["title"],
            "effective": s["effectiveSteps"],
            "depends": ", ".join(map(str, s["dependsOn"])) or L["none"],
            "files": s["predictedFiles"],
            "steps": s["steps"],
        }
        for s in planning["stageMap"]
    ]


def _by_ticket(items: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """§5 rows grouped by ticket, groups and rows in the order they first appear."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        groups.setdefault(item["ticketId"], []).append(item)
    return list(groups.items())


def _ids(data: dict[str, Any]) -> set[str]:
    return {row_id for _, row_id in report_ids(data)}


# ---------------------------------------------------------------------------------------------
# Writing one value in each view


def markdown_code(text: str) -> str:
    """``text`` as one Markdown code span, fenced past any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# A word that could be a row id, not inside another word, path, entity or worker:item pair.
_ID_WORD = re.compile(r"(?<![\w.:/#&-])([A-Za-z](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?)(?![\w-])")


def id_links(ids: list[str]) -> Callable[[str], str] | None:
    """A function linking the in-report ids in escaped text to their rows (whole words)."""
    known = set(ids)
    if not known:
        return None

    def link(match: re.Match[str]) -> str:
        word = match.group(1)
        return f'<a href="#{word}">{word}</a>' if word in known else word

    return lambda text: _ID_WORD.sub(link, text)


def inline_html(text: str, links: Callable[[str], str] | None = None) -> str:
    """``text`` as HTML: its inline Markdown (code spans, emphasis, safe links) rendered and
    everything else escaped (:func:`~okstra_git.logic.mdinline.markdown_html`), line breaks
    (newlines and ``<br>`` written in the value) kept as ``<br>``, and the ids ``links`` knows
    linked to their rows where the text is not code or a link already."""
    return markdown_html(str(text), links)
