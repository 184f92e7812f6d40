"""docs/report-format.md is generated from the report schema's descriptions and is current;
every field and every enum value of the schema says what it means."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from okstra_git.core.resources import data_dir
from okstra_git.logic.reports import formatdoc

DOC = Path(__file__).resolve().parents[2] / "docs" / "report-format.md"


def test_the_committed_page_is_the_generated_one():
    """Regenerate with: python -m okstra_git.logic.reports.formatdoc > docs/report-format.md"""
    assert DOC.read_text("utf-8") == formatdoc.render(), (
        f"docs/report-format.md is stale: regenerate it with {formatdoc.REGENERATE}"
    )


def schema() -> dict[str, Any]:
    return json.loads((data_dir("schemas") / "final-report.schema.json").read_text("utf-8"))


def test_every_field_and_enum_value_is_on_the_page():
    page = formatdoc.render()
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                found.append(name)
                assert f"| `{name}` |" in page, name
                walk(sub)
            for value in node.get("enum", []):
                assert f"`{value}` — " in page, value
            for key in ("items", "$defs"):
                if key == "$defs":
                    for sub in node.get(key, {}).values():
                        walk(sub)
                elif key in node:
                    walk(node[key])

    walk(schema())
    assert {"generatedAt", "verdictToken", "origin", "suggestedTaskType"} <= set(found)
    assert "`open-question` — " in page and "`hold` — " in page


def test_a_field_without_a_description_fails_the_generator(monkeypatch: pytest.MonkeyPatch):
    broken = schema()
    del broken["$defs"]["FollowUpTask"]["properties"]["scope"]["description"]
    monkeypatch.setattr(formatdoc, "_schema", lambda: broken)
    with pytest.raises(ValueError, match=r"FollowUpTask\.scope has no description"):
        formatdoc.render()
    broken = schema()
    del broken["$defs"]["FollowUpTask"]["properties"]["origin"]["x-enumDescriptions"]["manual"]
    monkeypatch.setattr(formatdoc, "_schema", lambda: broken)
    with pytest.raises(ValueError, match="value 'manual' has no x-enumDescriptions entry"):
        formatdoc.render()
