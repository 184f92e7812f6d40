"""A stage's section as written (``stage_sections``): what ``plan show --stage N`` and the claim
directive hand the worker — its steps and its Stage Exit Contract, nothing of the next stage."""

from __future__ import annotations

from okstra_git.logic.stagemap import stage_sections

PLAN = """\
## 5.5 Stage Map

| Stage | Title | Effective steps | Depends-on |
|---|---|---|---|
| 1 | One | 2 | (none) |
| 2 | Two | 1 | 1 |

### Stage 1 — One
1. First step.
2. Second step.

#### Stage Exit Contract
- Added/changed files (predicted): `a.py`

```sh
## not a heading: fenced
```

#### Notes
- after the contract, still stage 1

### Stage 2 — Two
1. Only step.
#### Stage Exit Contract
- 추가/변경된 파일 (예측): `b.py`

## 6. Recommended Next Steps
1. not a step of stage 2
"""


def test_each_section_runs_to_the_next_heading_of_its_level_and_its_contract_is_its_own():
    found = stage_sections(PLAN)
    assert sorted(found) == [1, 2]
    one = found[1].markdown
    assert one.startswith("### Stage 1 — One\n1. First step.")
    assert one.endswith("- after the contract, still stage 1")
    assert found[1].contract == (
        "#### Stage Exit Contract\n- Added/changed files (predicted): `a.py`\n\n"
        "```sh\n## not a heading: fenced\n```"
    )
    assert found[2].markdown.endswith("- 추가/변경된 파일 (예측): `b.py`")
    assert "Recommended" not in found[2].markdown
    assert found[2].contract == "#### Stage Exit Contract\n- 추가/변경된 파일 (예측): `b.py`"


def test_a_section_without_a_contract_and_a_repeated_section():
    text = "### Stage 1\n1. a\n\n### Stage 1 again\n1. b\n"
    (only,) = stage_sections(text).values()
    assert only.markdown == "### Stage 1\n1. a" and only.contract is None
