"""What ``critic merge`` prints: the counts, and the merged report when it is not written."""

from __future__ import annotations

from . import Output, dump

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..logic.critic import MergeSummary


def merged(report: dict[str, Any], s: MergeSummary, out: str | None) -> Output:
    """Without ``out`` the merged report itself (its JSON as text); with it, one line."""
    summary = {
        "candidatesProposed": s.proposed,
        "confirmedBlockers": s.confirmed,
        "downgradedToResidual": s.downgraded,
        "verdictBefore": s.verdict_before,
        "verdictAfter": s.verdict_after,
        "blockers": list(s.blockers),
        "residualRisks": list(s.risks),
    }
    if out is None:
        return Output({"report": report, "summary": summary}, lambda: dump(report))
    verdict = (
        s.verdict_after
        if s.verdict_after == s.verdict_before
        else f"{s.verdict_before} -> {s.verdict_after}"
    )
    text = (
        f"critic: {s.proposed} candidate(s): {s.confirmed} confirmed as acceptance blocker(s)"
        f"{' ' + ', '.join(s.blockers) if s.blockers else ''}, {s.downgraded} downgraded to "
        f"residual risk(s){' ' + ', '.join(s.risks) if s.risks else ''}; verdict {verdict}; "
        f"wrote {out}"
    )
    return Output({"summary": summary, "out": out}, text)
