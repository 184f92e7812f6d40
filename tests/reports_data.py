"""Report data fixtures: a filled, valid ``data.json`` for every task type.

``full_report(task_type)`` starts from the shipped starter and fills every table, so the rules,
the Markdown and the HTML see each kind of row. Each call returns a fresh copy to mutate.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from okstra_git.core.keys import TASK_TYPES
from okstra_git.logic.reports.starter import starter

KEY = "demo:DEV-9184:cache-cli"

STAGE_MAP = [
    {
        "stage": 1,
        "title": "Parse the config",
        "effectiveSteps": 2,
        "dependsOn": [],
        "predictedFiles": ["src/config.py", "tests/test_config.py"],
        "steps": [
            "Add `load_config(path)` to `src/config.py`, reading TOML with `tomllib`.",
            "Cover unknown keys in `tests/test_config.py`; run `python -m pytest -q`.",
        ],
    },
    {
        "stage": 2,
        "title": "Cache layer",
        "effectiveSteps": 1,
        "dependsOn": [1],
        "predictedFiles": ["src/cache.py"],
        "steps": ["Create `src/cache.py` keyed by the config file's sha256."],
    },
    {
        "stage": 3,
        "title": "Wire the cache into the CLI",
        "effectiveSteps": 1,
        "dependsOn": [2],
        "predictedFiles": ["src/cli.py"],
        "steps": ["Call the cache from `src/cli.py` and print hits with `--verbose`."],
    },
]


def full_report(task_type: str, language: str = "en", seq: str = "002") -> dict[str, Any]:
    data = starter(
        KEY,
        task_type,
        seq,
        language,
        stage_map=[dict(stage) for stage in STAGE_MAP],
        stages=[1, 2, 3],
        source_reports=[
            {"stage": n, "path": f".okstra/tasks/dev-9184/cache-cli/stage-{n}.md"}
            for n in (1, 2, 3)
        ],
    )
    data["header"]["title"] = "Config cache for the CLI"
    data["readerSummary"].update(
        decision="The cache design holds; unknown config keys must fail the run.",
        humanAction="Answer C-002 (the cache size) before the next run.",
        blockers="None for this phase.",
    )
    data["rationale"] = (
        "Both workers traced unknown-key handling to `src/config.py:42` (see CS-1); the only "
        "disagreement (D-1) is where the cache lives, which C-002 settles."
    )
    data["summary"] = [
        {
            "id": "S-1",
            "ticketId": "DEV-9184",
            "source": "claude, codex",
            "text": "Unknown keys pass silently today.",
        },
        {"id": "S-2", "source": "brief", "text": "The CLI re-parses the config on every call."},
    ]
    data["consensus"] = [
        {
            "id": "CS-1",
            "ticketId": "DEV-9184",
            "sourceItems": ["claude:F-001", "codex:1.1"],
            "statement": "`load_config` ignores keys it does not know.",
            "evidence": "`src/config.py:42` drops them without a warning.",
        }
    ]
    data["differences"] = [
        {
            "id": "D-1",
            "ticketId": "DEV-9184",
            "workersPosition": [
                {"itemId": "claude:F-002", "position": "cache on disk"},
                {"itemId": "codex:2.1", "position": "cache in memory"},
            ],
            "disagreement": "Where the parsed config is cached.",
            "evidence": "Start-up time matters only for the CLI (`bench/cli.txt`).",
        }
    ]
    data["evidence"] = {
        "primary": [
            {
                "id": "E-1",
                "ticketId": "DEV-9184",
                "sourceItems": ["claude:F-001"],
                "source": "src/config.py:42",
                "evidence": "`for key in raw: if key in KNOWN: …` — the else branch is missing.",
            }
        ],
        "secondary": [
            {
                "id": "E-2",
                "hypothesis": "Users rely on unknown keys as comments.",
                "sourceConfidence": "Issue tracker search; low.",
            }
        ],
    }
    data["risks"] = [
        {
            "id": "R-1",
            "ticketId": "DEV-9184",
            "item": "Failing on unknown keys breaks existing configs.",
            "riskIfIgnored": "Users upgrade and the CLI stops starting.",
            "mitigationOwner": "A clear message naming the key; the lead.",
        }
    ]
    blocks = "approval" if task_type == "implementation-planning" else "next-phase"
    data["clarificationItems"] = [
        {
            "id": "C-001",
            "ticketId": "DEV-9184",
            "kind": "decision",
            "statement": "Should unknown keys fail the run or only warn?",
            "expectedForm": "(a) fail (b) warn",
            "blocks": blocks,
            "status": "resolved",
            "userInput": "(a) fail",
        },
        {
            "id": "C-002",
            "ticketId": "DEV-9184",
            "kind": "data-point",
            "statement": "How many parsed configs may the cache keep?",
            "expectedForm": "a whole number",
            "blocks": "next-phase",
            "status": "open",
            "userInput": "",
        },
        {
            "id": "C-003",
            "ticketId": "OPS-7",
            "kind": "material",
            "statement": "The production config, to check for keys we would now refuse.",
            "expectedForm": "a file path under `.project-docs/`",
            "blocks": "none",
            "status": "open",
            "userInput": "",
        },
    ]
    data["recommendedNextSteps"].append(
        {"text": "Answer C-002 in section 5, then rerun the phase."}
    )
    if task_type != "release-handoff":
        data["followUpTasks"].append(
            {
                "origin": "scope-boundary",
                "newTaskId": "config-docs",
                "suggestedTaskType": "requirements-discovery",
                "scope": "Document every config key.",
                "reason": "Out of this task's scope.",
                "autoSpawn": "no",
                "priority": "P2",
            }
        )
    data["executionStatus"] = [
        {
            "agent": "Claude worker",
            "role": "analysis",
            "model": "claude-opus",
            "status": "completed",
            "rawTokens": 120000,
            "billableTokens": 45000,
            "costUsd": 1.25,
            "durationSeconds": 310,
            "summary": "Found F-001 and F-002.",
        },
        {"agent": "Codex worker", "role": "analysis", "status": "timeout", "summary": "Partial."},
    ]
    if task_type == "implementation-planning":
        data["implementationPlanning"]["planBodyVerification"]["planItems"] = [
            {
                "id": "P-1",
                "stage": 1,
                "kind": "a",
                "statement": "`load_config` exists at the cited path.",
                "verdict": "agree",
            },
            {
                "id": "P-2",
                "stage": 2,
                "kind": "c",
                "statement": "The cache key covers the file content.",
                "verdict": "agree",
            },
        ]
    if task_type == "final-verification":
        for part in ("verdictCard", "finalVerdict"):
            data[part].update(verdictToken="accepted", direction="approve",
                              nextStep="release-handoff — open the pull request")  # fmt: skip
        data["recommendedNextSteps"][0]["text"] = "release-handoff — open the pull request"
        data["followUpTasks"][0]["suggestedTaskType"] = "release-handoff"
        data["finalVerification"]["residualRisks"] = [
            {
                "id": "RR-001",
                "statement": "The cache is not invalidated when the config file is replaced.",
                "evidence": "Not reproduced: `tests/test_cache.py` has no replace case.",
                "severity": "minor",
                "trigger": "A report of a stale setting after a deploy.",
                "sourceItems": ["codex:critic-1"],
            }
        ]
        data["convergence"] = {
            "critic": {
                "enabled": True,
                "provider": "codex",
                "model": "gpt-5",
                "mode": "acceptance-devils-advocate",
                "candidatesProposed": 1,
                "confirmedBlockers": 0,
                "downgradedToResidual": 1,
            }
        }
    # A copy of its own: tests damage reports in place, and nothing may reach the constants here
    # (hypothesis replays an example and must draw from the same report).
    return copy.deepcopy(data)


ALL_TYPES = TASK_TYPES


def fill_prompts(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every starter prompt ("Replace: …") written, as a report writer does."""

    def walk(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("Replace:"):
            return "Written: " + value.removeprefix("Replace:").strip()
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(data)


def verdict_report(
    ctx: Any,
    key: Any,
    path: Path,
    verdict: str = "accepted",
    blockers: int = 0,
    stage: int | None = None,
) -> Path:
    """Write valid final-verification data for a real task (its stages and reports from the
    claims, as `report init` makes it) with ``verdict`` and that many acceptance blockers."""
    from okstra_git.services.reports import starter_for_task

    data = fill_prompts(starter_for_task(ctx, key, "final-verification", stage, verdict=verdict))
    data["finalVerification"]["acceptanceBlockers"] = [
        {
            "id": f"AB-{n:03d}",
            "statement": f"Blocker {n}.",
            "evidence": "tests/test_x.py exits 1",
            "severity": "major",
        }
        for n in range(1, blockers + 1)
    ]
    path.write_text(json.dumps(data), "utf-8")
    return path
