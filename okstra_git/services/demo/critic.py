"""Demo parts of the final verification: the run set up through the wizard with the acceptance
critic opted in, and the critic's candidates confirmed or downgraded into the report.

The verification step calls these at the moment a real run would: ``start_run`` before the
target is resolved, ``merge`` once the verifiers have filled in the report data.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ...core.errors import Refused
from .world import Demo

FV = "final-verification"
CANDIDATES = {
    "provider": "codex",
    "model": "gpt-5",
    "candidates": [
        {
            "id": "CB-1",
            "statement": "`calc mul` on very large floats may overflow to inf unreported.",
            "evidence": "calc/mul.py returns a * b unchecked; no test covers 1e308 * 10",
            "severity": "minor",
        }
    ],
}


def start_run(demo: Demo, cwd: Path) -> None:
    """Set up the final-verification run with the wizard, then start it as it prints."""
    demo.step(
        "Set up the final-verification run with the wizard: verify the whole task, opt into "
        "the critic"
    )
    state = ["--state-file", str(demo.root / "run-setup.json")]
    demo.run("git", "okstra", "wizard", "start", *state, "--key", demo.key, "--task-type", FV)
    for answer in ("auto", "defaults", "codex", "gpt-5", "start"):
        demo.run("git", "okstra", "wizard", "step", *state, "--answer", answer)
    done = json.loads(demo.run("git", "okstra", "wizard", "step", *state, "--json",
                               quiet=True).stdout)  # fmt: skip
    demo.run(*shlex.split(done["prompt"]["setup"]["command"]), cwd=cwd)


def merge(demo: Demo, data: Path, cwd: Path) -> None:
    """The critic proposes one candidate blocker; the analysers cannot reproduce it, so it is
    downgraded to a residual risk (never dropped) and the verdict stays accepted."""
    demo.step("The acceptance critic: confirm or downgrade its candidate blockers")
    # Paths relative to the worktree the run works in, as an agent would type them.
    report = data.relative_to(cwd)
    results = report.parent.parent / "worker-results"
    candidates = results / f"codex-critic-{FV}-001.json"
    demo.write(str(candidates), json.dumps(CANDIDATES, indent=2) + "\n", cwd)
    merge_args = ["git", "okstra", "critic", "merge", "--report", str(report),
                  "--candidates", str(candidates), "--confirmations"]  # fmt: skip

    # Had an analyser reproduced it, the verdict could no longer be accepted:
    what_if = results / "confirmations-if-reproduced.json"
    reproduced = {
        "candidate": "CB-1",
        "confirmed": True,
        "by": "claude:V-7",
        "evidence": "python -c 'from calc.mul import mul; print(mul(1e308, 10))' prints inf",
    }
    demo.write(str(what_if), json.dumps({"confirmations": [reproduced]}), cwd)
    demo.run(*merge_args, str(what_if), "--out", str(results / "if-reproduced.data.json"),
             cwd=cwd)  # fmt: skip

    # It was not reproduced: a residual risk with the trigger that would escalate it.
    checked = results / f"confirmations-{FV}-001.json"
    not_reproduced = {"candidate": "CB-1", "confirmed": False, "by": "claude:V-7",
                      "trigger": "a user reports inf from calc mul"}  # fmt: skip
    demo.write(str(checked), json.dumps({"confirmations": [not_reproduced]}), cwd)
    demo.run(*merge_args, str(checked), "--out", str(report), cwd=cwd)
    merged = json.loads(data.read_text("utf-8"))
    risks = merged["finalVerification"]["residualRisks"]
    if len(risks) != 1 or merged["finalVerdict"]["verdictToken"] != "accepted":
        raise Refused(f"demo step failed: expected one downgraded candidate in {data}")
