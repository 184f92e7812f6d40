"""Demo step: after a one-stage fix, a planning re-run re-verifies only that stage and what
depends on it, and carries the earlier verdicts of the other stages forward."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from ...core.errors import Refused
from .world import Demo

KEY = "demo:calc:div"
IP = "implementation-planning"
# Stage 3 formats the output; stage 4 (the CLI) depends on it.
STAGES: tuple[tuple[int, str, list[int], str, str], ...] = (
    (1, "Division", [], "calc/div.py", "Add `div(a, b)` to `calc/div.py`."),
    (2, "Zero divisor", [], "calc/errors.py", "Raise `DivisionByZero` from `calc/errors.py`."),
    (3, "Output format", [1], "calc/fmt.py", "Format quotients in `calc/fmt.py`."),
    (4, "Command line", [3], "calc/cli_div.py", "Wire `div` into `calc/cli_div.py`."),
)


def _planning_data(demo: Demo, seq: str, verdicts: dict[int, str]) -> Path:
    """``report init`` for run ``seq``, filled in with the plan's Stage Map and one plan item
    per stage in ``verdicts`` (what this run's verifiers concluded)."""
    data = demo.repo / f".okstra/tasks/calc/div/runs/{IP}/reports/final-report-{IP}-{seq}.data.json"
    demo.run("git", "okstra", "report", "init", KEY, "--type", IP, quiet=True)
    filled: dict[str, Any] = json.loads(data.read_text("utf-8"))
    planning = filled["implementationPlanning"]
    planning["stageMap"] = [
        {"stage": n, "title": title, "effectiveSteps": 1, "dependsOn": deps,
         "predictedFiles": [path], "steps": [step]}
        for n, title, deps, path, step in STAGES
    ]  # fmt: skip
    planning["planBodyVerification"]["planItems"] = [
        {"id": f"P-{n}", "stage": n, "statement": f"Stage {n} names real paths and commands.",
         "verdict": verdict, "sourceItems": [f"claude:PB-{n}", f"codex:PB-{n}"]}
        for n, verdict in sorted(verdicts.items())
    ]  # fmt: skip
    filled["readerSummary"].update(
        decision=f"Plan run {seq}: the Stage Map holds.",
        humanAction="Approve the plan once C-001 is answered.",
        blockers="None.",
    )
    filled["rationale"] = f"The verifiers checked each stage's steps and paths in run {seq}."
    demo.write(str(data.relative_to(demo.repo)), json.dumps(filled, indent=2) + "\n")
    return data


def _finish(demo: Demo, seq: str, data: Path, expect: int = 0) -> None:
    demo.run("git", "okstra", "run", "finish", KEY, "--type", IP, "--seq", seq,
             "--status", "completed", "--report", str(data), expect=expect)  # fmt: skip


def step(demo: Demo) -> None:
    demo.step("A planning run keeps its report data in the task")
    demo.run("git", "okstra", "task", "new", KEY, "--type", IP)
    demo.run("git", "okstra", "run", "start", KEY, "--type", IP)
    first = _planning_data(demo, "001", {1: "AGREE", 2: "AGREE", 3: "DISAGREE", 4: "AGREE"})
    _finish(demo, "001", first)

    demo.step("C-001 is answered: only stage 3 changes, so only 3 and 4 are verified again")
    demo.run("git", "okstra", "run", "start", KEY, "--type", IP)
    scope = json.loads(
        demo.run("git", "okstra", "incremental", "scope", KEY, "--impacted", "3", "--json",
                 quiet=True).stdout
    )  # fmt: skip
    demo.narration.line(
        json.dumps({k: v for k, v in scope.items() if k != "carry_command"}, indent=2)
    )
    if (scope["mode"], scope["reverify_stages"]) != ("incremental", [3, 4]):
        raise Refused(f"demo step failed: expected an incremental scope of 3, 4: {scope}")
    second = _planning_data(demo, "002", {3: "AGREE", 4: "AGREE"})
    # The run record now says incremental: report data without the decision is refused.
    _finish(demo, "002", second, expect=2)
    decided = json.loads(second.read_text("utf-8"))
    decided["implementationPlanning"]["incrementalDecision"] = {
        "mode": scope["mode"],
        "reverifyStages": scope["reverify_stages"],
        "carryStages": scope["carry_stages"],
        "reason": scope["reason"],
    }
    demo.write(str(second.relative_to(demo.repo)), json.dumps(decided, indent=2) + "\n")
    demo.run(*shlex.split(scope["carry_command"]))
    merged = json.loads(second.read_text("utf-8"))
    items = merged["implementationPlanning"]["planBodyVerification"]["planItems"]
    carried = [i["id"] for i in items if i.get("carriedForwardFromSeq") == "001"]
    demo.narration.line(f"carried forward from run 001: {', '.join(carried)}")
    if carried != ["P-1", "P-2"]:
        raise Refused(f"demo step failed: expected P-1 and P-2 carried, found {carried}")
    _finish(demo, "002", second)
    markdown = second.with_name(second.name.removesuffix(".data.json") + ".md")
    demo.run("git", "okstra", "report", "render", str(second), "--md", str(markdown), quiet=True)
    text = markdown.read_text("utf-8")
    start = text.find("### 0.1 Incremental Re-Verification Scope")
    if start < 0:
        raise Refused(f"demo step failed: {markdown} has no incremental scope section")
    end = text.find("\n#", start + 1)
    demo.narration.line(f"\n{text[start : end if end > 0 else None].rstrip()}")
    demo.run("git", "show", f"refs/okstra/tasks/calc/div:runs/{IP}/002.json", quiet=True)
