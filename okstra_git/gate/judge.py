"""The gate's judge: which verdicts bear on a commit, and the refusal that names what is missing
and the command that fixes it."""

from __future__ import annotations

from .config import GateConfig, common_dir, signers_path
from .decision import VERDICTS_REF, Decision
from .finding import Finding, Rejected

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..git.notesview import NotesView
    from ..git.objects import ObjectSource
    from ..git.repo import GitRepo
    from ..records.verdict import Verdict


def _identity(verdict: Verdict) -> str:
    """One text for the same verdict read from two notes (commit and tree): its JSON data
    spelled by ``repr``, equal exactly when the canonical lines are (the verdict was parsed from
    JSON: strings, whole numbers, lists), and no json import on every push."""
    from ..records.base import to_data

    return repr(to_data(verdict))


class Gate:
    """Decides ref updates against one repository's config and verdict notes.

    Creating one loads the git layer; :meth:`GateConfig.quick` decides what needs no repository.
    """

    def __init__(
        self,
        objects: ObjectSource,
        config: GateConfig | None = None,
        extra_notes: Mapping[str, str] | None = None,
        side: str = "client",
    ) -> None:
        self.objects = objects
        """The repository the verdict notes are read from, through its one read interface:
        git's plumbing (``ObjectReader``: the hooks and ``ci check``, which must not load
        pygit2), or a ``GitRepo`` for a command that has it loaded already (``task status``,
        ``run start``)."""
        self.config = config or GateConfig.load()
        self._extra_notes = extra_notes
        self._notes: NotesView | None = None
        self.side = side
        """``client`` (pre-push), ``server`` (pre-receive/update) or ``ci``: shapes the fix."""
        self.fetch_from: str | None = None
        """The remote a fix that fetches names (``ci check`` sets it when it did not fetch);
        None: no fetch is offered first."""
        self._signature_cache: dict[str, bool] = {}
        self.signers = (
            signers_path(common_dir, self.config.allowed_signers, "okstra.gate.allowedSigners")
            if self.config.allowed_signers
            else None
        )
        """The resolved ``okstra.gate.allowedSigners`` file."""

    @property
    def notes(self) -> NotesView:
        if self._notes is None:
            from ..git.notesview import NotesView

            self._notes = NotesView(
                self.objects, VERDICTS_REF, self._extra_notes, remote_copies=self.side != "server"
            )
        return self._notes

    def peel(self, rev: str) -> tuple[str, str] | None:
        """``(commit, tree)`` that ``rev`` names (a tag is peeled), or ``None`` when it names
        no commit here."""
        found = self.objects.read(f"{rev}^{{commit}}")
        if found is None:
            return None
        commit, _, body = found
        first = body.split(b"\n", 1)[0]  # a commit starts with "tree <id>"
        return commit, first[len(b"tree ") :].decode("ascii")

    # -- one commit ------------------------------------------------------------------------

    def find(self, commit: str, tree: str, task: str | None = None) -> Finding:
        """The verdicts bearing on ``commit`` (whose tree is ``tree``): on it, or on a commit
        with its tree.

        The tree's note is read in commit mode too (unless the commit passed), so a refusal can
        say that a verdict on an identical tree exists but does not count there.
        """
        from ..records.verdict import parse_lines

        finding = Finding(commit, tree)
        seen: set[str] = set()
        for target in (commit, tree):
            if target == tree and self.config.match == "commit" and finding.opening is not None:
                break
            for where, raw in self.notes.lines(target):
                verdicts, problems = parse_lines(raw, where)
                finding.problems.extend(problems)
                for verdict in verdicts:
                    line = _identity(verdict)
                    if line in seen:
                        continue
                    seen.add(line)
                    why = self._why_not(verdict, commit, tree, task)
                    if why is not None:
                        finding.rejected.append(Rejected(verdict, why))
                    elif finding.opening is None:
                        finding.opening = verdict
        return finding

    def _why_not(self, verdict: Verdict, commit: str, tree: str, task: str | None) -> str | None:
        """``None`` when ``verdict`` opens the gate for ``commit``; else the reason, briefly."""
        if task is not None and verdict.task_key != task:
            return f"is for task {verdict.task_key}, not {task}"
        if verdict.head != commit and verdict.head_tree != tree:
            return f"was recorded on {verdict.head[:12]} whose tree differs"
        if self.config.match == "commit" and verdict.head != commit:
            return (
                f"was recorded on {verdict.head[:12]}, a commit with the identical tree, and "
                "okstra.gate.match=commit demands this exact commit"
            )
        if verdict.verdict != "accepted":
            return f"is {verdict.verdict}, not accepted"
        if verdict.scope != "whole-task":
            stages = ",".join(str(s) for s in verdict.stages)
            return f"covers stage {stages} only ({verdict.scope}), not the whole task"
        signers = self.signers
        if signers is not None:
            if verdict.signature is None:
                return f"is not signed, and okstra.gate.allowedSigners ({signers}) is set"
            if not signers.is_file():
                return f"cannot be checked: okstra.gate.allowedSigners names {signers}, not a file"
            if not self._signature_ok(verdict, signers):
                return f"has a signature that no key in {signers} verifies"
        return None

    def _signature_ok(self, verdict: Verdict, signers: Path) -> bool:
        line = _identity(verdict)
        if line not in self._signature_cache:
            from .signing import verify_signature  # only when signing is configured

            self._signature_cache[line] = verify_signature(verdict, str(signers))
        return self._signature_cache[line]

    # -- one ref update --------------------------------------------------------------------

    def check(self, ref: str, old: str, new: str) -> Decision:
        """May ``ref`` move from ``old`` to ``new`` (all-zero ``new``: deletion)?"""
        quick = self.config.quick(ref, old, new)
        if quick is not None:
            return quick
        peeled = self.peel(new)
        if peeled is None:
            return Decision(
                ref,
                new,
                False,
                "not-a-commit",
                f"refusing to update the protected ref {ref} to {new[:12]}: that object is "
                "missing or is not a commit, so it cannot carry a verification verdict",
            )
        commit, tree = peeled
        finding = self.find(commit, tree)
        if finding.opening is not None:
            return Decision(ref, commit, True, "verdict", finding=finding)
        return Decision(ref, commit, False, "no-verdict", self.refusal(ref, finding), finding)

    def refusal(self, ref: str | None, finding: Finding) -> str:
        """One paragraph: which ref, which commit, what is missing, the command that fixes it."""
        commit = finding.commit
        what = (
            f"refusing to update {ref} to {commit[:12]}"
            if ref
            else f"{commit[:12]} does not pass the verification gate"
        )
        mode = (
            "on this commit or on a commit with the identical tree "
            f"{finding.tree[:12]} (okstra.gate.match=tree)"
            if self.config.match == "tree"
            else "on this exact commit (okstra.gate.match=commit)"
        )
        parts = [f"{what}: it needs an accepted whole-task verdict {mode}"]
        if self.signers is not None:
            parts[0] += f", signed by a key in {self.signers}"
        parts[0] += "."
        if finding.rejected:
            seen = "; ".join(
                f"{r.verdict.verdict} {r.verdict.scope} verdict for {r.verdict.task_key} {r.why}"
                for r in finding.rejected
            )
            parts.append(f"Found: {seen}.")
        elif self.notes.sources:
            notes = ", ".join(name for name, _ in self.notes.sources)
            parts.append(f"No verdict on it in {notes}.")
        elif not self.notes.problems:
            parts.append("There are no verdict notes here (refs/notes/okstra/verdicts is absent).")
        if finding.problems:
            parts.append("Unreadable note lines: " + "; ".join(finding.problems) + ".")
        if self.notes.problems:
            parts.append("Ignored, so no verdict in it counts: " + "; ".join(self.notes.problems))
        parts.append("Fix: " + self._fix(finding))
        return "\n".join(parts)

    def _fix(self, finding: Finding) -> str:
        """The command that fixes it, for the task a verdict names or, with none, the task
        whose task branch points at the commit; in its task worktree when that is known (not
        server side: its worktrees are the server's folders). What only a refusal reads."""
        from ..logic.gatefix import fix_text, usable_key
        from ..records.taskbranch import task_of_commit, task_worktree

        commit, keys = finding.commit, finding.task_keys
        if keys:
            key = usable_key(keys[0]) if len(keys) == 1 else None
        else:
            key = task_of_commit(self.objects, commit)
        where = task_worktree(key, commit) if key and self.side != "server" else None
        no_notes = not self.notes.sources
        return fix_text(
            commit, key, where, self.side, self.signers is not None, self.fetch_from, no_notes
        )


def judge_head(repo: GitRepo, head: str, task: str, config: GateConfig | None = None) -> Finding:
    """The verdicts bearing on task ``task``'s HEAD ``head`` (on it, or on a commit with its
    tree), judged as the pre-push hook judges them: this repository's gate config (match mode,
    allowed signers; ``config`` when the caller read it already), the local and fetched verdict
    notes. For commands that have the git layer loaded already (``task status``, ``run
    start``)."""
    gate = Gate(repo, config or GateConfig.load(repo.workdir or repo.git_dir))
    return gate.find(head, repo.tree_id(head), task=task)
