"""The gate's configuration: which refs it protects, how a verdict must match, whose signatures
count (docs/security.md). Read where the gate reads it; an invalid value fails closed."""

from __future__ import annotations

from ..core.errors import BadInput
from ..core.values import Value
from ..git.plumbing import git_output
from .decision import Decision, is_zero, okstra_data

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path


DEFAULT_PROTECT = ("refs/heads/main", "refs/heads/master", "refs/heads/release/*")


MATCH_MODES = ("tree", "commit")


_TRUE = ("true", "yes", "on", "1")


_FALSE = ("false", "no", "off", "0", "")


class ConfigValue(Value):
    """One value of a config key as ``git config --show-origin`` reports it."""

    value: str | None
    """The value; ``None`` for a key written without ``= value`` (git's boolean true)."""
    origin: str
    """Where it was set: ``file:<path>``, ``command line:`` …"""


class GateConfig(Value):
    """The gate's settings, from the config of the repository where the gate runs.

    Every value is checked here, where it is read: the gate fails closed, so a value it cannot
    read (a glob that would protect nothing, an unknown match mode, an empty signers path)
    refuses the push with the key, the value, where it was set and the fix — never a gate
    that silently protects less.
    """

    protect: tuple[str, ...]
    """``okstra.protect`` globs as full refs (``*`` also matches ``/``, so a glob never
    protects too little; a bare branch pattern such as ``main`` is ``refs/heads/main``)."""
    match: str
    """``okstra.gate.match``: ``tree`` (default) or ``commit``."""
    allowed_signers: str | None
    """``okstra.gate.allowedSigners`` as written: only verdicts signed by a key listed in
    that ``allowed_signers`` file count."""
    allow_delete: bool
    """``okstra.allowDelete``: deleting a protected ref is allowed."""

    @classmethod
    def load(cls, cwd: str | os.PathLike[str] | None = None) -> GateConfig:
        """Read with ``git config`` itself: every scope, includes and conditional includes,
        in ~1 ms and without loading pygit2 (most pushes never need it), nor ``os`` in a
        hook's process (``core/lightos.py``)."""
        from ..core.lightos import absolute, join, system

        base = None if cwd is None else system.fspath(cwd)
        where = [] if base is None else ["-C", base]
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
                path = origin[len("file:") :]
                origin = "file:" + (join(base, path) if base else absolute(path))
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
            from ..core.strict import unknown_home

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
        """The first ``okstra.protect`` glob that matches ``ref`` ignoring case, or ``None``.

        Case is ignored because a server keeping its refs on a case-insensitive file system
        (macOS, Windows) moves ``refs/heads/main`` for a push to ``refs/heads/MAIN``; the globs
        are lowercase (:func:`protect_glob`), so this can only protect more."""
        lowered = ref.lower()
        return next((g for g in self.protect if glob_match(g, lowered)), None)

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


def _bad(found: ConfigValue, key: str, why: str, fix: Sequence[str], more: str = "") -> str:
    """One config problem: key, value, where it was set, why, and the command that fixes it
    (in the file that set it, when a file did)."""
    from ..core.shell import command

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
    listed = _list_like(glob)
    if listed is not None:
        raise BadInput(listed)
    if glob != glob.lower():
        # refs/heads/main, not REFS/HEADS/MAIN (a branch pattern under refs/heads/REFS/…):
        # the gate matches ignoring case, so a lowercase glob covers every spelling.
        raise BadInput(
            "must be written in lowercase: "
            f"{protect_glob(glob.lower())} (refs are matched ignoring case, so it also covers "
            "refs spelt with capitals)"
        )
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


_LIST_MARKS = ",;|{}"


def _list_like(glob: str) -> str | None:
    """Why ``glob`` reads as several refs in one value (``a,b``, ``{a,b}``, ``a;b``), or
    ``None``. Such a value is a legal ref name, so without this it would protect the one ref of
    that odd name and drop the defaults: nothing the user meant."""
    marks = [ch for ch in _LIST_MARKS if ch in glob]
    if not marks:
        return None
    from ..core.shell import command

    why = (
        f"holds {', '.join(repr(m) for m in marks)}, so it looks like a list; okstra.protect "
        "takes one glob per value (and no {a,b} sets)"
    )
    import re

    parts = [p for p in re.split(r"[,;|]", glob) if p.strip()]
    if "{" in glob or "}" in glob or len(parts) < 2:
        return why + ": add each ref as its own value with git config --add okstra.protect GLOB"
    adds = "; ".join(command("git", "config", "--add", "okstra.protect", p.strip()) for p in parts)
    return f"{why}: add each as its own value: {adds}"


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
    from ..core.strict import home_path

    path = home_path(value, f"config {key}")
    return path if path.is_absolute() else common_dir() / path


def common_dir() -> Path:
    """The common git dir of the repository here, by ``git rev-parse``."""
    from pathlib import Path

    code, out, err = git_output("rev-parse", "--path-format=absolute", "--git-common-dir")
    if code:
        raise BadInput("git rev-parse failed: " + err.decode("utf-8", "replace").strip())
    return Path(out.decode("utf-8", "surrogateescape").rstrip("\n"))
