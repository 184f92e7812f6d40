"""``critic merge``: fold the acceptance critic's candidates into a final-verification report.

Files in, file out; the confirm-or-downgrade itself is :func:`okstra_git.logic.critic.merge`.
"""

from __future__ import annotations

from typing import Any

from ..core import schemacheck
from ..core.errors import BadInput
from ..core.jsontext import dumps_pretty
from ..core.userfiles import read_json_object, write_atomic
from ..logic.critic import MergeSummary, merge
from .reportfiles import MAX_DATA_BYTES


def _read(path: str, flag: str, schema: str | None = None) -> dict[str, Any]:
    _, data = read_json_object(path, flag, MAX_DATA_BYTES)
    mismatch = schemacheck.problems(data, schema) if schema is not None else []
    if mismatch:
        lines = "\n".join(f"  - {line}" for line in mismatch)
        raise BadInput(f"{flag} {path} does not match {schema}.schema.json:\n{lines}")
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
