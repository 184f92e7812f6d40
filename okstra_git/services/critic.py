"""``critic merge``: fold the acceptance critic's candidates into a final-verification report.

Files in, file out; the confirm-or-downgrade itself is :func:`okstra_git.critic.merge`.
"""

from __future__ import annotations

from typing import Any

from ..critic import MergeSummary, merge
from ..records.base import check_schema, dumps_pretty
from ..userfiles import read_json_object, write_atomic

MAX_INPUT_BYTES = 16 << 20


def _read(path: str, flag: str, schema: str | None = None) -> dict[str, Any]:
    _, data = read_json_object(path, flag, MAX_INPUT_BYTES)
    if schema is not None:
        check_schema(data, schema, f"{flag} {path}")
    return data


def merge_files(
    report: str, candidates: str, confirmations: str, out: str | None
) -> tuple[dict[str, Any], MergeSummary]:
    """Merge and, with ``out``, write the result there atomically (it may be ``report``)."""
    merged, summary = merge(
        _read(report, "--report"),
        _read(candidates, "--candidates", "critic-candidates"),
        _read(confirmations, "--confirmations", "critic-confirmations"),
    )
    if out is not None:
        write_atomic(out, dumps_pretty(merged), "--out")
    return merged, summary
