"""``git okstra critic``: the acceptance critic's candidates, confirmed or downgraded
(docs/workflow.md)."""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command, group

group("critic", "The acceptance devil's-advocate critic of final-verification runs.")


@command(
    "critic merge",
    "Confirm the critic's candidate blockers into acceptance blockers or downgrade them to "
    "residual risks, and re-derive the verdict.",
    Arg("--report", "The final-verification report data.", metavar="DATA", required=True,
        complete="file"),
    Arg("--candidates", "The critic's candidates: {provider, model, candidates: [{id, "
        "statement, evidence, severity, trigger?}]}.", metavar="FILE", required=True,
        complete="file"),
    Arg("--confirmations", "The analysers' checks: {confirmations: [{candidate, confirmed, "
        "by?, evidence?, trigger?, followUpPhase?}]}.", metavar="FILE", required=True,
        complete="file"),
    Arg("--out", "Write the merged report here, atomically (may be --report); without it the "
        "merged report is printed.", metavar="FILE", complete="file"),
    about="A confirmed candidate becomes an acceptance blocker with its severity; an "
    "unconfirmed one becomes a residual risk with the trigger that would escalate it; none is "
    "ever dropped, and one restating an existing row adds its source to that row. accepted is "
    "impossible with a blocker (a critical one blocks); a verdict is never relaxed. The counts "
    "go to convergence.critic (mode acceptance-devils-advocate).",
)  # fmt: skip
def merge(report: str, candidates: str, confirmations: str, out: str | None) -> Output:
    from ..services.critic import merge_files
    from ..views.critic import merged

    return merged(*merge_files(report, candidates, confirmations, out), out)
