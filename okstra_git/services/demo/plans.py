"""Demo step: a diamond plan is submitted, its approval refused while §5 blocks, then approved."""

from __future__ import annotations

from .world import Demo

PLAN_PATH = "docs/plans/add-mul-plan.md"
OPEN_ROW = "| `approval` | open |  |"
RESOLVED_ROW = "| `approval` | resolved | `calc mul 2 3` prints 6 |"
C001 = (
    "| C-001 | `CALC-7` | `decision` | What should `calc mul 2 3` print: `6` or `2 * 3 = 6`? "
    "Stage 3 formats the output. | (a) `6` (b) `2 * 3 = 6`"
)

PLAN = f"""\
# Implementation plan — demo:calc:add-mul

## User Approval Request

> The next `implementation` run may start only when the box below is ticked. Every
> `Blocks=approval` row of section 5 must be `resolved` or `obsolete` first.

- [ ] Approved

- From the command line: `git okstra plan approve demo:calc:add-mul`

## 1. Summary

Give calc a multiplication module and a small command line, on top of operand checks shared by
both, then document them. Stages 2 and 3 touch disjoint files, so they can run in parallel.

## 5. Clarification Items

| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |
|----|-----------|------|-----------|---------------|--------|--------|------------|
{C001} {OPEN_ROW}

## 5.5 Stage Map

| Stage | Title | Effective steps | Depends-on |
|---|---|---|---|
| 1 | Operand checks | 2 | (none) |
| 2 | Multiplication | 2 | 1 |
| 3 | Command line | 2 | 1 |
| 4 | Document mul and the CLI | 1 | 2, 3 |

### Stage 1 — Operand checks
1. Add `check_number(x)` to `calc/core.py`, rejecting anything but int and float; use it in `add`.
2. Cover the rejection in `tests/test_core.py`.

#### Stage Exit Contract
- Added/changed files (predicted): `calc/core.py`, `tests/test_core.py`

### Stage 2 — Multiplication
1. Add `calc/mul.py` with `mul(a, b)`, checking both operands with `check_number`.
2. Test it in `tests/test_mul.py`.

#### Stage Exit Contract
- Added/changed files (predicted): `calc/mul.py`, `tests/test_mul.py`

### Stage 3 — Command line
1. Add `calc/cli.py`: `python -m calc.cli add|mul A B` prints the result.
2. Test both operations in `tests/test_cli.py`.

#### Stage Exit Contract
- Added/changed files (predicted): `calc/cli.py`, `tests/test_cli.py`

### Stage 4 — Document mul and the CLI
1. Describe `mul` and the command line in `README.md`.

#### Stage Exit Contract
- Added/changed files (predicted): `README.md`
"""


def step(demo: Demo) -> None:
    demo.step("Plan with a diamond Stage Map: validate, submit, approve")
    demo.write(PLAN_PATH, PLAN)
    demo.facts["plan"] = PLAN_PATH
    demo.run("git", "add", PLAN_PATH, quiet=True)
    demo.run("git", "commit", "-q", "-m", "plan: calc add-mul", quiet=True)
    demo.run(
        "git",
        "okstra",
        "run",
        "finish",
        demo.key,
        "--type",
        "implementation-planning",
        "--seq",
        "001",
        "--status",
        "completed",
        "--report",
        PLAN_PATH,
    )
    demo.run("git", "okstra", "plan", "validate", PLAN_PATH)
    demo.run("git", "okstra", "plan", "submit", demo.key, PLAN_PATH)
    demo.run("git", "okstra", "clarify", "status", PLAN_PATH)
    # C-001 is open and blocks approval: the gate says no and names the row and the file.
    demo.run("git", "okstra", "plan", "approve", demo.key, expect=1)
    demo.run("git", "okstra", "run", "start", demo.key, "--type", "implementation", expect=1)

    demo.narration.note("the user answers C-001 in the plan and marks it resolved")
    text = (demo.repo / PLAN_PATH).read_text("utf-8")
    demo.write(PLAN_PATH, text.replace(OPEN_ROW, RESOLVED_ROW, 1))
    demo.run("git", "okstra", "plan", "approve", demo.key)
    demo.run("git", "okstra", "plan", "approve", demo.key)  # again: nothing changes
    demo.run("git", "okstra", "plan", "status", demo.key)
    blob = demo.run("git", "hash-object", PLAN_PATH, quiet=True).stdout.strip()
    demo.facts["plan_blob"] = blob
    demo.run("git", "notes", "--ref", "okstra/approvals", "show", blob)
    # The task worktree branches from main later: the approved plan must be committed there.
    demo.run("git", "commit", "-q", "-m", "plan: calc add-mul approved", "--", PLAN_PATH)
