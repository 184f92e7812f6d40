"""Demo step: a second task in flight, and the board that shows the team's state at a glance.

The division plan is submitted and approved; this clone claims stage 1, the agent's clone
claims stage 2 through the shared remote; a plain ``git fetch`` brings the agent's claim here
and the board shows both holders, the stages still blocked, and the finished task beside it.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import Refused
from .incremental import IP, KEY
from .world import Demo


def step(demo: Demo) -> None:
    demo.step("A second task in flight: two clones hold one stage each")
    plan = f".okstra/tasks/calc/div/runs/{IP}/reports/final-report-{IP}-002.md"
    demo.run("git", "okstra", "plan", "submit", KEY, plan)
    demo.run("git", "okstra", "plan", "approve", KEY)
    demo.run("git", "okstra", "stage", "claim", KEY, "--stage", "1", "--lease", "2h", quiet=True)
    demo.run("git", "okstra", "sync", "origin")
    agent = demo.root / "agent"
    demo.run("git", "okstra", "stage", "claim", KEY, "--stage", "2", "--remote", "origin",
             "--lease", "2h", cwd=agent, quiet=True)  # fmt: skip

    demo.step("The board: every task, stage, holder and verdict on one page")
    demo.run("git", "fetch", "-q", "origin")  # a plain fetch brings the agent's claim here
    demo.run("git", "okstra", "board")
    page = Path(demo.repo / ".okstra" / "board.html")
    if "Demo Agent" not in page.read_text("utf-8"):
        raise Refused(f"demo step failed: the board does not show the agent's claim: {page}")
    demo.narration.page(page, "see it")
