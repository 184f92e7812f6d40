"""Demo step: a second clone. An agent clones the shared remote, claims stage 4 through it,
works and marks it done (the claim, its code and its report travel in one push); the first
clone syncs, finds it through the gate's refusal and merges it with the command printed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from .world import Demo

README = (
    "# calc\n\nA tiny calculator used by the okstra demo.\n\n"
    "- `calc.mul.mul(a, b)` multiplies two numbers (ints or floats; anything else is a "
    "`TypeError`).\n"
    "- `python -m calc.cli add|mul A B` prints the result.\n"
)


def second_clone(demo: Demo) -> None:
    demo.step("Share the task: sync publishes records, approvals, stage and task branches")
    demo.run("git", "okstra", "sync", "origin")

    demo.step("A second clone: an agent claims stage 4 through the shared remote")
    agent = demo.root / "agent"
    demo.run("git", "clone", "-q", str(demo.remote), str(agent))
    for name, value in (("user.name", "Demo Agent"), ("user.email", "agent@example.invalid")):
        demo.run("git", "config", name, value, cwd=agent, quiet=True)
    trees = demo.root / "agent-worktrees"
    demo.run("git", "okstra", "init", "--remote", "origin", "--worktree-root", str(trees),
             cwd=agent)  # fmt: skip
    # The claim fetches first: the task worktree starts from the task branch the first clone
    # published (stages 2 and 3 merged there), and the plan is the one stored in the task.
    claim = ("git", "okstra", "stage", "claim", demo.key, "--remote", "origin", "--json")
    claimed = json.loads(demo.run(*claim, cwd=agent, quiet=True).stdout)
    assert claimed["stages"] == [4], claimed["stages"]
    demo.narration.output(claimed["directive"])
    (place,) = claimed["placements"]
    stage_wt = Path(place["worktreePath"])
    demo.write("README.md", README, cwd=stage_wt)
    demo.run("git", "commit", "-q", "-am", "calc: document mul and the CLI", cwd=stage_wt)
    seq = claimed["runId"].rsplit("-", 1)[1]
    reports = ".okstra/tasks/calc/add-mul/runs/implementation/reports"
    report = f"{reports}/final-report-implementation-{seq}.md"
    demo.write(report, f"# implementation {seq}\n\nStage 4 done: README documents mul.\n", agent)
    # Claimed with --remote: done publishes the claim, the stage branch and the run's finish.
    demo.run("git", "okstra", "stage", "done", demo.key, "--stage", "4", "--report", report,
             cwd=agent)  # fmt: skip

    demo.step("The first clone syncs; the gate names the merge, which it runs as printed")
    demo.run("git", "okstra", "sync", "origin")
    refused = json.loads(
        demo.run("git", "okstra", "verify", "target", demo.key, "--json", expect=1).stdout
    )
    demo.narration.note(f"the gate's hint: {refused['hint']}")
    task_wt = Path(demo.facts["task_worktree"])
    demo.run(*shlex.split(refused["hint"]), cwd=task_wt)
    demo.run("git", "okstra", "stage", "list", demo.key)
