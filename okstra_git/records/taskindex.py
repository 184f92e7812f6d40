"""What ``task list`` shows of each task, remembered by commit id.

A task commit never changes, so neither does what its manifest says. Listing 100k tasks reads
and checks 100k manifests (seconds); this index answers for the commits it has seen in a
fraction of that. It lives in the common git dir (``okstra-cache/task-list.json``) and is only
a copy: removing it loses nothing; a file that does not parse, that another version wrote or
that holds anything but text where text belongs is ignored; a manifest is read and checked in
full the first time its commit is listed. Whoever listed commits it did not know writes it
again, whole, by an atomic rename.
"""

from __future__ import annotations

import os
from operator import itemgetter

from .. import __version__

# Completion reads the kept keys on every TAB: neither pygit2 (git/repo) nor contextlib and
# collections (with functools, ~13M instructions, a third of the TAB's imports) are loaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..git.repo import GitRepo
    from .task import Task

INDEX_PATH = "okstra-cache/task-list.json"
"""In the common git dir: one index for every worktree of the repository."""
FORMAT = f"okstra-git {__version__}, task-list 1"
"""Another version may check manifests differently: it reads and checks them again."""


class Listed(tuple):
    """A task as ``task list`` shows it: its ref, then what its manifest says.

    A tuple with named fields (what ``namedtuple`` makes, without compiling a class as it
    loads): a listing builds one per task, 100k of them, where a dataclass costs ~1 µs each."""

    __slots__ = ()
    ref = property(itemgetter(0), doc="The task ref.")
    task_key = property(itemgetter(1), doc="The manifest's ``taskKey``.")
    task_group = property(itemgetter(2), doc="Its ``taskGroup`` (``--group`` filters on it).")
    task_type = property(itemgetter(3), doc="Its ``taskType``.")
    current_phase = property(itemgetter(4), doc="``workflow.currentPhase``.")
    current_status = property(itemgetter(5), doc="``currentStatus``.")
    next_recommended_phase = property(itemgetter(6), doc="``workflow.nextRecommendedPhase``.")


_COLUMNS = (
    "commit",
    "task_key",
    "task_group",
    "task_type",
    "current_phase",
    "current_status",
    "next_recommended_phase",
)
"""The index's columns: a commit, and what :class:`Listed` shows of it after the ref."""


def _fields_of(task: Task) -> tuple[str | None, ...]:
    """What :class:`Listed` shows of a manifest, in order, after the ref."""
    flow = task.workflow
    return (
        task.task_key,
        task.task_group,
        task.task_type,
        flow.current_phase,
        task.current_status,
        flow.next_recommended_phase,
    )


def listed_at(repo: GitRepo, heads: Mapping[str, str], every: bool) -> list[Listed]:
    """What ``task list`` shows of each task ref in ``heads`` (ref → commit); a manifest that
    does not read or check is refused as :func:`read_manifests` refuses it. ``every``: ``heads``
    are all the task refs, so the index forgets the commits no task ref holds any more."""
    path = repo.common_dir / INDEX_PATH
    known = _load(path)
    unknown = {ref: head for ref, head in heads.items() if head not in known}
    if unknown:
        from .task import read_manifests

        for ref, task in read_manifests(repo, unknown).items():
            known[unknown[ref]] = _fields_of(task)
    found = [Listed((ref, *known[head])) for ref, head in heads.items()]
    if every and len(known) > len(set(heads.values())):
        known = {head: known[head] for head in heads.values()}
    elif not unknown:
        return found
    _save(path, known)
    return found


def indexed_keys(common_dir: str, heads: Mapping[str, str]) -> list[str] | None:
    """The task keys of the task refs in ``heads`` (ref → commit) as the index knows them, or
    ``None`` when it lacks one of the commits (:func:`listed_at` reads and remembers them).
    Neither pygit2 nor a manifest is read."""
    known = _load(os.path.join(common_dir, INDEX_PATH))
    try:
        keys = [known[head][0] for head in heads.values()]
    except KeyError:
        return None
    return [key for key in keys if key is not None]


KEYS_PATH = "okstra-cache/task-keys.txt"
"""In the common git dir: every task key, for completion, beside the task refs' names it was
made for and a mark of the files that held them (``git/plumbing.ref_files_mark``). A task's
key never changes and tasks are never deleted, so the names alone say whether it is current;
task events (new commits) leave it so."""
_KEYS_FORMAT = b"okstra-git task-keys 3"
"""Its first line; then the mark, the sizes of the keys and of the names, the keys (one a line),
the names (``git for-each-ref``'s output). Keys first: a TAB whose mark holds reads only them."""


def _kept(common_dir: str, names_too: bool) -> tuple[bytes, bytes, bytes] | None:
    """The mark, the keys block and (``names_too``) the names block of the file
    :func:`remember_keys` wrote."""
    try:
        with open(os.path.join(common_dir, KEYS_PATH), "rb") as kept:
            head = [kept.readline(4096) for _ in range(4)]
            if head[0] != _KEYS_FORMAT + b"\n" or not all(h.endswith(b"\n") for h in head):
                return None
            mark, keys_size, names_size = (h[:-1] for h in head[1:])
            if not (keys_size.isdigit() and names_size.isdigit()):
                return None
            keys = kept.read(int(keys_size))
            names = kept.read(int(names_size) + 1) if names_too else b""
    except OSError:
        return None
    if len(keys) != int(keys_size) or (names_too and len(names) != int(names_size)):
        return None  # cut short, or longer than it says
    return mark, keys, names


def _keys(block: bytes, prefix: str = "") -> list[str] | None:
    """The keys of ``block`` (a key a line) that start with ``prefix``: found in the bytes, so
    a TAB after a few letters decodes its few keys, not all 20,000. The kept keys are sorted,
    so those are one run of lines, from the first to the last: checked, cut and decoded whole
    by bytes methods, with no Python loop over them (a key found line by line cost ~5,000
    instructions, 12M of a TAB's 98M at 2,200 keys). Keys in any other order are found line
    by line."""
    try:
        if not prefix:
            return block.decode("utf-8").splitlines()
        if "\n" in prefix:  # no key holds one
            return []
        wanted = prefix.encode("utf-8", "surrogateescape")
        after_newline = b"\n" + wanted
        if block.startswith(wanted):
            at = 0
        else:
            at = block.find(after_newline) + 1
            if not at:
                return []
        last = block.rfind(after_newline) + 1 or at  # where the last one starts
        end = block.find(b"\n", last)
        end = len(block) if end < 0 else end
        if block.count(b"\n", at, end) == block.count(after_newline, at, end):  # one run
            return block[at:end].decode("utf-8").split("\n")
        found = []
        while True:
            end = block.find(b"\n", at)
            end = len(block) if end < 0 else end
            found.append(block[at:end].decode("utf-8"))
            at = block.find(after_newline, end) + 1
            if not at:
                return found
    except UnicodeDecodeError:
        return None


def remembered_keys(common_dir: str, mark: str | None, prefix: str = "") -> list[str] | None:
    """The task keys :func:`remember_keys` kept when the files holding the task refs were
    exactly ``mark`` (``None``: it cannot be told that way), else ``None``; only those that
    start with ``prefix``."""
    kept = _kept(common_dir, names_too=False) if mark is not None else None
    if kept is None or mark is None or kept[0] != mark.encode("utf-8", "surrogateescape"):
        return None
    return _keys(kept[1], prefix)


def keys_for_names(common_dir: str, names: bytes, prefix: str = "") -> list[str] | None:
    """The task keys :func:`remember_keys` kept for exactly the task refs ``names`` (``git
    for-each-ref --format=%(refname)``'s output), else ``None``; only those that start with
    ``prefix``. The names are compared whole: no digest to compute (loading ``hashlib`` alone
    costs a TAB ~8 ms)."""
    kept = _kept(common_dir, names_too=True)
    if kept is None or kept[2] != names:
        return None
    return _keys(kept[1], prefix)


def remember_keys(common_dir: str, mark: str | None, names: bytes, keys: list[str]) -> None:
    """Keep ``keys`` for the task refs ``names``, read when their files were ``mark``: written
    whole, renamed into place; a repository this user may not write to only costs the next TAB
    its speed."""
    path = os.path.join(common_dir, KEYS_PATH)
    block = "".join(f"{k}\n" for k in keys).encode()
    mark_line = (mark or "-").encode("utf-8", "surrogateescape")
    head = [_KEYS_FORMAT, mark_line, b"%d" % len(block), b"%d" % len(names)]
    text = b"\n".join(head) + b"\n" + block + names
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError:
        _remove(temporary)


def _load(path: os.PathLike[str] | str) -> dict[str, tuple[str | None, ...]]:
    """commit → the fields of :class:`Listed`, or nothing from a file that is not sound.

    Stored by column, so that each column is checked in one pass (a text column holds only
    strings, the last strings or null) and the rows are rebuilt with one ``zip``."""
    import json  # not at import: a TAB reads only the kept keys, never this index

    try:
        with open(path, "rb") as index:
            data = json.loads(index.read())
    except (OSError, ValueError, RecursionError):
        return {}
    if type(data) is not dict or data.get("format") != FORMAT:
        return {}
    found = [data.get(name) for name in _COLUMNS]
    columns: list[list[str]] = [column for column in found if type(column) is list]
    if len(columns) != len(_COLUMNS):
        return {}
    *texts, last = columns
    if len(set(map(len, columns))) != 1 or not all(set(map(type, c)) <= {str} for c in texts):
        return {}
    if not set(map(type, last)) <= {str, type(None)}:
        return {}
    commits, *fields = columns
    return dict(zip(commits, zip(*fields, strict=True), strict=True))


def _save(path: os.PathLike[str], known: Mapping[str, tuple[str | None, ...]]) -> None:
    """Write the index whole and rename it into place; a repository this user may not write
    to keeps its old index (or none): it only costs the next listing its speed."""
    rows = [(commit, *fields) for commit, fields in known.items()]
    columns = list(zip(*rows, strict=True)) or [()] * len(_COLUMNS)
    data = {"format": FORMAT, **dict(zip(_COLUMNS, columns, strict=True))}
    import json

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    folder = os.path.dirname(path)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError:
        _remove(temporary)


def _remove(temporary: str) -> None:
    """Remove what a write that failed left, if anything (not ``contextlib.suppress``: a TAB
    imports this module, and contextlib would load collections and functools with it)."""
    try:  # noqa: SIM105
        os.unlink(temporary)
    except OSError:
        pass
