"""The Stage Map of report data (implementationPlanning.stageMap), read into the same model as a
Markdown plan's."""

from __future__ import annotations

from ...core.errors import BadInput
from .markdown import _INTEGER, _file_names, _normal_path, _parse_depends
from .model import Finding, Stage, StageMap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def stage_map_from_data(
    items: list[dict[str, Any]], path: str = "implementationPlanning.stageMap"
) -> StageMap:
    """Build a map from report data ``[{stage, title, effectiveSteps, dependsOn, predictedFiles}]``.

    Besides the canonical types, okstra's older forms are read: a numeric string for ``stage``
    and ``effectiveSteps``, a ``"(none)"`` / ``"1, 2"`` string for ``dependsOn`` and a
    comma-separated string for ``predictedFiles``. A list that is not a list of objects raises
    BadInput; an unreadable field is an S1 finding.
    """
    if not isinstance(items, list):
        raise BadInput(f"{path}: expected a list of stage objects, found {_json_type(items)}")
    findings: list[Finding] = []
    stages: list[Stage] = []
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            raise BadInput(f"{where}: expected a stage object, found {_json_type(item)}")
        number = _data_int(item.get("stage"))
        if number is None:
            findings.append(
                Finding(
                    "S1", (), None, f"{where}.stage {item.get('stage')!r} is not a stage number"
                )
            )
            continue
        title = item.get("title")
        if not isinstance(title, str):
            findings.append(Finding("S1", (number,), None, f"{where}.title must be a string"))
            title = ""
        effective_steps = _data_int(item.get("effectiveSteps"))
        if effective_steps is None:
            findings.append(
                Finding(
                    "S1",
                    (number,),
                    None,
                    f"{where}.effectiveSteps {item.get('effectiveSteps')!r} is not a whole number",
                )
            )
        depends_on, readable = _data_depends(item.get("dependsOn", "(none)"))
        if not readable:
            findings.append(
                Finding(
                    "S1",
                    (number,),
                    None,
                    f"{where}.dependsOn must be a list of stage numbers or `(none)`",
                )
            )
        files_value = item.get("predictedFiles", [])
        if isinstance(files_value, str):
            files = _file_names(files_value)
        elif isinstance(files_value, list) and all(isinstance(f, str) for f in files_value):
            files = [_normal_path(f) for f in files_value if f.strip()]
        else:
            findings.append(
                Finding("S1", (number,), None, f"{where}.predictedFiles must be a list of paths")
            )
            files = []
        stages.append(
            Stage(
                number=number,
                title=title,
                effective_steps=effective_steps,
                depends_on=depends_on,
                steps=(),
                predicted_files=tuple(dict.fromkeys(files)),
                line=None,
            )
        )
    if not items:
        findings.append(
            Finding("S1", (), None, f"{path} is empty: a plan needs at least one stage")
        )
    return StageMap(tuple(stages), path, None, tuple(findings), from_markdown=False)


def _json_type(value: object) -> str:
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), repr(value))


def _data_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip())
    return None


def _data_depends(value: object) -> tuple[tuple[int, ...], bool]:
    if isinstance(value, str):
        return _parse_depends(value)
    if isinstance(value, list):
        numbers = [_data_int(v) for v in value]
        known = tuple(dict.fromkeys(n for n in numbers if n is not None))
        return known, None not in numbers
    return (), value is None
