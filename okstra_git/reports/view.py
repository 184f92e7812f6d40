"""The report as both views lay it out: sections, and tables whose short code fields stack in
one meta cell (seed 000, compact tables) beside wide prose columns. Built once from valid
report data; the Markdown and HTML templates only choose how to write each cell. Pure."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from ..shell import okstra
from .labels import labels as labels_of
from .rules import FINAL_VERIFICATION, IMPLEMENTATION_PLANNING, report_ids

_BR = re.compile(r"\r\n|\r|\n|&lt;br\s*/?&gt;", re.IGNORECASE)


@dataclass(frozen=True)
class Meta:
    """A meta cell: a bold headline, then ``label: value`` lines."""

    headline: str
    """The row's id (or agent, origin)."""
    lines: tuple[tuple[str, str, bool], ...]
    """``(label, value, is_code)``; code values are shown as code."""


Cell = Meta | str


@dataclass(frozen=True)
class Row:
    """One table row."""

    id: str | None
    """The anchored id of the row, if it has one."""
    cells: tuple[Cell, ...]
    """One cell per column."""


@dataclass(frozen=True)
class Table:
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


def _table(
    anchor: str,
    title: str,
    columns: tuple[str, ...],
    rows: list[Row],
    empty: str,
    audit: bool = True,
) -> Table:
    return Table(anchor, title, columns, tuple(rows), empty, audit)


def build(data: dict[str, Any], language: str) -> dict[str, Any]:
    """Everything the templates print, from valid report data."""
    L = labels_of(language)
    header = data["header"]
    task_type = header["taskType"]
    key = header["taskKey"]
    evidence = data.get("evidence", {})
    tables: dict[str, Table] = {}

    tables["summary"] = _table(
        "summary",
        L["summary"],
        (L["record"], L["oneLine"]),
        [
            Row(
                r["id"],
                (
                    _meta(
                        r["id"],
                        (L["ticket"], r.get("ticketId"), True),
                        (L["source"], r["source"], False),
                    ),
                    r["text"],
                ),
            )
            for r in data.get("summary", [])
        ],
        L["empty.summary"],
        audit=False,
    )
    tables["consensus"] = _table(
        "consensus",
        L["consensus"],
        (L["record"], L["statement"], L["evidenceColumn"]),
        [
            Row(
                r["id"],
                (
                    _meta(
                        r["id"],
                        (L["ticket"], r.get("ticketId"), True),
                        (L["sourceItems"], r["sourceItems"], False),
                    ),
                    r["statement"],
                    r["evidence"],
                ),
            )
            for r in data.get("consensus", [])
        ],
        L["empty.consensus"],
    )
    tables["differences"] = _table(
        "differences",
        L["differences"],
        (L["record"], L["disagreement"], L["evidenceColumn"]),
        [
            Row(
                r["id"],
                (
                    _meta(
                        r["id"],
                        (L["ticket"], r.get("ticketId"), True),
                        *((p["itemId"], p["position"], False) for p in r["workersPosition"]),
                    ),
                    r["disagreement"],
                    r["evidence"],
                ),
            )
            for r in data.get("differences", [])
        ],
        L["empty.differences"],
    )
    tables["primary"] = _table(
        "primary-evidence",
        L["primaryEvidence"],
        (L["record"], L["evidenceColumn"]),
        [
            Row(
                r["id"],
                (
                    _meta(
                        r["id"],
                        (L["ticket"], r.get("ticketId"), True),
                        (L["sourceItems"], r["sourceItems"], False),
                        (L["sourceLine"], r["source"], True),
                    ),
                    r["evidence"],
                ),
            )
            for r in evidence.get("primary", [])
        ],
        L["empty.primary"],
    )
    tables["secondary"] = _table(
        "secondary-evidence",
        L["secondaryEvidence"],
        (L["record"], L["hypothesis"], L["sourceConfidence"]),
        [
            Row(
                r["id"],
                (
                    _meta(r["id"], (L["ticket"], r.get("ticketId"), True)),
                    r["hypothesis"],
                    r["sourceConfidence"],
                ),
            )
            for r in evidence.get("secondary", [])
        ],
        L["empty.secondary"],
    )
    tables["risks"] = _table(
        "risks",
        L["risks"],
        (L["record"], L["item"], L["riskIfIgnored"], L["mitigationOwner"]),
        [
            Row(
                r["id"],
                (
                    _meta(r["id"], (L["ticket"], r.get("ticketId"), True)),
                    r["item"],
                    r["riskIfIgnored"],
                    r["mitigationOwner"],
                ),
            )
            for r in data.get("risks", [])
        ],
        L["empty.risks"],
        audit=False,
    )
    tables["followUps"] = _table(
        "follow-ups",
        L["followUps"],
        (L["record"], L["taskScope"], L["deferReason"]),
        [
            Row(
                None,
                (
                    _meta(
                        r["origin"],
                        (L["newTaskId"], r["newTaskId"], True),
                        (L["suggestedTaskType"], r["suggestedTaskType"], True),
                        (L["autoSpawn"], r["autoSpawn"], True),
                        (L["priority"], r["priority"], True),
                    ),
                    r["scope"],
                    r["reason"],
                ),
            )
            for r in data["followUpTasks"]
        ],
        L["empty.followUps"],
        audit=False,
    )
    tables["execution"] = _table(
        "execution-status",
        L["executionStatus"],
        (L["record"], L["keyFindings"]),
        [Row(None, (_execution_meta(r, L), r["summary"])) for r in data.get("executionStatus", [])],
        L["empty.execution"],
    )
    verification = data.get("finalVerification") if task_type == FINAL_VERIFICATION else None
    if verification is not None:
        tables["blockers"] = _table(
            "acceptance-blockers",
            L["acceptanceBlockers"],
            (L["record"], L["statement"], L["evidenceColumn"]),
            [
                Row(
                    r["id"],
                    (
                        _meta(
                            r["id"],
                            (L["severity"], r["severity"], True),
                            (L["followUpPhase"], r.get("followUpPhase"), True),
                            (L["sourceItems"], r.get("sourceItems"), False),
                        ),
                        r["statement"],
                        r["evidence"],
                    ),
                )
                for r in verification["acceptanceBlockers"]
            ],
            L["empty.blockers"],
            audit=False,
        )
        tables["residual"] = _table(
            "residual-risks",
            L["residualRisks"],
            (L["record"], L["statement"], L["evidenceColumn"], L["trigger"]),
            [
                Row(
                    r["id"],
                    (
                        _meta(
                            r["id"],
                            (L["severity"], r["severity"], True),
                            (L["sourceItems"], r.get("sourceItems"), False),
                        ),
                        r["statement"],
                        r["evidence"],
                        r["trigger"],
                    ),
                )
                for r in verification["residualRisks"]
            ],
            L["empty.residual"],
            audit=False,
        )
    planning = data.get("implementationPlanning") if task_type == IMPLEMENTATION_PLANNING else None
    if planning is not None:
        items = planning.get("planBodyVerification", {}).get("planItems", [])
        tables["planItems"] = _table(
            "plan-items",
            L["planItems"],
            (L["record"], L["statement"], L["evidenceColumn"]),
            [
                Row(
                    r["id"],
                    (
                        _meta(
                            r["id"],
                            (L["stage"], r.get("stage"), False),
                            (L["kind"], r.get("kind"), True),
                            (L["verdict"], r["verdict"], True),
                            (L["carriedFrom"], r.get("carriedForwardFromSeq"), True),
                            (L["sourceItems"], r.get("sourceItems"), False),
                        ),
                        r["statement"],
                        r.get("evidence", ""),
                    ),
                )
                for r in items
            ],
            L["empty.planItems"],
        )
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
        "ids": sorted(_ids(data), key=len, reverse=True),
    }


_C5 = ("id", "ticketId", "kind", "statement", "expectedForm", "blocks", "status", "userInput")


def _execution_meta(row: dict[str, Any], L: dict[str, str]) -> Meta:
    tokens = None
    if "rawTokens" in row or "billableTokens" in row:
        tokens = f"{row.get('rawTokens', '-')} / {row.get('billableTokens', '-')}"
    cost = f"${row['costUsd']:.2f}" if "costUsd" in row else None
    duration = _duration(row["durationSeconds"]) if "durationSeconds" in row else None
    return _meta(
        row["agent"],
        (L["role"], row["role"], False),
        (L["model"], row.get("model"), True),
        (L["status"], row["status"], True),
        (L["tokens"], tokens, False),
        (L["cost"], cost, False),
        (L["duration"], duration, False),
    )


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


def inline_html(text: str, ids: list[str] | None = None) -> str:
    """``text`` as HTML: everything escaped, line breaks (newlines and ``<br>`` written in the
    value) kept as ``<br>``, and in-report ids linked to their rows."""
    parts = _BR.split(html.escape(str(text), quote=True))
    if ids:
        pattern = re.compile(r"(?<![\w.:/#-])(" + "|".join(map(re.escape, ids)) + r")(?![\w-])")
        parts = [pattern.sub(r'<a href="#\1">\1</a>', part) for part in parts]
    return "<br>".join(parts)
