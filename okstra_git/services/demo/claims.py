"""Demo step: claim stage 1, work and finish it in its worktree, merge it, then claim the
batch 2 + 3 in one claim and do the same for both."""

from __future__ import annotations

import json
from pathlib import Path

from .world import Demo

STAGE_CODE = {
    1: {
        "calc/core.py": (
            "def check_number(x):\n"
            "    if isinstance(x, bool) or not isinstance(x, (int, float)):\n"
            '        raise TypeError(f"not a number: {x!r}")\n'
            "    return x\n\n\n"
            "def add(a, b):\n"
            "    return check_number(a) + check_number(b)\n"
        ),
        "tests/test_core.py": (
            "import pytest\n\nfrom calc.core import add\n\n\n"
            "def test_add():\n    assert add(2, 3) == 5\n\n\n"
            "def test_add_rejects_text():\n"
            '    with pytest.raises(TypeError):\n        add("2", 3)\n'
        ),
    },
    2: {
        "calc/mul.py": (
            "from calc.core import check_number\n\n\n"
            "def mul(a, b):\n    return check_number(a) * check_number(b)\n"
        ),
        "tests/test_mul.py": (
            "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
        ),
    },
    3: {
        "calc/cli.py": (
            "import sys\n\nfrom calc.core import add\nfrom calc.mul import mul\n\n\n"
            "def main(argv=None):\n"
            "    op, a, b = (argv or sys.argv[1:])[:3]\n"
            '    print({"add": add, "mul": mul}[op](float(a), float(b)))\n\n\n'
            'if __name__ == "__main__":\n    main()\n'
        ),
        "tests/test_cli.py": (
            "from calc.cli import main\n\n\n"
            "def test_mul(capsys):\n"
            '    main(["mul", "2", "3"])\n'
            '    assert capsys.readouterr().out.strip() == "6.0"\n'
        ),
    },
}


def step(demo: Demo) -> None:
    demo.step("Claim stage 1, work in its worktree, mark it done and merge it")
    trees = demo.root / "worktrees"
    demo.run("git", "okstra", "init", "--worktree-root", str(trees))
    folder = trees / "demo" / "calc" / "add-mul"
    task_wt = folder / "task"
    demo.facts["task_worktree"] = str(task_wt)
    workspace = demo.repo / ".okstra" / "tasks" / "calc" / "add-mul" / "runs" / "implementation"

    demo.run("git", "okstra", "stage", "ready", demo.key)
    demo.run("git", "okstra", "stage", "claim", demo.key)
    _work(demo, folder, 1)
    _done(demo, workspace, 1, "001")
    demo.run("git", "okstra", "stage", "list", demo.key)
    demo.run("git", "show", "refs/okstra/claims/calc/add-mul/stage-1:claim.json")  # plain git
    # Stage 1's commit is not in the task worktree yet: teardown refuses to lose it.
    demo.run("git", "okstra", "worktree", "prune", demo.key, expect=1)
    demo.run("git", "merge", "-q", "--no-edit", "okstra/calc/add-mul/stage-1", cwd=task_wt)

    demo.step("Claim the ready batch 2 + 3 in one claim; work, finish and merge both")
    claimed = demo.run(
        "git", "okstra", "stage", "claim", demo.key, "--lease", "2h", "--json", quiet=True
    )
    batch = json.loads(claimed.stdout)
    assert batch["stages"] == [2, 3], batch["stages"]
    demo.narration.output(batch["directive"])
    for stage in (2, 3):
        _work(demo, folder, stage)
    _done(demo, workspace, 2, "002", report=False)
    _done(demo, workspace, 3, "002")
    for stage in (2, 3):
        branch = f"okstra/calc/add-mul/stage-{stage}"
        demo.run("git", "merge", "-q", "--no-edit", branch, cwd=task_wt)
    demo.run("git", "log", "--oneline", "--graph", "-8", cwd=task_wt)
    demo.run("git", "okstra", "stage", "ready", demo.key)
    demo.run("git", "okstra", "worktree", "list", demo.key)


def _work(demo: Demo, folder: Path, stage: int) -> None:
    worktree = folder / f"stage-{stage}"
    demo.narration.note(f"the executor writes stage {stage} in {worktree}")
    for path, text in STAGE_CODE[stage].items():
        demo.write(path, text, cwd=worktree)
    demo.run("git", "add", "-A", cwd=worktree, quiet=True)
    demo.run("git", "commit", "-q", "-m", f"calc: stage {stage}", cwd=worktree)


def _done(demo: Demo, workspace: Path, stage: int, seq: str, report: bool = True) -> None:
    """``stage done`` with the stage's carry sidecar and, for a run's last stage, its report."""
    carry = workspace / "carry" / f"stage-{stage}.json"
    carry.write_text(json.dumps({"stage": stage, "notes": "tests pass"}) + "\n", "utf-8")
    args = ["--carry", str(carry.relative_to(demo.repo))]
    if report:
        path = workspace / "reports" / f"final-report-implementation-{seq}.md"
        path.write_text(f"# implementation {seq}\n\nStage {stage} done.\n", "utf-8")
        args += ["--report", str(path.relative_to(demo.repo))]
    demo.run("git", "okstra", "stage", "done", demo.key, "--stage", str(stage), *args)
