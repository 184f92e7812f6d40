"""The critic pass (docs/workflow.md; seed 000, 2026-06-04/05 designs). Pure: plain data, no git.

A run opts into a critic at set-up (``convergence.critic``: enabled, provider, model). In the
finding phases the critic hunts for what the workers missed (``coverage``); in
final-verification it is the acceptance devil's advocate, proposing candidate blockers that
:func:`merge` confirms or downgrades — never drops.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ..core.errors import BadInput
from ..core.values import Value
from .providers import DEFAULT_MODEL, MODELS, PROVIDERS

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
DEFAULT_TRIGGER = (
    "a verifier reproduces it or cites evidence for it: it then becomes an acceptance blocker"
)


class MergeSummary(Value):
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
    re-derived (docs/workflow.md).

    A candidate restating a row that was there before (case and spacing aside) adds its source
    to that row instead of a second row. A candidate already merged (its source is on a row)
    stays there, unless it is confirmed now and sat in the residual risks: then it moves up.
    So merging the same inputs again changes nothing.

    ``candidates`` and ``confirmations`` are the checked documents of
    ``critic-candidates.schema.json`` and ``critic-confirmations.schema.json``.
    """
    data = copy.deepcopy(report)
    blockers, risks = _tables(data)
    before = _verdict(data)
    by_candidate = _confirmations_by_candidate(candidates, confirmations)
    critic = _critic_summary_base(data, candidates)
    placer = _Placer(blockers, risks, _ids_in(data), f"{critic.get('provider', 'critic')}-critic")
    for candidate in candidates["candidates"]:
        placer.place(candidate, by_candidate.get(candidate["id"], []))

    after = _derive(before, blockers)
    if after != before:
        _route(data, after, [str(b.get("id")) for b in blockers])
    proposed = len(candidates["candidates"])
    critic.update(
        enabled=True,
        mode=DEVILS_ADVOCATE,
        candidatesProposed=proposed,
        confirmedBlockers=len(placer.confirmed),
        downgradedToResidual=len(placer.downgraded),
    )
    data.setdefault("convergence", {})["critic"] = critic
    summary = MergeSummary(
        proposed, len(placer.confirmed), len(placer.downgraded), before, after,
        tuple(placer.confirmed), tuple(placer.downgraded),
    )  # fmt: skip
    return data, summary


def _tables(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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
    tables = []
    for name in ("acceptanceBlockers", "residualRisks"):
        rows = verification.setdefault(name, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise BadInput(f"--report: finalVerification.{name} must be a list of objects")
        tables.append(rows)
    return tables[0], tables[1]


def _confirmations_by_candidate(
    candidates: dict[str, Any], confirmations: dict[str, Any]
) -> dict[str, list[dict[str, Any]]]:
    known = [c["id"] for c in candidates["candidates"]]
    if len(set(known)) != len(known):
        raise BadInput("--candidates: candidate ids must be unique")
    by_candidate: dict[str, list[dict[str, Any]]] = {}
    for entry in confirmations["confirmations"]:
        if entry["candidate"] not in known:
            raise BadInput(
                f"--confirmations: candidate {entry['candidate']!r} is not among the critic's "
                f"candidates ({', '.join(sorted(known)) or 'none'})"
            )
        by_candidate.setdefault(entry["candidate"], []).append(entry)
    return by_candidate


class _Placer:
    """Puts each candidate in one row of the blockers or the residual risks."""

    def __init__(
        self, blockers: list[dict[str, Any]], risks: list[dict[str, Any]], taken: set[str],
        worker: str,
    ) -> None:  # fmt: skip
        self.blockers, self.risks, self.taken, self.worker = blockers, risks, taken, worker
        self.earlier = [*blockers, *risks]
        """Rows that were there before this merge: a restating candidate joins one of them."""
        self.joined: list[dict[str, Any]] = []
        self.confirmed: list[str] = []
        self.downgraded: list[str] = []

    def place(self, candidate: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        agreeing = [e for e in entries if e["confirmed"]]
        mine = f"{self.worker}:{candidate['id']}"
        sources = [mine] + [e["by"] for e in agreeing if "by" in e]
        home = _row_with_source(self.blockers, mine)
        if home is None:
            risk = _row_with_source(self.risks, mine)
            if risk is not None and not agreeing:
                _add_sources(risk, sources)
                self.downgraded.append(risk["id"])
                return
            if risk is not None:  # confirmed since: it moves up to the blockers
                risk["sourceItems"].remove(mine)
                if not risk["sourceItems"]:
                    self.risks.remove(risk)
            home = self._restated(self.blockers, candidate)
            if home is None and agreeing:
                home = self._new_blocker(candidate, agreeing)
        if home is not None:
            _add_sources(home, sources)
            self.confirmed.append(home["id"])
            return
        home = self._restated(self.risks, candidate) or self._new_risk(candidate, entries)
        _add_sources(home, sources)
        self.downgraded.append(home["id"])

    def _restated(self, rows: list[dict[str, Any]], candidate: dict[str, Any]) -> Any:
        """An earlier row of ``rows`` saying the same thing, not yet joined by a candidate."""
        fresh = [r for r in rows if any(r is e for e in self.earlier)]
        fresh = [r for r in fresh if not any(r is j for j in self.joined)]
        row = _row_stating(fresh, candidate["statement"])
        if row is not None:
            self.joined.append(row)
        return row

    def _new_blocker(self, candidate: dict[str, Any], agreeing: list[dict[str, Any]]) -> Any:
        row = {
            "id": _next_id("AB", self.taken),
            "statement": candidate["statement"],
            "evidence": _evidence(candidate, agreeing),
            "severity": candidate["severity"],
            "followUpPhase": next(
                (e["followUpPhase"] for e in agreeing if "followUpPhase" in e), "implementation"
            ),
        }
        self.blockers.append(row)
        return row

    def _new_risk(self, candidate: dict[str, Any], entries: list[dict[str, Any]]) -> Any:
        trigger = next((e["trigger"] for e in entries if "trigger" in e), None)
        row = {
            "id": _next_id("RR", self.taken),
            "statement": candidate["statement"],
            "evidence": candidate["evidence"],
            "severity": candidate["severity"],
            "trigger": trigger or candidate.get("trigger") or DEFAULT_TRIGGER,
        }
        self.risks.append(row)
        return row


def _row_with_source(rows: list[dict[str, Any]], source: str) -> dict[str, Any] | None:
    return next((r for r in rows if source in (r.get("sourceItems") or [])), None)


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
    """Make every field that repeats the verdict agree with ``verdict`` as the report rules
    demand (the card, the final verdict, the first recommended step and the
    phase-continuation row: back to implementation), and say so in the reader summary."""
    from .reports.starter import decide

    before = data["verdictCard"]["verdictToken"]
    decide(data, verdict)
    summary = data.get("readerSummary")
    if isinstance(summary, dict):
        ids = ", ".join(blocker_ids)
        summary.update(
            decision=f"Verdict {verdict} (was {before}): acceptance blocker(s) {ids} stand, "
            "including what the critic's confirmed candidates raised.",
            humanAction="Resolve the acceptance blockers, then verify the task again.",
            blockers=f"{len(blocker_ids)} acceptance blocker(s): {ids}.",
            recommendedCommand=data["recommendedNextSteps"][0].get(
                "command", summary.get("recommendedCommand")
            ),
        )
