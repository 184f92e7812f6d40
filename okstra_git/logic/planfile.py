"""Reading and validating plan files (docs/workflow.md). Pure: no git here, so ``plan validate`` and
``clarify status`` never load pygit2."""

from __future__ import annotations

import os

from ..core.errors import BadInput
from ..core.userfiles import decode_text, read_capped
from ..core.values import Value, init
from .stagemap import Finding, StageMap, parse_plan, validate

MAX_PLAN_BYTES = 2 << 20
"""Plans and reports are documents people read; anything larger is refused (exit 2)."""


class PlanFile(Value):
    """A plan's exact bytes, its text and its git blob id."""

    path: str
    """How messages name the file."""
    raw: bytes
    """The bytes on disk: the blob id and every rewrite start from these."""
    text: str
    """``raw`` decoded as UTF-8."""

    @property
    def blob(self) -> str:
        return blob_id(self.raw)


def blob_id(raw: bytes) -> str:
    """The id git gives ``raw`` as a blob (``git hash-object``), without writing it."""
    from ..core.machine import sha1_hex

    return sha1_hex(b"blob %d\0" % len(raw) + raw)


def decode_plan(raw: bytes, path: str, what: str = "plan") -> PlanFile:
    """Check that ``raw`` is a text document; BadInput names the file and the line."""
    if len(raw) > MAX_PLAN_BYTES:
        line = raw[:MAX_PLAN_BYTES].count(b"\n") + 1
        raise BadInput(
            f"{what} {path}: larger than the {MAX_PLAN_BYTES >> 20} MiB cap (reached on line "
            f"{line}); a {what} is a document people read — move bulk data out of it"
        )
    return PlanFile(path, raw, decode_text(raw, path, what))


def read_plan_file(path: str | os.PathLike[str], what: str = "plan") -> PlanFile:
    """Read a plan (or report) from disk, refusing missing, binary and oversized files."""
    return decode_plan(read_capped(path, what, MAX_PLAN_BYTES), os.fspath(path), what)


class Validation(Value):
    """The Stage Map of a plan and every failed check (docs/workflow.md), and what of §5 is
    unreadable."""

    path: str
    """The plan, as messages name it."""
    stage_map: StageMap
    """What was read."""
    findings: list[Finding]
    """Failed Stage Map checks, in check order."""
    clarification: list[Finding]
    """§5 lines the approval gate cannot read (check ``§5``): a header that is not the §5
    header, a row with an unknown Kind, Blocks or Status. Approval refuses them on its own."""
    unfilled: list[Finding]
    """Lines still holding a ``<fill in: …>`` of ``plan init``'s skeleton (check
    ``unfilled``): a skeleton is not a plan."""

    def __init__(
        self,
        path: str,
        stage_map: StageMap,
        findings: list[Finding],
        clarification: list[Finding] | None = None,
        unfilled: list[Finding] | None = None,
    ) -> None:
        init(
            self,
            path=path,
            stage_map=stage_map,
            findings=findings,
            clarification=[] if clarification is None else clarification,
            unfilled=[] if unfilled is None else unfilled,
        )

    @property
    def valid(self) -> bool:
        return not self.findings and not self.clarification and not self.unfilled

    @property
    def problems(self) -> list[Finding]:
        """Every failed check: the Stage Map's, then §5's, then what is left unfilled."""
        return self.findings + self.clarification + self.unfilled

    def report(self, *, stage_map_only: bool = False) -> str:
        """The failures, one per line; ``stage_map_only``: the Stage Map's and what is left
        unfilled (what submitting and approving refuse), not §5's (the approval gate's)."""
        found = self.findings + self.unfilled if stage_map_only else self.problems
        return "\n".join("  " + f.render(self.path) for f in found)


def validate_text(text: str, path: str) -> Validation:
    from .clarify import parse_clarification_items  # not for reading a stored snapshot
    from .planskeleton import unfilled

    stage_map = parse_plan(text, path)
    unreadable = [
        Finding("§5", (), row.line, row.reason) for row in parse_clarification_items(text).malformed
    ]
    return Validation(path, stage_map, validate(stage_map), unreadable, unfilled(text))


def validate_plan_file(path: str) -> Validation:
    return validate_text(read_plan_file(path).text, path)
