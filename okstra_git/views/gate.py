"""What the gate says: ``hooks run …``'s lines on stderr and ``--json``, and the words for a
verdict that opens it (``ci check``'s message too). Loaded on every push: stdlib only, and
nothing of it at this module's top."""

from __future__ import annotations

from . import Output

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from ..gate.decision import Decision
    from ..records.verdict import Verdict
    from ..services.gatecheck import Outcome

# What a refusal leaves on the remote. git runs pre-push and pre-receive once for the whole push
# and a refusal stops all of it; `update` runs once per ref, and refusing one ref does not stop
# the others (a verdict notes ref pushed beside the branch may well have landed).
_WHOLE_PUSH = "nothing was pushed"
_UPDATE_ONE_REF = (
    "this ref was not updated; any other ref of the same push was decided on its own and may "
    "have been updated"
)


def hook_ran(outcome: Outcome) -> Output:
    """A hook's lines on stderr (git relays a server hook's as ``remote:`` lines): each ref a
    verdict let through, each refusal, then why the push is stopped; ``--json``: every
    decision."""
    decisions = outcome.decisions
    refused = [d for d in decisions if not d.allowed]
    said = [(note, False) for note in outcome.notes]
    said += [
        (f"{d.ref} → {d.commit[:12]}: {_passed(d)}", False)
        for d in decisions
        if d.allowed and d.reason == "verdict"
    ]
    said += [(d.message, outcome.gitlab) for d in refused]
    error = outcome.stopped
    if refused:
        remains = _UPDATE_ONE_REF if outcome.hook == "update" else _WHOLE_PUSH
        summary = (
            f"push refused: {len(refused)} of {len(decisions)} ref update(s) failed the "
            f"verification gate; {remains}."
        )
        said.append((summary, outcome.gitlab))
        error = error or summary
    if outcome.stopped is not None:
        said.append((outcome.stopped, False))
    if outcome.failed is not None:
        said.append((f"git okstra: {outcome.failed}", outcome.gitlab))
        error = outcome.failed
    prefix = f"okstra {outcome.hook}: "
    err = "".join(_lines(text, "GL-HOOK-ERR: " if gitlab else prefix) for text, gitlab in said)
    data = [
        {
            "ref": d.ref,
            "commit": d.commit,
            "allowed": d.allowed,
            "reason": d.reason,
            "message": d.message,
        }
        for d in decisions
    ]
    return Output({"decisions": data}, err=err, code=outcome.code, error=error)


def _lines(text: str, lead: str) -> str:
    """``text`` with ``lead`` before each line (GitLab shows a hook's line in its UI only when
    it starts ``GL-HOOK-ERR:``)."""
    return "".join(f"{lead}{line}\n" for line in text.splitlines() or [""])


def _passed(decision: Decision) -> str:
    assert decision.finding is not None and decision.finding.opening is not None
    return "gate open — " + verdict_words(decision.finding.opening, decision.commit)


def verdict_words(verdict: Verdict, commit: str) -> str:
    """The verdict that opens the gate for ``commit``: whose, on which commit, by whom, when."""
    where = (
        "on this commit"
        if verdict.head == commit
        else f"on {verdict.head[:12]} (identical tree {verdict.head_tree[:12]})"
    )
    return (
        f"accepted whole-task verdict for {verdict.task_key} {where}, recorded by "
        f"{verdict.recorded_by} at {verdict.recorded_at}"
    )
