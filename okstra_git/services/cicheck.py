"""What ``git okstra ci check …`` does: whether a revision carries an accepted whole-task
verdict, through the gate the hooks use (``gatecheck.py``).

It runs on every CI build, so it reads the repository through git's plumbing
(``plumbing.py``), never pygit2 unless it must fetch or resolve a task key. Its declaration is
in ``cli/ci.py``.
"""

from __future__ import annotations

from ..core.errors import BadInput
from ..core.values import Value

TYPE_CHECKING = False  # no typing import on every build
if TYPE_CHECKING:
    from ..gate.finding import Finding, Rejected
    from ..gate.judge import Gate
    from ..git.repo import GitRepo
    from ..records.verdict import Verdict


class CiReport(Value):
    """What ``ci check`` found for a revision: the verdict that opens the gate, or why none
    does, and what it read (``views/ci.py`` writes it in each format)."""

    rev: str
    """The revision as given."""
    commit: str
    tree: str
    match: str
    """The gate's match mode (``okstra.gate.match``)."""
    task: str | None
    """The task a verdict had to be for (``--task``), else None."""
    opening: Verdict | None
    """The accepted whole-task verdict that opens the gate (None: the check failed)."""
    rejected: list[Rejected]
    """Verdicts found that do not open it, each with why."""
    problems: list[str]
    """Note lines that could not be read."""
    notes: list[str]
    """The verdict notes refs read."""
    refusal: str | None
    """The gate's refusal, with what to do, when no verdict opens it."""

    @property
    def passed(self) -> bool:
        return self.opening is not None


def ci_report(rev: str, fetch: str | None, task_text: str | None) -> CiReport:
    """Whether ``rev`` carries an accepted whole-task verdict (``passed``), and why.

    Fetching and a task key need the git layer (pygit2); the check itself reads through git's
    plumbing, as the hooks do.
    """
    from ..gate.judge import Gate
    from ..git.plumbing import ObjectReader

    task = None
    if fetch or task_text:
        from ..git.repo import GitRepo

        repo = GitRepo.open(".")
        if fetch:
            from .sync.transport import fetch_notes

            fetch_notes(repo, fetch)
        task = _task_filter(repo, task_text) if task_text else None
    with ObjectReader() as objects:
        gate = Gate(objects, side="ci")
        peeled = gate.peel(rev)
        if peeled is None:
            raise BadInput(f"{rev!r} does not name a commit in {_where()}")
        finding = gate.find(*peeled, task=task)
        if finding.opening is None and not fetch:
            gate.fetch_from = _fetch_remote()
        return _ci_report(gate, rev, finding, task)


def _fetch_remote() -> str | None:
    """The remote a failing ``ci check`` without ``--fetch`` offers to fetch from: ``origin``,
    else the only remote (None: none, or several to choose from)."""
    from ..git.plumbing import git_output

    code, out, _ = git_output("remote")
    names = out.decode("utf-8", "replace").split() if code == 0 else []
    if "origin" in names:
        return "origin"
    return names[0] if len(names) == 1 else None


def _where() -> str:
    """The repository here, as git names it (for messages)."""
    from ..gate.config import common_dir

    return str(common_dir())


def _task_filter(repo: GitRepo, text: str) -> str:
    from .context import Context

    return str(Context(repo).key(text))


def _ci_report(gate: Gate, rev: str, finding: Finding, task: str | None) -> CiReport:
    return CiReport(
        rev=rev,
        commit=finding.commit,
        tree=finding.tree,
        match=gate.config.match,
        task=task,
        opening=finding.opening,
        rejected=finding.rejected,
        problems=finding.problems + gate.notes.problems,
        notes=[name for name, _ in gate.notes.sources],
        refusal=gate.refusal(None, finding) if finding.opening is None else None,
    )
