"""The file forms of ``incremental scope`` and ``incremental carry``: report data handed over as
files. No git here, so they start as fast as the CLI does."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..core.jsontext import dumps_pretty
from ..core.userfiles import read_json_object, write_atomic
from ..logic.incremental import ScopeDecision, carry_forward, decide_scope, plan_items, stage_map_of
from .reportfiles import MAX_DATA_BYTES


def decide_from_file(
    prev_data: str,
    cur_base_sha: str,
    prev_base_sha: str,
    impacted: Sequence[int],
    cutoff: Fraction,
) -> ScopeDecision:
    """``incremental scope --prev-data P --cur-base-sha C --prev-base-sha B``."""
    _, data = read_json_object(prev_data, "--prev-data", MAX_DATA_BYTES)
    stage_map = stage_map_of(data, f"--prev-data {prev_data}")
    return decide_scope(stage_map, impacted, prev_base_sha, cur_base_sha, cutoff)


def carry_files(prev_data: str, cur_data: str, prev_seq: str, out: str) -> int:
    """``incremental carry``: write the merged data to ``out`` atomically; how many items
    were carried in."""
    _, prev = read_json_object(prev_data, "--prev-data", MAX_DATA_BYTES)
    _, cur = read_json_object(cur_data, "--cur-data", MAX_DATA_BYTES)
    merged = carry_forward(prev, cur, prev_seq)
    write_atomic(out, dumps_pretty(merged), "--out")
    return len(plan_items(merged, "merged data")) - len(plan_items(cur, "--cur-data"))
