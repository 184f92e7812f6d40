"""The Stage Map of a plan (docs/workflow.md): parsing, validation (S1–S7, S9) and graph helpers.

A plan lists its stages in the ``## 5.5 Stage Map`` table and describes each one in a
``### Stage N — Title`` section (numbered steps, then a ``#### Stage Exit Contract`` with the
predicted files). Report data carries the same map as ``implementationPlanning.stageMap``.

Parsing is tolerant: a problem that makes part of the map unreadable becomes an S1 finding and
the parser carries on, so one ``validate`` call reports every failure it can. Edges of the
depends-on graph point from a stage to the stages it depends on; "a reaches b" means b depends
on a, directly or through other stages (work flows from a to b).
"""

from .checks import validate
from .data import stage_map_from_data
from .markdown import SectionText, parse_plan, stage_sections
from .model import (
    CANONICAL_HEADER,
    CHECKS,
    S9_PAIRS_SHOWN,
    STAGE_STEP_CAP,
    Finding,
    Stage,
    StageMap,
    downstream_closure,
    reaches,
)

__all__ = [
    "CANONICAL_HEADER",
    "CHECKS",
    "S9_PAIRS_SHOWN",
    "STAGE_STEP_CAP",
    "Finding",
    "SectionText",
    "Stage",
    "StageMap",
    "downstream_closure",
    "parse_plan",
    "reaches",
    "stage_map_from_data",
    "stage_sections",
    "validate",
]
