"""Reading and planning writes of ``packed-refs``, the one file git keeps most refs in.

The gate's reader (``plumbing.refs_in_files``, on every protected push) searches the file with
:func:`_entries_under` too, so this module loads nothing at import: ``os`` and ``bisect`` are
loaded by the functions that need them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    from pathlib import Path


def _packed_refs_under(path: Path, prefix: str, first: bool = False) -> dict[str, str]:
    """Entries of ``packed-refs`` under ``prefix`` (only the first one with ``first``).

    git writes the file sorted by refname (the ``sorted`` trait in its header), so binary-search
    to the first candidate and past the last one instead of reading 100k lines on every push
    (or on every ``task show``: a task's claims sort before every task); an unsorted file (old
    git) is scanned whole.
    """
    import os

    try:
        with open(path, "rb") as packed:
            if os.fstat(packed.fileno()).st_size == 0:
                return {}
            import mmap  # not for a clone whose refs are all loose

            # Mapped, not read: a prefix of a few refs touches a few pages of the 7 MB file of
            # 100k refs (a concurrent rewrite renames a new file in: this one stays whole).
            data = mmap.mmap(packed.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return {}
    with data:
        return _entries_under(data, prefix.encode("utf-8", "surrogateescape"), first)


def _entries_under(data: bytes | mmap.mmap, key: bytes, first: bool) -> dict[str, str]:
    """:func:`_packed_refs_under` in the file's mapped bytes ``data``."""
    is_sorted = data[:17] == b"# pack-refs with:" and b" sorted" in data[: data.find(b"\n")]
    start, stop = 0, len(data)
    if is_sorted:
        start = _first_line_at_or_after(data, key)
        if key[-1:] not in (b"", b"\xff"):  # every name under the prefix sorts before this one
            stop = _first_line_at_or_after(data, key[:-1] + bytes([key[-1] + 1]))
    found: dict[str, str] = {}
    for raw in data[start:stop].split(b"\n"):
        if raw[:1] in (b"#", b"^") or len(raw) < 42:
            continue
        name = raw[41:]
        if name.startswith(key):
            found[name.decode("utf-8", "surrogateescape")] = raw[:40].decode("ascii")
            if first:
                break
        elif is_sorted and name > key:
            break  # past the prefix: nothing further can match
    return found


def _packed_entries(data: bytes) -> tuple[bytes, dict[str, bytes]]:
    """``packed-refs`` as its header (its traits, and ``sorted``: it is written sorted) and
    refname → its lines (the ref line and any ``^<peeled>`` line after it)."""
    traits = [b"peeled", b"fully-peeled"] if not data else []
    entries: dict[str, bytes] = {}
    name = ""
    for line in data.splitlines(keepends=True):
        if line.startswith(b"# pack-refs with:"):
            traits = line.split()[3:]
        elif line.startswith(b"^") and name:
            entries[name] += line
        elif len(line) > 41 and line[40:41] == b" ":
            name = line[41:].rstrip(b"\n").decode("utf-8", "surrogateescape")
            entries[name] = line.rstrip(b"\n") + b"\n"
        else:
            raise ValueError(f"an unexpected packed-refs line {line[:60]!r}")
    traits += [b"sorted"] if b"sorted" not in traits else []
    return b"# pack-refs with: " + b" ".join(traits) + b" \n", entries


def _shared_folder(names: list[str]) -> str:
    """The deepest folder (ending in ``/``) holding every refname of ``names``."""
    first, last = min(names), max(names)  # what they share, every name between shares
    size = next(
        (n for n, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    return first[: first.rfind("/", 0, size) + 1]


def _loose_names(common_dir: Path, folder: str) -> set[str]:
    """Every loose ref (or ref lock) under ``folder`` (ending in ``/``), and each ref-name
    prefix of ``folder`` that is a file: what a packed value would not override, or would
    clash with."""
    import os

    found = set()
    parts = folder.split("/")[:-1]
    for n in range(1, len(parts) + 1):
        if (common_dir / "/".join(parts[:n])).is_file():
            found.add("/".join(parts[:n]))
    base = len(str(common_dir)) + 1
    for where, _dirs, files in os.walk(common_dir / folder):
        for name in files:
            ref = os.path.join(where, name)[base:].replace(os.sep, "/")
            found.add(ref.removesuffix(".lock"))
    return found


def _clashing(names: list[str], taken: set[str]) -> set[str]:
    """The ``names`` that a ref among ``taken`` (or among ``names``) holds as a folder, or
    that hold one as a folder: git refuses both, so a ref transaction must decide them."""
    import bisect

    every = sorted(taken.union(names))
    free: set[str] = set()  # folders known to be no ref
    found = set()
    for name in names:
        folder = name[: name.rfind("/")]
        while folder and folder not in free:
            if folder in taken:
                found.add(name)
                break
            free.add(folder)
            folder = folder[: folder.rfind("/")] if "/" in folder else ""
        below = bisect.bisect_left(every, name + "/")
        if below < len(every) and every[below].startswith(name + "/"):
            found.add(name)
    return found


def _first_line_at_or_after(data: bytes | mmap.mmap, key: bytes) -> int:
    """Offset of the first ref line of sorted ``packed-refs`` whose name is >= ``key``.

    A ``^<peeled>`` line belongs to the ref line above it and the header sorts first.
    """
    lo, hi = 0, len(data)
    while lo < hi:
        line_start = data.rfind(b"\n", 0, (lo + hi) // 2) + 1
        line_start = max(line_start, lo)
        owner = line_start
        while data[owner : owner + 1] == b"^" and owner > 0:
            owner = data.rfind(b"\n", 0, owner - 1) + 1
        line_end = data.find(b"\n", line_start)
        line_end = len(data) if line_end < 0 else line_end
        owner_end = data.find(b"\n", owner)
        name = b"" if data[owner : owner + 1] == b"#" else data[owner + 41 : owner_end]
        if name < key:
            lo = line_end + 1
        else:
            hi = line_start
    return lo
