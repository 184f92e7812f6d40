"""The verification gate: may this ref move to this commit? (SPEC §7)

One decision shared by the pre-push hook, the server-side pre-receive/update hooks and
``git okstra ci check``. It runs on every push, so it is lean on purpose: it reads through git's
plumbing (``plumbing.py``: ``git config``, ``git for-each-ref``, one ``git cat-file --batch``),
because starting git three times costs less than loading pygit2 once; its classes are plain
(a dataclass costs ~0.5 ms to create); and a push of an unprotected ref loads nothing but this
module and its config.

A protected ref may only move to a commit carrying an ``accepted`` whole-task verdict. Verdicts
are JSON Lines in ``refs/notes/okstra/verdicts``, written on the verified commit and on that
commit's tree, so "a verdict on a commit with the identical tree" is one note lookup by tree.
"""

from __future__ import annotations

import os

from .errors import BadInput
from .plumbing import git_output

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from .gitlayer import GitRepo
    from .notesview import NotesView
    from .plumbing import ObjectReader
    from .records.verdict import Verdict

DEFAULT_PROTECT = ("refs/heads/main", "refs/heads/master", "refs/heads/release/*")
MATCH_MODES = ("tree", "commit")
VERDICTS_REF = "refs/notes/okstra/verdicts"  # == records.verdict.VERDICTS_REF (a test checks)
# okstra's own data and every notes ref travel freely: they are how verdicts get to the server.
_PASS_PREFIXES = ("refs/okstra/", "refs/notes/")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0", "")


def is_zero(sha: str) -> bool:
    """An all-zero object name: the ref is created (old) or deleted (new)."""
    return not sha.strip("0")


class ConfigValue:
    """One value of a config key as ``git config --show-origin`` reports it."""

    __slots__ = ("origin", "value")

    def __init__(self, value: str | None, origin: str) -> None:
        self.value = value
        """The value; ``None`` for a key written without ``= value`` (git's boolean true)."""
        self.origin = origin
        """Where it was set: ``file:<path>``, ``command line:`` …"""


class GateConfig:
    """The gate's settings, from the config of the repository where the gate runs.

    Every value is checked here, where it is read: the gate fails closed, so a value it cannot
    read (a glob that would protect nothing, an unknown match mode, an empty signers path)
    refuses the push with the key, the value, where it was set and the fix — never a gate
    that silently protects less.
    """

    __slots__ = ("allow_delete", "allowed_signers", "match", "protect")

    def __init__(
        self,
        protect: tuple[str, ...],
        match: str,
        allowed_signers: str | None,
        allow_delete: bool,
    ) -> None:
        self.protect = protect
        """``okstra.protect`` globs as full refs (``*`` also matches ``/``, so a glob never
        protects too little; a bare branch pattern such as ``main`` is ``refs/heads/main``)."""
        self.match = match
        """``okstra.gate.match``: ``tree`` (default) or ``commit``."""
        self.allowed_signers = allowed_signers
        """``okstra.gate.allowedSigners`` as written: only verdicts signed by a key listed in
        that ``allowed_signers`` file count."""
        self.allow_delete = allow_delete
        """``okstra.allowDelete``: deleting a protected ref is allowed."""

    @classmethod
    def load(cls, cwd: str | os.PathLike[str] | None = None) -> GateConfig:
        """Read with ``git config`` itself: every scope, includes and conditional includes,
        in ~1 ms and without loading pygit2 (most pushes never need it)."""
        where = ["-C", os.fspath(cwd)] if cwd is not None else []
        code, out, err = git_output(
            *where, "config", "-z", "--show-origin", "--get-regexp", r"^okstra\."
        )
        if code not in (0, 1):  # 1: no okstra.* key at all
            raise BadInput(
                "git config could not be read: " + err.decode("utf-8", "replace").strip()
            )
        values: dict[str, list[ConfigValue]] = {}
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        # origin NUL key LF value NUL, …: the output ends with a NUL, hence strict=False.
        for origin, item in zip(fields[0::2], fields[1::2], strict=False):
            name, newline, value = item.partition("\n")
            if origin.startswith("file:"):  # relative to where git ran: make it absolute
                origin = "file:" + os.path.join(cwd or os.getcwd(), origin[len("file:") :])
            values.setdefault(name.lower(), []).append(
                ConfigValue(value if newline else None, origin)
            )
        return cls.from_values(values)

    @classmethod
    def from_values(cls, values: Mapping[str, Sequence[ConfigValue]]) -> GateConfig:
        """From lowercased key → its values in config order; every bad value is named at once."""
        problems: list[str] = []

        def last(name: str) -> ConfigValue | None:
            found = values.get(name)
            return found[-1] if found else None

        match = "tree"
        found = last("okstra.gate.match")
        if found is not None:
            word = (found.value or "").strip().lower()
            if word in MATCH_MODES:
                match = word
            else:
                problems.append(
                    _bad(
                        found,
                        "okstra.gate.match",
                        "must be tree or commit",
                        ("git", "config", "okstra.gate.match", "tree"),
                    )
                )
        allow_delete = False
        found = last("okstra.allowdelete")
        if found is not None:
            word = "true" if found.value is None else found.value.strip().lower()
            if word in _TRUE + _FALSE:
                allow_delete = word in _TRUE
            else:
                problems.append(
                    _bad(
                        found,
                        "okstra.allowDelete",
                        "is not a boolean (true or false)",
                        ("git", "config", "okstra.allowDelete", "false"),
                    )
                )
        signers = None
        found = last("okstra.gate.allowedsigners")
        if found is not None:
            signers = (found.value or "").strip()
            from .strict import unknown_home

            why = (
                unknown_home(signers)
                if signers
                else "is empty, so it names no file; to stop requiring signed verdicts, remove it"
            )
            if why is not None:
                problems.append(
                    _bad(
                        found,
                        "okstra.gate.allowedSigners",
                        why,
                        ("git", "config", "okstra.gate.allowedSigners", "/PATH/TO/allowed_signers"),
                    )
                )
        protect: list[str] = []
        for found in values.get("okstra.protect", []):
            try:
                protect.append(protect_glob(found.value or ""))
            except BadInput as exc:
                problems.append(
                    _bad(
                        found,
                        "okstra.protect",
                        str(exc),
                        ("git", "config", "--unset-all", "okstra.protect"),
                        "; then add each ref to protect: git config --add okstra.protect "
                        "refs/heads/main",
                    )
                )
        if problems:
            raise BadInput(
                "the verification gate cannot read its config, so it fails closed until this "
                "is fixed (a push of any ref outside refs/okstra/ and refs/notes/ is refused, "
                "ci check fails):\n" + "\n".join(f"  - {p}" for p in problems)
            )
        return cls(
            protect=tuple(dict.fromkeys(protect)) or DEFAULT_PROTECT,
            match=match,
            allowed_signers=signers,
            allow_delete=allow_delete,
        )

    def protecting_glob(self, ref: str) -> str | None:
        """The first ``okstra.protect`` glob that matches ``ref``, or ``None``."""
        return next((g for g in self.protect if glob_match(g, ref)), None)

    def quick(self, ref: str, old: str, new: str) -> Decision | None:
        """Every decision that needs no repository: okstra data, unprotected refs, deletions.
        ``None`` means a verdict must be looked up."""
        data = okstra_data(ref, new)
        if data is not None:
            return data
        glob = self.protecting_glob(ref)
        if glob is None:
            return Decision(ref, new, True, "unprotected")
        if not is_zero(new):
            return None
        if self.allow_delete:
            return Decision(ref, old, True, "delete-allowed")
        return Decision(
            ref,
            old,
            False,
            "delete-refused",
            f"refusing to delete the protected ref {ref} (okstra.protect matches {glob!r}).\n"
            "Fix: deleting protected refs needs okstra.allowDelete in the config of the "
            "repository that enforces the gate: git config okstra.allowDelete true",
        )


def okstra_data(ref: str, new: str) -> Decision | None:
    """The pass for okstra's own refs and every notes ref (they carry the verdicts to the
    server), decided before the config is read: no ``okstra.protect`` value can cover them."""
    return Decision(ref, new, True, "okstra-data") if ref.startswith(_PASS_PREFIXES) else None


_CHAINS = ("refs/okstra/", "refs/notes/okstra/")


def only_commit_chains(decisions: list[Decision]) -> list[Decision]:
    """Refuse okstra refs moved to anything but a commit: tasks, claims and verdict notes are
    commit chains, and a blob there would break every clone that fetches it. One
    ``git cat-file`` (which sees a server's quarantined objects) answers all of them."""

    def moves_a_chain(d: Decision) -> bool:
        return d.allowed and d.ref.startswith(_CHAINS) and not is_zero(d.commit)

    moved = {d.commit for d in decisions if moves_a_chain(d)}
    if not moved:
        return decisions
    _, out, _ = git_output(
        "cat-file",
        "--batch-check=%(objectname) %(objecttype)",
        input="".join(f"{sha}\n" for sha in moved).encode(),
    )
    kinds = dict(line.split(" ", 1) for line in out.decode().splitlines() if " " in line)

    def checked(d: Decision) -> Decision:
        kind = kinds.get(d.commit, "missing")
        if not moves_a_chain(d) or kind == "commit":
            return d
        return Decision(
            d.ref,
            d.commit,
            False,
            "not-a-commit",
            f"refusing to update {d.ref} to {d.commit[:12]}: that is a {kind} object, not a "
            "commit; okstra's refs hold commit chains (publish them with git okstra sync)",
        )

    return [checked(d) for d in decisions]


def _bad(found: ConfigValue, key: str, why: str, fix: Sequence[str], more: str = "") -> str:
    """One config problem: key, value, where it was set, why, and the command that fixes it
    (in the file that set it, when a file did)."""
    from .shell import command

    argv = list(fix)
    if found.origin.startswith("file:"):
        argv[2:2] = ["--file", found.origin[len("file:") :]]
    shown = "(no value)" if found.value is None else repr(found.value)
    return f"{key} = {shown} ({found.origin}): {why}. Fix: {command(*argv)}{more}"


def glob_match(glob: str, ref: str) -> bool:
    """``fnmatch.fnmatchcase(ref, glob)``; a glob whose only wildcard is ``*`` (the default
    ``refs/heads/release/*``, most configured ones) is matched without loading ``re``."""
    if "?" in glob or "[" in glob:
        import fnmatch

        return fnmatch.fnmatchcase(ref, glob)
    if "*" not in glob:
        return ref == glob
    first, *middle, last = glob.split("*")
    if len(ref) < len(first) + len(last) or not ref.startswith(first) or not ref.endswith(last):
        return False
    at, end = len(first), len(ref) - len(last)
    for part in middle:  # each run of literal text, leftmost first
        found = ref.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


# check-ref-format: characters no refname holds, so a glob needing one matches nothing.
_NEVER_IN_REFNAME = r"[\x00-\x20\x7f~^:\\]|\.\.|@\{|//"
_AMBIGUOUS = ("heads/", "tags/", "remotes/", "notes/")


def protect_glob(value: str) -> str:
    """An ``okstra.protect`` value as a full ref glob, or BadInput saying why it cannot be one.

    ``*`` matches any run of characters (``/`` too), ``?`` one character and ``[…]`` one of a
    set (``[!…]`` none of it). A value without ``refs/`` is a branch pattern: ``main`` means
    ``refs/heads/main``; ``tags/v*`` is refused as ambiguous. A glob that could only match an
    impossible refname (unclosed ``[``, a space, ``..``, a trailing ``/``…) is refused rather
    than left protecting nothing.
    """
    glob = value.strip()
    if not glob:
        raise BadInput("is empty; it must name the refs to protect, e.g. refs/heads/main")
    if not glob.startswith("refs/"):
        if glob.startswith(_AMBIGUOUS):
            raise BadInput(f"is ambiguous: write the full ref (refs/{glob} or refs/heads/{glob})")
        glob = "refs/heads/" + glob
    literal = _glob_literal(glob)
    import re  # only when okstra.protect is set

    bad = re.search(_NEVER_IN_REFNAME, literal)
    if bad is not None:
        raise BadInput(f"no ref name can hold {bad.group()!r}, so this glob would protect nothing")
    if literal.endswith("."):
        raise BadInput("no ref name ends with '.', so this glob would protect nothing")
    for part in literal.split("/"):
        if part.startswith(".") or part.endswith(".lock") or not part:
            raise BadInput(
                f"the path part {part!r} cannot be in a ref name (check-ref-format), so this "
                "glob would protect nothing"
            )
    return glob


def _glob_literal(glob: str) -> str:
    """``glob`` with each wildcard replaced by a plain ``x``, so what is left can be checked
    like a refname; an unclosed ``[`` is refused (fnmatch would take it literally)."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "[":
            end = i + 1
            if end < len(glob) and glob[end] == "!":
                end += 1
            if end < len(glob) and glob[end] == "]":
                end += 1
            end = glob.find("]", end)
            if end < 0:
                raise BadInput(
                    f"the '[' at character {i + 1} opens a set that is never closed (a ref "
                    "name cannot hold '['), so this glob would protect nothing"
                )
            out.append("x")
            i = end + 1
            continue
        out.append("x" if ch in "*?" else ch)
        i += 1
    return "".join(out)


def signers_path(common_dir: Callable[[], Path], value: str, key: str) -> Path:
    """A signers file named in config: ``~`` expanded; a relative path is relative to the
    repository's (common) git dir, on clients as on a bare server — never the work tree,
    which an agent can edit. ``common_dir`` is asked only for a relative path."""
    from .strict import home_path

    path = home_path(value, f"config {key}")
    return path if path.is_absolute() else common_dir() / path


def common_dir() -> Path:
    """The common git dir of the repository here, by ``git rev-parse``."""
    from pathlib import Path

    code, out, err = git_output("rev-parse", "--path-format=absolute", "--git-common-dir")
    if code:
        raise BadInput("git rev-parse failed: " + err.decode("utf-8", "replace").strip())
    return Path(out.decode("utf-8", "surrogateescape").rstrip("\n"))


class Rejected:
    """A verdict found for the commit that does not open the gate, and why."""

    __slots__ = ("verdict", "why")

    def __init__(self, verdict: Verdict, why: str) -> None:
        self.verdict = verdict
        """The verdict as read from the note."""
        self.why = why
        """Why it does not count, as the end of a sentence naming it ("is blocked, not …")."""


class Finding:
    """What the verdict notes say about one commit."""

    __slots__ = ("commit", "opening", "problems", "rejected", "tree")

    def __init__(self, commit: str, tree: str) -> None:
        self.commit = commit
        """The commit asked about (peeled)."""
        self.tree = tree
        """Its tree."""
        self.opening: Verdict | None = None
        """A verdict that opens the gate for it, if any."""
        self.rejected: list[Rejected] = []
        """Verdicts found that do not open it."""
        self.problems: list[str] = []
        """Note lines that did not parse (they never count)."""

    @property
    def task_keys(self) -> list[str]:
        keys = [r.verdict.task_key for r in self.rejected]
        return list(dict.fromkeys(keys))


def _identity(verdict: Verdict) -> str:
    """The canonical line: the same verdict read from two notes (commit and tree) is one."""
    from .records.base import dumps_line, to_data

    return dumps_line(to_data(verdict))


class Gate:
    """Decides ref updates against one repository's config and verdict notes.

    Creating one loads the git layer; :meth:`GateConfig.quick` decides what needs no repository.
    """

    def __init__(
        self,
        objects: ObjectReader | GitRepo,
        config: GateConfig | None = None,
        extra_notes: Mapping[str, str] | None = None,
        side: str = "client",
    ) -> None:
        self.objects = objects
        """The repository the verdict notes are read from: git's plumbing (``git cat-file
        --batch``: the hooks and ``ci check``, which must not load pygit2), or a ``GitRepo``
        for a command that has it loaded already (``task status``, ``run start``), which then
        judges with :meth:`find` alone (:meth:`peel` needs the plumbing)."""
        self.config = config or GateConfig.load()
        self._extra_notes = extra_notes
        self._notes: NotesView | None = None
        self.side = side
        """``client`` (pre-push), ``server`` (pre-receive/update) or ``ci``: shapes the fix."""
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
            from .notesview import NotesView

            self._notes = NotesView(self.objects, VERDICTS_REF, self._extra_notes)
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
        from .records.verdict import parse_lines

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
        from .keys import part_problem
        from .shell import okstra

        keys = finding.task_keys
        key = keys[0] if len(keys) == 1 else "KEY"
        # A task key read from a note is untrusted: one that no command could take is not shown.
        if len(key.split(":")) != 3 or any(map(part_problem, key.split(":"))):
            key = "KEY"
        sign = ("--sign",) if self.signers is not None else ()
        record = okstra(
            "verify", "record", key, "--verdict", "accepted", "--report", "REPORT.json", *sign
        )
        verify = (
            f"in the task worktree whose HEAD is {finding.commit[:12]}, run "
            f"`{okstra('verify', 'target', key)}` and then `{record}`"
        )
        if self.side == "server":
            return (
                f"{verify}, and push the verdict notes with the branch: `git push REMOTE "
                "refs/notes/okstra/verdicts <branch>` (or `git okstra sync REMOTE` first)."
            )
        if self.side == "ci":
            return (
                f"{verify}, then `git okstra sync` to publish the verdict notes; fetch them "
                "here with `git okstra ci check --fetch REMOTE`."
            )
        return (
            f"{verify}. If the verdict was recorded on another machine, fetch it first: "
            "`git okstra sync`."
        )


def judge_head(repo: GitRepo, head: str, task: str) -> Finding:
    """The verdicts bearing on task ``task``'s HEAD ``head`` (on it, or on a commit with its
    tree), judged as the pre-push hook judges them: this repository's gate config (match mode,
    allowed signers), the local and fetched verdict notes. For commands that have the git
    layer loaded already (``task status``, ``run start``)."""
    gate = Gate(repo, GateConfig.load(repo.workdir or repo.git_dir))
    return gate.find(head, str(repo.tree_of(head).id), task=task)


class Decision:
    """The gate's answer for one ref update."""

    __slots__ = ("allowed", "commit", "finding", "message", "reason", "ref")

    def __init__(
        self,
        ref: str,
        commit: str,
        allowed: bool,
        reason: str,
        message: str = "",
        finding: Finding | None = None,
    ) -> None:
        self.ref = ref
        """The ref being updated (on the remote, for pre-push)."""
        self.commit = commit
        """The commit it would point to (the old one, for a deletion)."""
        self.allowed = allowed
        """Pass or refuse."""
        self.reason = reason
        """``okstra-data``, ``unprotected``, ``verdict``, ``delete-allowed``,
        ``delete-refused``, ``not-a-commit`` or ``no-verdict``."""
        self.message = message
        """For a refusal: the paragraph to show."""
        self.finding = finding
        """The verdict search behind a ``verdict``/``no-verdict`` decision."""

    def __repr__(self) -> str:
        return f"Decision({self.ref!r}, {self.commit[:12]!r}, {self.reason!r})"
