"""Sample plans shared by the test suite. Keep them stable: other tests import them.

- ``LINEAR_PLAN``: English, 3 stages 1 → 2 → 3, marker unchecked, §5 with a placeholder only.
- ``DIAMOND_PLAN``: Korean, 4 stages 1 → {2, 3} → 4 with disjoint predicted files, no §5 at all
  (schema absent, as in a legacy report).
- ``BLOCKED_PLAN``: the linear Stage Map plus a §5 table whose C-003 is an open
  ``Blocks=approval`` row; ``BLOCKED_PLAN_CHECKED`` is the same with the marker ticked.
- ``plan_text(stages, steps)``: a generated plan of any shape, marker ticked, §5 empty.

Each sample plan is valid under ``okstra_git.logic.stagemap.validate``.
"""

# Markdown table rows are long by nature; wrapping them would change the samples.
# ruff: noqa: E501

from __future__ import annotations

LINEAR_PLAN = """\
# Implementation plan — demo:config:cache-cli

## User Approval Request

> The next `implementation` run may start only when the box below is ticked. Read sections 1–5.5
> and make sure every `Blocks=approval` row of section 5 is `resolved` or `obsolete` first.

- [ ] Approved

- To approve from the command line: `git okstra plan approve demo:config:cache-cli`

## 1. Summary

Load settings from `config.toml`, cache parsed results on disk, and expose both through the CLI.

## 4.5 Recommended option

Option B (a small cache module beside the config parser) — reversible and cheap to test.

## 5. Clarification Items

- No clarification items. The decision in section 2 stands as written.

## 5.5 Stage Map

| Stage | Title | Effective steps | Depends-on |
|---|---|---|---|
| 1 | Parse the config | 3 | (none) |
| 2 | Cache layer | 4 | 1 |
| 3 | Wire the cache into the CLI | 2 | 2 |

### Stage 1 — Parse the config
1. Add `load_config(path)` to `src/config.py`, reading TOML with `tomllib`.
2. Reject unknown keys with a `ConfigError` naming the key and the line.
3. Cover both paths in `tests/test_config.py`; run `python -m pytest tests/test_config.py -q`.

#### Stage Exit Contract
- Added/changed files (predicted): `src/config.py`, `tests/test_config.py`
- Exit check: `python -m pytest tests/test_config.py -q` passes.

### Stage 2 — Cache layer
1. Create `src/cache.py` with `Cache(root)` keyed by the config file's sha256.
2. Write entries atomically (temp file + `os.replace`).
   - keep the temp file in the cache folder so the rename stays on one filesystem
3. Evict entries older than `cache.max_age_days` from the config.
4. Test hit, miss and eviction in `tests/test_cache.py`.

#### Stage Exit Contract
- Added/changed files (predicted): `src/cache.py`, `tests/test_cache.py`
- Exit check: `python -m pytest tests/test_cache.py -q` passes.

### Stage 3 — Wire the cache into the CLI
1. Load the config through `Cache` in `src/cli.py`'s `main()`.
2. Add `--no-cache` and cover it in `tests/test_cli.py`.

#### Stage Exit Contract
- Added/changed files (predicted): `src/cli.py`, `tests/test_cli.py`

## 6. Recommended Next Steps

1. Approve the plan, then run `git okstra stage claim demo:config:cache-cli`.
"""

DIAMOND_PLAN = """\
# 구현 계획 — demo:auth:token-refresh

## 사용자 승인 게이트 (User Approval Request)

> 아래 체크박스가 `[x]` 로 표시되어 있을 때에만 다음 `implementation` run 을 시작할 수 있습니다.

- [ ] Approved

## 1. 요약

설정 스키마를 먼저 정의하고, 캐시 계층과 토큰 갱신을 병렬로 구현한 뒤 CLI 에 연결합니다.

## 5.5 Stage Map

| Stage | Title | Effective steps | Depends-on |
|---|---|---|---|
| 1 | 설정 스키마 정의 | 2 | (none) |
| 2 | 캐시 계층 | 3 | 1 |
| 3 | 인증 토큰 갱신 | 3 | 1 |
| 4 | CLI 연결 | 2 | 2, 3 |

### Stage 1 — 설정 스키마 정의
1. `src/schema.py` 에 `Settings` 데이터클래스와 기본값을 정의합니다.
2. 잘못된 값은 키 이름을 담은 `SchemaError` 로 거부합니다.

#### Stage Exit Contract
- 추가/변경된 파일 (예측): `src/schema.py`, `tests/test_schema.py`

### Stage 2 — 캐시 계층
1. `src/cache.py` 에 `Settings.cache_dir` 기반 디스크 캐시를 만듭니다.
2. 항목은 임시 파일 + `os.replace` 로 원자적으로 씁니다.
3. `tests/test_cache.py` 로 적중·미스·만료를 검증합니다.

#### Stage Exit Contract
- 추가/변경된 파일 (예측): `src/cache.py`, `tests/test_cache.py`

### Stage 3 — 인증 토큰 갱신
1. `src/auth.py` 에 만료 60초 전 토큰을 갱신하는 `refresh_if_needed()` 를 추가합니다.
2. 갱신 실패 시 기존 토큰을 유지하고 경고를 남깁니다.
3. `tests/test_auth.py` 로 만료 직전·직후를 검증합니다.

#### Stage Exit Contract
- 추가/변경된 파일 (예측): `src/auth.py`, `tests/test_auth.py`

### Stage 4 — CLI 연결
1. `src/cli.py` 에서 캐시와 토큰 갱신을 순서대로 호출합니다.
2. `docs/cli.md` 에 새 옵션을 설명합니다.

#### Stage Exit Contract
- 추가/변경된 파일 (예측): `src/cli.py`, `docs/cli.md`
"""

_BLOCKED_SECTION_5 = """\
## 5. Clarification Items

Rows the user must answer before the next run. `Blocks=approval` rows gate the approval above.

### 5.1 Clarification Items table

| ID | Ticket ID | Kind | Statement | Expected form | Blocks | Status | User input |
|----|-----------|------|-----------|---------------|--------|--------|------------|
| C-001 | `CFG-12` | `decision` | Should unknown config keys fail the run or only warn? Stage 1 rejects them today. | (a) fail (b) warn | `approval` | resolved | (a) fail |
| C-002 | `CFG-12` | `material` | A sample of the production `config.toml` (secrets removed), to size the cache key. | file path under `.project-docs/` | `next-phase` | open |  |
| C-003 | `CFG-14` | `data-point` | How many days may a cache entry live? It sets `cache.max_age_days` in stage 2. | one integer | `approval` | open |  |

"""

BLOCKED_PLAN = LINEAR_PLAN.replace(
    LINEAR_PLAN[LINEAR_PLAN.index("## 5. Clarification Items") : LINEAR_PLAN.index("## 5.5")],
    _BLOCKED_SECTION_5,
)

BLOCKED_PLAN_CHECKED = BLOCKED_PLAN.replace("- [ ] Approved", "- [x] Approved", 1)


def plan_text(stages: list[tuple[int, list[int], list[str]]], steps: int = 2) -> str:
    """An approved plan of ``(number, depends_on, predicted_files)`` stages, each with ``steps``
    numbered steps (valid when the numbering, steps and files are)."""
    rows = "\n".join(
        f"| {n} | Part {n} | {steps} | {', '.join(map(str, deps)) or '(none)'} |"
        for n, deps, _ in stages
    )
    sections = "\n".join(
        f"### Stage {n} — Part {n}\n"
        + "".join(f"{i}. Do part {i} of stage {n}.\n" for i in range(1, steps + 1))
        + "\n#### Stage Exit Contract\n"
        + f"- Added/changed files (predicted): {', '.join(f'`{f}`' for f in files)}\n"
        for n, _, files in stages
    )
    return (
        "# Implementation plan\n\n## User Approval Request\n\n- [x] Approved\n\n"
        "## 5. Clarification Items\n\n- No clarification items.\n\n## 5.5 Stage Map\n\n"
        "| Stage | Title | Effective steps | Depends-on |\n|---|---|---|---|\n"
        f"{rows}\n\n{sections}"
    )
