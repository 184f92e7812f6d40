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


_NO_REFS = (
    "no pushed ref on stdin, so nothing could be checked; the push is stopped. Under "
    "lefthook, okstra's script needs `use_stdin: true` and must be the only pre-push job "
    "with it (lefthook hands stdin to one job); then a push with nothing to send "
    "passes too."
)
_PRE_COMMIT_ONLY = (
    "pre-commit hands this hook one ref of a push at most, so a multi-ref push, a deletion "
    "and a protected ref made of commits the remote has would pass unchecked; the push is "
    "stopped until okstra's full gate is installed in this clone (it goes in as "
    "pre-push.legacy, which pre-commit runs first with every ref): git okstra hooks install"
)


def _notes(outcome: Outcome) -> list[str]:
    """Said before the decisions: why nothing was checked, or how every ref was."""
    if outcome.said == "nothing-to-push":
        return ["nothing to push, so nothing to check"]
    if outcome.said == "full-gate":
        return [f"every ref of this push was checked: {_runs(outcome)}"]
    if outcome.said == "pre-commit-no-ref":
        return ["no PRE_COMMIT_TO_REF (not run from a push); nothing to check"]
    return []


def _stopped(outcome: Outcome) -> str | None:
    """Why the push is stopped besides a refused decision (an unusable stdin, a push that
    cannot be checked whole); said last."""
    if outcome.said == "no-refs":
        return _NO_REFS
    if outcome.said in ("pre-commit-only", "pre-commit-no-ref"):
        return f"{_PRE_COMMIT_ONLY} ({_runs(outcome)})"
    return None


def _runs(outcome: Outcome) -> str:
    from .hooks import runs_words  # pre-commit's stage only

    assert outcome.runs is not None
    return runs_words(outcome.runs)


def hook_ran(outcome: Outcome) -> Output:
    """A hook's lines on stderr (git relays a server hook's as ``remote:`` lines): each ref a
    verdict let through, each refusal, then why the push is stopped; ``--json``: every
    decision."""
    decisions = outcome.decisions
    refused = [d for d in decisions if not d.allowed]
    said = [(note, False) for note in _notes(outcome)]
    said += [
        (f"{d.ref} → {d.commit[:12]}: {_passed(d)}", False)
        for d in decisions
        if d.allowed and d.reason == "verdict"
    ]
    said += [(_message(d), outcome.gitlab) for d in refused]
    stopped = _stopped(outcome)
    error = stopped
    if refused:
        remains = _UPDATE_ONE_REF if outcome.hook == "update" else _WHOLE_PUSH
        summary = (
            f"push refused: {len(refused)} of {len(decisions)} ref update(s) failed the "
            f"verification gate; {remains}."
        )
        said.append((summary, outcome.gitlab))
        error = error or summary
    if stopped is not None:
        said.append((stopped, False))
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
            "message": _message(d),
        }
        for d in decisions
    ]
    return Output({"decisions": data}, err=err, code=outcome.code, error=error)


def _message(decision: Decision) -> str:
    """A decision's paragraph; server side, a refusal of a ref pushed through a symbolic ref
    names it."""
    if decision.pushed_as is None:
        return decision.message
    return (
        f"{decision.message}\n(pushed as {decision.pushed_as}, a symbolic ref to {decision.ref} "
        "on this server: a push to it moves that ref, so that ref is what the gate judges)"
    )


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
