"""Incremental re-verification (docs/workflow.md; seed 001). Pure: plain data in, plain data out.

A re-run of a phase whose earlier run already verified the plan may re-verify only the stages
an answer touched — the *impacted* stages and everything downstream of them — and carry the
earlier verdicts of the other stages forward. Full re-verification is the default; the scope
narrows only when every safety condition holds, so the same inputs always give the same
decision and any doubt gives ``full``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from ..core.errors import BadInput, Refused
from ..core.strict import parsed, run_seq, stage_number
from ..core.values import Value
from .stagemap import StageMap, downstream_closure, stage_map_from_data, validate

CUTOFF_RATIO = 0.5
"""Default share of the Stage Map a closure may cover and still be incremental."""

INCREMENTAL, FULL = "incremental", "full"
CARRY_TAG = "carriedForwardFromSeq"
PLAN_ITEMS_PATH = ("implementationPlanning", "planBodyVerification", "planItems")
_STRUCTURE_CHECKS = ("S1", "S2", "S3", "S4")
"""Stage Map checks the dependency graph relies on; any of them failing forces full."""


class ScopeDecision(Value):
    """Which stages a re-run verifies again and which it carries forward."""

    mode: str
    """``incremental`` or ``full``."""
    reverify_stages: tuple[int, ...]
    """Stages to analyse again: the impacted closure, or every stage when full."""
    carry_stages: tuple[int, ...]
    """Stages whose earlier verdicts are kept; empty when full."""
    reason: str
    """Why, in one sentence."""

    def to_cli(self) -> dict[str, Any]:
        """What ``incremental scope`` prints (docs/workflow.md: its keys)."""
        return {
            "mode": self.mode,
            "reverify_stages": list(self.reverify_stages),
            "carry_stages": list(self.carry_stages),
            "reason": self.reason,
        }

    def to_data(self) -> dict[str, Any]:
        """The report data's ``implementationPlanning.incrementalDecision``."""
        return {
            "mode": self.mode,
            "reverifyStages": list(self.reverify_stages),
            "carryStages": list(self.carry_stages),
            "reason": self.reason,
        }


def parse_impacted(text: str) -> list[int]:
    """``--impacted 1,3``: stage numbers, sorted and unique; empty text gives none."""
    numbers = set()
    for token in text.split(","):
        token = token.strip()
        if not token:
            continue
        numbers.add(parsed(stage_number, token, f"--impacted {text!r}: stage"))
    return sorted(numbers)


def parse_cutoff(text: str) -> Fraction:
    """``--cutoff``: a ratio from 0 to 1, kept exact (``0.3`` is three tenths, not a float)."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError) as exc:
        raise BadInput(f"--cutoff {text!r}: not a number between 0 and 1") from exc
    if not 0 <= value <= 1:
        raise BadInput(f"--cutoff {text!r}: must be between 0 and 1")
    return value


def stage_map_of(data: Mapping[str, Any], where: str) -> StageMap | None:
    """The Stage Map in report data, or None when the data has none. A field of the wrong
    shape is BadInput naming ``where``."""
    planning = data.get("implementationPlanning")
    if planning is None:
        return None
    if not isinstance(planning, dict):
        raise BadInput(f"{where}: implementationPlanning must be an object")
    items = planning.get("stageMap")
    if items is None:
        return None
    return stage_map_from_data(items, f"{where}: implementationPlanning.stageMap")


def decide_scope(
    stage_map: StageMap | None,
    impacted: Iterable[int],
    prev_base_sha: str | None,
    cur_base_sha: str | None,
    cutoff: Fraction | float = CUTOFF_RATIO,
) -> ScopeDecision:
    """The scope of a re-run against the earlier run's Stage Map (docs/workflow.md).

    Full when the earlier base is unknown or differs from the current one, when the map is
    absent or structurally broken, when nothing is impacted, when an impacted number is not in
    the map, or when the downstream closure covers more than ``cutoff`` of the stages.
    """
    stages = sorted(stage_map.numbers) if stage_map is not None else []

    def full(reason: str) -> ScopeDecision:
        return ScopeDecision(FULL, tuple(stages), (), reason)

    if not prev_base_sha or not cur_base_sha:
        which = "previous" if not prev_base_sha else "current"
        return full(f"no {which} base commit recorded; the analyses cannot be compared")
    if prev_base_sha != cur_base_sha:
        return full(
            f"the base changed ({prev_base_sha[:12]} -> {cur_base_sha[:12]}): the previous "
            "analysis no longer describes the code"
        )
    if stage_map is None or not stages:
        return full("the previous report data has no Stage Map")
    broken = [f for f in validate(stage_map) if f.check in _STRUCTURE_CHECKS]
    if broken:
        return full(f"the previous Stage Map is not sound ({broken[0].check}: {broken[0].message})")
    wanted = sorted(set(impacted))
    if not wanted:
        return full("no impacted stage given")
    unknown = [n for n in wanted if stage_map.stage(n) is None]
    if unknown:
        return full(
            f"impacted stage(s) {_list(unknown)} not in the Stage Map (stages {_list(stages)})"
        )
    closure = sorted(downstream_closure(stage_map, wanted))
    # A Fraction (--cutoff) is kept exact: limited, a cutoff just under 1 became 1 and let the
    # whole map through as incremental. A float is read as the decimal it was written as.
    ratio = cutoff if isinstance(cutoff, Fraction) else Fraction(cutoff).limit_denominator(10**6)
    share = f"{len(closure)} of {len(stages)} stages"
    if len(closure) > ratio * len(stages):
        return full(
            f"the closure {_list(closure)} is {share}, more than the {_ratio(ratio)} cutoff"
        )
    carry = tuple(n for n in stages if n not in set(closure))
    return ScopeDecision(
        INCREMENTAL,
        tuple(closure),
        carry,
        f"the closure {_list(closure)} of impacted {_list(wanted)} is {share}, "
        f"within the {_ratio(ratio)} cutoff",
    )


def _list(numbers: Iterable[int]) -> str:
    return ", ".join(str(n) for n in numbers)


def _ratio(value: Fraction) -> str:
    return f"{float(value):g}"


# ---------------------------------------------------------------------------------------------
# Carrying earlier plan-item verdicts forward


def plan_items(data: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """``implementationPlanning.planBodyVerification.planItems`` (empty when absent); each item
    must be an object with a string ``id``."""
    node: Any = data
    walked: list[str] = []
    for part in PLAN_ITEMS_PATH:
        if node is None:
            return []
        if not isinstance(node, dict):
            raise BadInput(f"{where}: {'.'.join(walked)} must be an object")
        node = node.get(part)
        walked.append(part)
    path = ".".join(walked)
    if node is None:
        return []
    if not isinstance(node, list):
        raise BadInput(f"{where}: {path} must be a list")
    for i, item in enumerate(node):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise BadInput(f"{where}: {path}[{i}] must be an object with a string id")
    return node


def item_order(item_id: str) -> tuple[tuple[Any, ...], str]:
    """Natural order of plan-item ids (``P-2`` before ``P-10``), ties broken by the raw id."""
    parts = re.split(r"([0-9]+)", item_id)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), item_id


def carry_forward(prev: Mapping[str, Any], cur: Mapping[str, Any], prev_seq: str) -> dict[str, Any]:
    """``cur`` with the earlier run's plan items it does not hold added, each tagged
    ``carriedForwardFromSeq`` (an item carried before keeps the run that last verified it),
    and all items sorted by id. Nothing else of ``prev`` — never its verdict card or final
    verdict — reaches the result. Refused when the two runs' data formats differ, or when the
    current data's decision re-verified a stage and an earlier item of it is gone."""
    parsed(run_seq, prev_seq, "--prev-seq")
    versions = prev.get("schemaVersion"), cur.get("schemaVersion")
    if None in versions:
        side = "previous" if versions[0] is None else "current"
        raise Refused(f"carry refused: the {side} data has no schemaVersion; re-verify in full")
    if versions[0] != versions[1]:
        raise Refused(
            f"carry refused: schemaVersion drift ({versions[0]!r} in the previous data, "
            f"{versions[1]!r} in the current); re-verify in full"
        )
    earlier = plan_items(prev, "previous data")
    current = plan_items(cur, "current data")
    decision = (cur.get("implementationPlanning") or {}).get("incrementalDecision")
    decision = decision if isinstance(decision, dict) else {}
    if decision.get("mode") == FULL:
        raise Refused("carry refused: the current data's incrementalDecision is full")
    held = {item["id"] for item in current}
    reverified = decision.get("reverifyStages") or []
    dropped = [i["id"] for i in earlier if i["id"] not in held and i.get("stage") in reverified]
    if dropped:
        # Carrying would resurrect a verdict this run re-verified away (seed 001: a removed
        # item means the answer's reach is not local).
        raise Refused(
            f"carry refused: plan item(s) {', '.join(dropped)} of re-verified stages are "
            "missing from the current data; re-verify in full"
        )
    carried = [
        {**item, CARRY_TAG: item.get(CARRY_TAG, prev_seq)}
        for item in earlier
        if item["id"] not in held
    ]
    merged = dict(cur)
    planning = dict(merged.get("implementationPlanning") or {})
    body = dict(planning.get("planBodyVerification") or {})
    body["planItems"] = sorted(current + carried, key=lambda item: item_order(item["id"]))
    planning["planBodyVerification"] = body
    merged["implementationPlanning"] = planning
    return merged
