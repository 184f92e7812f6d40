"""The plan ``plan init`` writes (docs/plan-format.md): every part okstra reads, in the layout
it reads them, with ``<fill in: …>`` where the planner's own text goes. Pure.

``plan validate`` (and ``plan submit``, ``plan approve``) refuse a plan while any ``<fill in: …>``
is left in it, so a skeleton is never mistaken for a plan; filled in, it validates.
"""

from __future__ import annotations

import re

from .batch import RUN_STEP_BUDGET
from .clarify import BLOCKS, COLUMNS, KINDS, STATUSES
from .stagemap import CANONICAL_HEADER, STAGE_STEP_CAP, Finding

PLACEHOLDER = re.compile(r"<fill in:[^>\n]*>")
"""What the skeleton leaves for the planner: ``<fill in: what goes here>``."""

UNFILLED = "unfilled"
"""The check id of a placeholder left in a plan."""


def unfilled(text: str) -> list[Finding]:
    """One finding per line that still holds a ``<fill in: …>`` of the skeleton."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        match = PLACEHOLDER.search(line)
        if match is not None:
            found.append(
                Finding(
                    UNFILLED,
                    (),
                    number,
                    f"{match.group(0)} is left from `git okstra plan init`; replace it with the "
                    "plan's own text",
                )
            )
    return found


def _stage(number: int, depends: str) -> tuple[str, str]:
    row = f"| {number} | <fill in: title of stage {number}> | 2 | {depends} |"
    section = f"""\
### Stage {number} — <fill in: title of stage {number}, as in the Stage Map>
1. <fill in: step 1 of stage {number} — one change a reviewer can check>
2. <fill in: step 2 of stage {number}>

#### Stage Exit Contract
- Added/changed files (predicted): `<fill in: path/of/a/file/stage {number} changes>`
- Exit check: <fill in: the command that shows stage {number} is done, e.g. its tests>
"""
    return row, section


def skeleton(key: str) -> str:
    """A plan for task ``key`` with two stages (2 depends on 1) to fill in, add to or cut."""
    rows, sections = zip(_stage(1, "(none)"), _stage(2, "1"), strict=True)
    header = " | ".join(COLUMNS)
    delimiter = "|".join("---" for _ in COLUMNS)
    return f"""\
# Implementation plan — {key}

<!--
Written by `git okstra plan init`; the format: `git okstra docs plan-format`.
Replace every placeholder that starts with "<fill in" (plan validate refuses the plan while one
is left), add or remove stages, then:
  git okstra plan validate FILE   (S1-S7, S9 and section 5)
  git okstra plan submit {key} FILE
  git okstra plan approve {key}   (or tick the box below by hand)
What okstra reads, and its rules:
- the approval marker line below: exactly one, on a line of its own;
- "## 5. Clarification Items": one table with the columns
  {" | ".join(COLUMNS)};
  Kind is {", ".join(KINDS)}; Blocks is {", ".join(BLOCKS)};
  Status is {", ".join(STATUSES)}. A Blocks=approval row that is
  open or answered blocks the approval. Keep the placeholder row when there are no items.
- "## 5.5 Stage Map": the table {CANONICAL_HEADER},
  stages numbered 1..n, Depends-on `(none)` or a comma list of stage numbers (no cycles).
  Each stage has 1 to {STAGE_STEP_CAP} effective steps, and its Effective steps cell equals the
  numbered steps of its section.
- one "### Stage N — Title" section per row: its numbered steps, then "#### Stage Exit
  Contract" with the "Added/changed files (predicted):" line. Stages that can run at the same
  time (neither depends on the other) must predict disjoint files.
- a run claims the ready stages in number order while their effective steps add up to at most
  {RUN_STEP_BUDGET} (the run budget): several small stages share a run, a large one runs alone.
-->

## User Approval Request

> The next `implementation` run starts only from an approved plan. Read sections 1 to 5.5, make
> sure every `Blocks=approval` row of section 5 is `resolved` or `obsolete`, then tick the box
> below or run `git okstra plan approve {key}`.

- [ ] Approved

## 1. Summary

<fill in: what this plan changes and why, in two or three sentences>

## 5. Clarification Items

| {header} |
|{delimiter}|
| - | - | - | No clarification items. | - | - | - | - |

## 5.5 Stage Map

{CANONICAL_HEADER}
|---|---|---|---|
{chr(10).join(rows)}

{chr(10).join(sections)}"""
