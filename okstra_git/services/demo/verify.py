"""Demo step: the final-verification gate refuses until every stage is done, merged and the
task worktree clean; then the target, an accepted verdict recorded as a git note, and show."""

from __future__ import annotations

import json
from pathlib import Path

from . import critic
from .team import second_clone
from .world import Demo


def step(demo: Demo) -> None:
    task_wt = Path(demo.facts["task_worktree"])
    demo.step("Final verification: the gate refuses while a stage is not done")
    demo.run("git", "okstra", "verify", "target", demo.key, expect=1)
    # A single stage can be verified on its own right after it is done (never for release).
    demo.run("git", "okstra", "verify", "target", demo.key, "--stage", "3")

    second_clone(demo)

    demo.step("An uncommitted file outside .okstra/ blocks verification too")
    demo.write("scratch.py", "print('debugging')\n", cwd=task_wt)
    demo.run("git", "okstra", "verify", "target", demo.key, expect=1)
    (task_wt / "scratch.py").unlink()

    critic.start_run(demo, task_wt)
    demo.step("The verification target, then an accepted verdict kept as a git note")
    demo.run("git", "okstra", "verify", "target", demo.key)
    # The run writes its report data inside .okstra/, which the clean check ignores: started
    # from the task's records (its stages and their reports) with the verdict the verifiers
    # reached set everywhere the rules tie it, then its prompts filled in.
    folder = ".okstra/tasks/calc/add-mul/runs/final-verification/reports"
    data = task_wt / folder / "final-report-final-verification-001.data.json"
    demo.run("git", "okstra", "report", "init", demo.key, "--verdict", "accepted", cwd=task_wt)
    filled = json.loads(data.read_text("utf-8"))
    filled["readerSummary"].update(
        decision="Accepted: add, mul and the CLI work as the plan says.",
        humanAction="Open the pull request (release-handoff).",
        blockers="None.",
    )
    filled["rationale"] = (
        "Every stage is done and merged; the tests of add, mul and the CLI pass on the task "
        "worktree HEAD."
    )
    demo.narration.note(f"the run fills in {data.name} and decides: accepted")
    demo.write(str(data.relative_to(task_wt)), json.dumps(filled, indent=2) + "\n", task_wt)
    critic.merge(demo, data, task_wt)
    demo.run("git", "okstra", "report", "validate", str(data), cwd=task_wt)
    demo.facts["verdict_data"] = str(data)
    head = demo.run("git", "rev-parse", "HEAD", cwd=task_wt, quiet=True).stdout.strip()
    demo.run("git", "okstra", "verify", "record", demo.key, "--verdict", "accepted",
             "--report", str(data), "--expect-head", head)  # fmt: skip
    demo.run("git", "okstra", "run", "finish", demo.key, "--type", "final-verification", "--seq",
             "001", "--status", "completed", "--report", str(data), cwd=task_wt)  # fmt: skip
    demo.run("git", "okstra", "verify", "show", cwd=task_wt)
    demo.run("git", "notes", "--ref", "okstra/verdicts", "show", head, quiet=True)
    demo.facts["verified_head"] = head
