"""The critic pass (SPEC §10; seed 000, 2026-06-04/05 designs). Pure: plain data, no git.

A run opts into a critic at set-up (``convergence.critic``: enabled, provider, model). In the
finding phases the critic hunts for what the workers missed (``coverage``); in
final-verification it is the acceptance devil's advocate, proposing candidate blockers that
:func:`merge` confirms or downgrades — never drops.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from .errors import BadInput
from .providers import DEFAULT_MODEL, MODELS, PROVIDERS
from .shell import okstra

CRITIC_PHASES = (
    "requirements-discovery",
    "error-analysis",
    "implementation-planning",
    "final-verification",
)
"""Phases with a critic pass: coverage for the finding phases, devil's advocate for the last."""

COVERAGE = "coverage"
DEVILS_ADVOCATE = "acceptance-devils-advocate"


def critic_mode(task_type: str) -> str:
    return DEVILS_ADVOCATE if task_type == "final-verification" else COVERAGE


def critic_block(provider: str, model: str, task_type: str) -> dict[str, Any]:
    """An enabled ``convergence.critic`` block for a run of ``task_type``."""
    return {"enabled": True, "provider": provider, "model": model, "mode": critic_mode(task_type)}


def parse_critic(text: str, task_type: str) -> dict[str, Any]:
    """``PROVIDER[:MODEL]`` (``run start --critic``) as a ``convergence.critic`` block, or
    BadInput naming what is wrong."""
    if task_type not in CRITIC_PHASES:
        raise BadInput(
            f"--critic: {task_type} runs have no critic pass; it applies to "
            f"{', '.join(CRITIC_PHASES)}"
        )
    provider, _, model = text.partition(":")
    if provider not in PROVIDERS:
        raise BadInput(f"--critic {text!r}: the provider must be one of {', '.join(PROVIDERS)}")
    model = model or DEFAULT_MODEL
    if model != DEFAULT_MODEL and model not in MODELS[provider]:
        raise BadInput(
            f"--critic {text!r}: a {provider} model is one of {', '.join(MODELS[provider])} "
            "(or leave it out for the phase's default)"
        )
    return critic_block(provider, model, task_type)


# ---------------------------------------------------------------------------------------------
# Confirm or downgrade (final-verification)

VERDICT_ORDER = ("accepted", "conditional-accept", "blocked")
"""Verdicts from the most to the least favourable; a merge never moves a verdict left."""
DIRECTION = {"accepted": "approve", "conditional-accept": "hold", "blocked": "reject"}
DEFAULT_TRIGGER = (
    "a verifier reproduces it or cites evidence for it: it then becomes an acceptance blocker"
)


@dataclass(frozen=True)
class MergeSummary:
    """What a merge did, as recorded in ``convergence.critic``."""

    proposed: int
    confirmed: int
    downgraded: int
    verdict_before: str
    verdict_after: str
    blockers: tuple[str, ...]
    """Ids of the acceptance blockers the critic's candidates confirmed (new or existing)."""
    risks: tuple[str, ...]
    """Ids of the residual risks the unconfirmed candidates became."""


def _row_stating(rows: list[dict[str, Any]], statement: str) -> dict[str, Any] | None:
    """The row saying the same thing (case and spacing aside), if any."""

    def key(text: object) -> str:
        return " ".join(str(text).casefold().split())

    return next((r for r in rows if key(r.get("statement")) == key(statement)), None)


def _ids_in(value: Any) -> set[str]:
    """Every ``id`` in the report: ids are unique across the whole report (the HTML anchors)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if isinstance(value.get("id"), str):
            found.add(value["id"])
        for inner in value.values():
            found |= _ids_in(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _ids_in(inner)
    return found


def _next_id(prefix: str, taken: set[str]) -> str:
    numbers = [int(m.group(1)) for t in taken if (m := re.fullmatch(rf"{prefix}-(\d+)", t))]
    new = f"{prefix}-{max(numbers, default=0) + 1:03d}"
    taken.add(new)
    return new


def _add_sources(row: dict[str, Any], sources: list[str]) -> None:
    have = row.get("sourceItems")
    have = list(have) if isinstance(have, list) else []
    row["sourceItems"] = have + [s for s in sources if s not in have]


def merge(
    report: dict[str, Any], candidates: dict[str, Any], confirmations: dict[str, Any]
) -> tuple[dict[str, Any], MergeSummary]:
    """The report with every candidate confirmed into an acceptance blocker (severity kept) or
    downgraded into a residual risk with its trigger — never dropped — and the verdict
    re-derived (SPEC §10). A candidate restating a row already there adds its source to that
    row instead of a second row, so merging twice gives the same report.

    ``candidates`` and ``confirmations`` are the checked documents of
    ``critic-candidates.schema.json`` and ``critic-confirmations.schema.json``.
    """
    data = copy.deepcopy(report)
    header = data.get("header")
    task_type = header.get("taskType") if isinstance(header, dict) else None
    if task_type != "final-verification":
        raise BadInput(
            f"--report: header.taskType is {task_type!r}; the acceptance critic merges into a "
            "final-verification report"
        )
    verification = data.get("finalVerification")
    if not isinstance(verification, dict):
        raise BadInput("--report: finalVerification is missing or not an object")
    blockers = verification.setdefault("acceptanceBlockers", [])
    risks = verification.setdefault("residualRisks", [])
    for name, rows in (("acceptanceBlockers", blockers), ("residualRisks", risks)):
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise BadInput(f"--report: finalVerification.{name} must be a list of objects")
    before = _verdict(data)

    known = {c["id"] for c in candidates["candidates"]}
    by_candidate: dict[str, list[dict[str, Any]]] = {}
    for entry in confirmations["confirmations"]:
        if entry["candidate"] not in known:
            raise BadInput(
                f"--confirmations: candidate {entry['candidate']!r} is not among the critic's "
                f"candidates ({', '.join(sorted(known)) or 'none'})"
            )
        by_candidate.setdefault(entry["candidate"], []).append(entry)
    if len(known) != len(candidates["candidates"]):
        raise BadInput("--candidates: candidate ids must be unique")

    critic = _critic_summary_base(data, candidates)
    worker = f"{critic.get('provider', 'critic')}-critic"
    taken = _ids_in(data)
    confirmed_ids: list[str] = []
    risk_ids: list[str] = []
    for candidate in candidates["candidates"]:
        entries = by_candidate.get(candidate["id"], [])
        agreeing = [e for e in entries if e["confirmed"]]
        sources = [f"{worker}:{candidate['id']}"] + [e["by"] for e in agreeing if "by" in e]
        existing = _row_stating(blockers, candidate["statement"])
        if existing is not None or agreeing:
            if existing is None:
                existing = {
                    "id": _next_id("AB", taken),
                    "statement": candidate["statement"],
                    "evidence": _evidence(candidate, agreeing),
                    "severity": candidate["severity"],
                    "followUpPhase": next(
                        (e["followUpPhase"] for e in agreeing if "followUpPhase" in e),
                        "implementation",
                    ),
                }
                blockers.append(existing)
            _add_sources(existing, sources)
            confirmed_ids.append(existing["id"])
            continue
        risk = _row_stating(risks, candidate["statement"])
        if risk is None:
            trigger = next((e["trigger"] for e in entries if "trigger" in e), None)
            risk = {
                "id": _next_id("RR", taken),
                "statement": candidate["statement"],
                "evidence": candidate["evidence"],
                "severity": candidate["severity"],
                "trigger": trigger or candidate.get("trigger") or DEFAULT_TRIGGER,
            }
            risks.append(risk)
        _add_sources(risk, sources)
        risk_ids.append(risk["id"])

    after = _derive(before, blockers)
    if after != before:
        _route(data, after, [str(b.get("id")) for b in blockers])
    critic.update(
        enabled=True,
        mode=DEVILS_ADVOCATE,
        candidatesProposed=len(candidates["candidates"]),
        confirmedBlockers=len(confirmed_ids),
        downgradedToResidual=len(risk_ids),
    )
    data.setdefault("convergence", {})["critic"] = critic
    summary = MergeSummary(
        len(candidates["candidates"]), len(confirmed_ids), len(risk_ids), before, after,
        tuple(confirmed_ids), tuple(risk_ids),
    )  # fmt: skip
    return data, summary


def _critic_summary_base(data: dict[str, Any], candidates: dict[str, Any]) -> dict[str, Any]:
    convergence = data.get("convergence")
    if convergence is not None and not isinstance(convergence, dict):
        raise BadInput("--report: convergence must be an object")
    existing = (convergence or {}).get("critic")
    critic = {k: v for k, v in (existing or {}).items() if k in ("provider", "model")}
    for field in ("provider", "model"):
        if field in candidates:
            critic[field] = candidates[field]
    return critic


def _evidence(candidate: dict[str, Any], agreeing: list[dict[str, Any]]) -> str:
    parts = [candidate["evidence"]]
    for entry in agreeing:
        if "evidence" in entry:
            who = f" by {entry['by']}" if "by" in entry else ""
            parts.append(f"confirmed{who}: {entry['evidence']}")
    return "; ".join(parts)


def _verdict(data: dict[str, Any]) -> str:
    tokens = []
    for part in ("verdictCard", "finalVerdict"):
        node = data.get(part)
        token = node.get("verdictToken") if isinstance(node, dict) else None
        if token not in VERDICT_ORDER:
            raise BadInput(
                f"--report: {part}.verdictToken is {token!r}; a final-verification verdict is "
                f"one of {', '.join(VERDICT_ORDER)}"
            )
        tokens.append(token)
    if tokens[0] != tokens[1]:
        raise BadInput(
            f"--report: verdictCard.verdictToken {tokens[0]!r} differs from "
            f"finalVerdict.verdictToken {tokens[1]!r}; fix the report before merging"
        )
    return tokens[0]


def _derive(before: str, blockers: list[dict[str, Any]]) -> str:
    """``accepted`` is impossible with a blocker; a critical one blocks. Never more lenient
    than the verdict the verifiers reached."""
    if any(b.get("severity") == "critical" for b in blockers):
        floor = "blocked"
    elif blockers:
        floor = "conditional-accept"
    else:
        floor = "accepted"
    return max(before, floor, key=VERDICT_ORDER.index)


def _route(data: dict[str, Any], verdict: str, blocker_ids: list[str]) -> None:
    """Make the verdict fields agree with ``verdict`` as the report rules demand: the card and
    the final verdict byte-equal, the first recommended step their next step, and the
    phase-continuation row the phase that step names. A verdict that was accepted pointed at
    release-handoff; now the task goes back to implementation."""
    card, final = data["verdictCard"], data["finalVerdict"]
    was_accepted = card["verdictToken"] == "accepted"
    for part in (card, final):
        part["verdictToken"] = verdict
        part["direction"] = DIRECTION[verdict]
    if not was_accepted:
        return
    ids = ", ".join(blocker_ids)
    step = (
        f"implementation: resolve the acceptance blocker(s) {ids} the critic's confirmed "
        "candidates raised, then verify the whole task again"
    )
    card["nextStep"] = final["nextStep"] = step
    steps = data.get("recommendedNextSteps")
    if isinstance(steps, list) and steps:
        steps[0] = {"text": step}
    else:
        data["recommendedNextSteps"] = [{"text": step}]
    for row in data.get("followUpTasks") or []:
        if isinstance(row, dict) and row.get("origin") == "phase-continuation":
            row["suggestedTaskType"] = "implementation"
    summary = data.get("readerSummary")
    if isinstance(summary, dict):
        key = str((data.get("header") or {}).get("taskKey", ""))
        summary.update(
            decision=f"Verdict {verdict}: the critic's confirmed acceptance blocker(s) {ids} "
            "rule out accepting the work as it is.",
            humanAction="Resolve the acceptance blockers, then run final-verification again.",
            blockers=f"{len(blocker_ids)} acceptance blocker(s): {ids}.",
            recommendedCommand=okstra("task", "status", key),
        )
