"""Task keys and the ref-safe slugs made from them (docs/workflow.md). Pure: no git here."""

from __future__ import annotations

import functools
import re

from .errors import BadInput
from .values import Value, remember

TASK_TYPES = (
    "requirements-discovery",
    "error-analysis",
    "implementation-planning",
    "implementation",
    "final-verification",
    "release-handoff",
)

_SLUG_OUTSIDE = re.compile(r"[^a-z0-9._-]+")
_DOT_RUNS = re.compile(r"\.{2,}")
# Long parts are cut and suffixed with a hash so refnames and paths stay short and distinct.
_SLUG_MAX = 64


def _is_control(ch: str) -> bool:
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F


def _not_text(ch: str) -> bool:
    """A line separator str.splitlines breaks at, or a surrogate of undecodable bytes: a key
    holding one could not be printed on one line or stored as UTF-8."""
    code = ord(ch)
    return code in (0x2028, 0x2029) or 0xD800 <= code <= 0xDFFF


class TaskKey(Value):
    """A task's identity, ``project-id:task-group:task-id``, kept byte-exact as typed."""

    _memo = ("_ref_suffix",)
    project: str
    """The project id: ``okstra.projectId`` config, else the repository folder name."""
    group: str
    """The task group, e.g. a ticket or epic id."""
    task_id: str
    """The task id within its group."""

    def __str__(self) -> str:
        return f"{self.project}:{self.group}:{self.task_id}"

    @property
    def group_slug(self) -> str:
        return slug(self.group)

    @property
    def id_slug(self) -> str:
        return slug(self.task_id)

    @property
    def ref_suffix(self) -> str:
        """``<group>/<id>``: the slug path of task refs, claim refs and `.okstra/` folders."""
        try:
            return self._ref_suffix  # type: ignore[attr-defined]  # a slot, not a field
        except AttributeError:  # worked out once: every ref and path of the task needs it
            return remember(self, "_ref_suffix", f"{self.group_slug}/{self.id_slug}")


def part_problem(part: str) -> str | None:
    """Why ``part`` cannot be one part of a task key (docs/workflow.md), or ``None``."""
    if part == "":
        return "is empty"
    if ":" in part:
        return "contains ':', the separator of the key's parts"
    # Every such character is unprintable: a printable part (nearly all) needs no walk.
    bad = (
        None
        if part.isprintable()
        else next((ch for ch in part if _is_control(ch) or _not_text(ch)), None)
    )
    if bad is not None:
        kind = (
            "a lone surrogate (not UTF-8 text)"
            if 0xD800 <= ord(bad) <= 0xDFFF
            else ("control character" if _is_control(bad) else "line separator")
        )
        return f"contains {kind} U+{ord(bad):04X}"
    if part.strip(". \t\u3000") == "" or part.strip() == "":
        return "is made only of dots or whitespace"
    return None


def check_part(part: str, what: str, key_text: str) -> None:
    problem = part_problem(part)
    if problem is not None:
        raise BadInput(f"task key {key_text!r}: {what} {problem}")


def check_project_id(value: str, where: str) -> str:
    """A configured or default project id, refused (naming ``where`` and the fix) when no task
    key could hold it: every later command would fail to parse the task's key."""
    problem = part_problem(value)
    if problem is not None:
        raise BadInput(
            f"{where} = {value!r} cannot be the project-id of a task key (it {problem}). "
            "Fix: git config okstra.projectId NAME (no ':', no control characters)"
        )
    return value


@functools.lru_cache(maxsize=1024)
def parse_task_key(text: str, default_project: str | None = None) -> TaskKey:
    """Parse ``project:group:id``; ``group:id`` takes ``default_project`` when one is given.

    Kept per text (a key is immutable): every claim read checks the key it names, claim
    after claim."""
    parts = text.split(":")
    if len(parts) == 2 and default_project is not None:
        parts = [default_project, *parts]
    if len(parts) != 3:
        raise BadInput(
            f"task key {text!r} must have exactly three ':'-separated parts "
            "(project-id:task-group:task-id), or two when the project id comes from config"
        )
    for part, what in zip(parts, ("project-id", "task-group", "task-id"), strict=True):
        check_part(part, what, text)
    return TaskKey(*parts)


def slug(part: str) -> str:
    """A ref-safe path segment for one key part (docs/workflow.md).

    Lowercase, runs outside ``[a-z0-9._-]`` become ``-``, no ``..``, trimmed of ``-`` and
    ``.``, never ending in ``.lock``. Nothing left (e.g. non-ASCII) gives ``u-<sha1[:10]>``.
    """
    text = _SLUG_OUTSIDE.sub("-", part.lower())
    text = _DOT_RUNS.sub("-", text).strip("-.")
    if text.endswith(".lock"):
        text = text[: -len(".lock")] + "-lock"
    if text and len(text) <= _SLUG_MAX:
        return text
    from .machine import sha1_hex  # only for a part that leaves no slug, or too long a one

    digest = sha1_hex(part.encode("utf-8", "surrogatepass"))
    if not text:
        return f"u-{digest[:10]}"
    return text[: _SLUG_MAX - 11].rstrip("-.") + "-" + digest[:10]
