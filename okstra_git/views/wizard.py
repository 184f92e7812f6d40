"""What ``wizard start``/``wizard step`` print: the prompt as JSON (for an agent UI), or as
lines a person can answer."""

from __future__ import annotations

import json
from typing import Any

from . import Output


def _choices(question: dict[str, Any]) -> str:
    values = [o["value"] for o in question.get("options", [])]
    shown = ", ".join(v or '""' for v in values)
    extra = []
    if "current" in question:
        extra.append(f"now {question['current']}")
    if "default" in question:
        extra.append(f"default {question['default']}")
    return f"[{shown}]" + (f" ({'; '.join(extra)})" if extra else "")


def prompt_text(prompt: dict[str, Any]) -> str:
    kind, step = prompt["kind"], prompt["step"]
    if kind == "done":
        setup = prompt["setup"]
        return (
            "done: the run set-up\n"
            + json.dumps(setup, ensure_ascii=False, sort_keys=True, indent=2)
            + f"\nstart the run with:\n  {setup['command']}"
        )
    if kind == "pick_group":
        lines = [f"{step}: answer all at once, one JSON object keyed by step id"]
        lines += [f"  {q['step']}: {q['label']} {_choices(q)}" for q in prompt["questions"]]
        return "\n".join(lines)
    if kind == "text":
        current = f" (now {prompt['current']})" if "current" in prompt else ""
        return f"{step}: {prompt['label']}{current}"
    return f"{step}: {prompt['label']} {_choices(prompt)}"


def reply(prompt: dict[str, Any], error: str | None) -> Output:
    data = {"prompt": prompt}
    if error is None:
        return Output(data, lambda: prompt_text(prompt))
    return Output(
        data,
        lambda: prompt_text(prompt),
        err=f"git okstra: answer not recorded: {error}\n",
        code=1,
        error=f"answer not recorded: {error}",
    )
