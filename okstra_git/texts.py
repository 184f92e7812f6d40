"""The multi-line texts commands print: the ``VERIFICATION_TARGET`` block, the run directive
of a claim and the task index.

Pure: plain data (the ``--json`` objects) in, Markdown out; every command in them is built by
``shell``. They are short fixed layouts, so
they are written here as Python rather than Jinja templates: importing jinja2 alone costs a
command about a third of what loading pygit2 does, which is the whole start-up budget of a
read command (the reports, long and many-sectioned, keep their Jinja templates).
"""

from __future__ import annotations

from .shell import command, okstra

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def verification_target(target: dict[str, Any]) -> str:
    """``verify target``'s block: scope, worktree, base, head, diff stat and stages."""
    base, head, worktree = target["base"], target["head"], target["worktree"]
    scope = f"- **Verification scope:** `{target['scope']}`"
    if target["scope"] == "single-stage":
        scope += (
            " — a partial verification: even an `accepted` verdict does not open `release-handoff`"
        )
    stat = target["diffStat"]
    width = max((len(f["path"]) for f in stat["files"]), default=0)
    files = [
        f"{f['path'].ljust(width)} | "
        + ("binary" if f["binary"] else f"+{f['added']} -{f['deleted']}")
        for f in stat["files"]
    ]
    stages = [
        f"| {s['stage']} | {s['status']} | "
        f"{'`' + s['headCommit'][:12] + '`' if s.get('headCommit') else '—'} | "
        f"{'`' + s['reportPath'] + '`' if s.get('reportPath') else '—'} |"
        for s in target["stages"]
    ]
    lines = [
        "## VERIFICATION_TARGET",
        "",
        f"- **Task:** `{target['taskKey']}`",
        scope,
        f"- **Worktree:** `{worktree}`",
        f"- **Base:** `{base}`",
        f"- **HEAD:** `{head}` (tree `{target['headTree']}`)",
        f"- **Review:** `{command('git', '-C', worktree, 'diff', f'{base[:12]}..{head[:12]}')}`",
        "",
        f"### Diff stat ({base[:12]}..{head[:12]})",
        "",
        "```",
        *files,
        f"{_plural(stat['filesChanged'], 'file')} changed, "
        f"{_plural(stat['insertions'], 'insertion')}(+), "
        f"{_plural(stat['deletions'], 'deletion')}(-)",
        "```",
        "",
        "### Stages",
        "",
        "| Stage | Status | Done commit | Implementation report |",
        "|---|---|---|---|",
        *stages,
    ]
    for s in target["stages"]:
        if s.get("report"):
            lines += [
                "",
                f"### Stage {s['stage']} report (stored with its done claim)",
                "",
                s["report"].rstrip(),
            ]
    return "\n".join(lines) + "\n"


def task_index(task: dict[str, Any], ref: str) -> str:
    """``task show``'s summary of a manifest (and ``task-index.md``)."""
    flow = task["workflow"]
    run = task.get("latestRun")
    plan = task.get("latestPlan")
    latest_run = f"{run['taskType']} {run['seq']} ({run['status']})" if run else "—"
    plan_cell = f"plan-{plan['seq']} (`{plan['path']}`, blob {plan['blob'][:12]})" if plan else "—"
    rows = [
        ("task key", f"`{task['taskKey']}`"),
        ("task type", task["taskType"]),
        ("work category", task.get("workCategory", "")),
        ("status", task.get("currentStatus", "")),
        (
            "current phase",
            f"{flow.get('currentPhase', '')} ({flow.get('currentPhaseState', '')})",
        ),
        ("last completed phase", flow.get("lastCompletedPhase") or "—"),
        ("next recommended phase", flow.get("nextRecommendedPhase") or "—"),
        ("awaiting approval", "yes" if flow.get("awaitingApproval") else "no"),
        ("routing", flow.get("routingStatus", "")),
        ("latest run", latest_run),
        ("latest report", task.get("latestReportPath") or "—"),
        ("plan", plan_cell),
        ("implementation base", task.get("implementationBaseCommit") or "—"),
        ("updated", task.get("updatedAt", "")),
    ]
    phase = flow.get("nextRecommendedPhase") or task["taskType"]
    lines = [
        f"# Task {task['taskKey']}",
        "",
        f"> Quick summary rendered from `{ref}:task.json`; the ref is the source of truth.",
        "",
        "| field | value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in rows),
        "",
        f"Resume: `{okstra('run', 'start', task['taskKey'], '--type', phase)}`",
    ]
    return "\n".join(lines) + "\n"


def run_directive(
    key: str,
    run_id: str,
    stages: list[dict[str, Any]],
    task_worktree: str,
    task_branch: str,
    implementation_base: str,
    plan_path: str | None,
    plan_blob: str | None,
) -> str:
    """What a claim prints: the run's authoritative scope and, per stage, where to work."""
    csv = ",".join(str(s["stage"]) for s in stages)
    scope = "this Stage Map stage" if len(stages) == 1 else "these Stage Map stages"
    out = [
        f"## Implementation run {run_id} — `{key}`\n",
        "\n",
        f"- **Stage for this implementation run:** `{csv}`. Execute exactly {scope} — this is "
        "the authoritative scope.\n",
    ]
    if plan_path:
        approved = f" (approved blob `{plan_blob[:12]}`)" if plan_blob else ""
        out.append(f"- Plan: `{plan_path}`{approved}\n")
    out.append(f"- Implementation base: `{implementation_base}`\n")
    if task_worktree:
        out.append(
            f"- Task worktree: `{task_worktree}` (branch `{task_branch}`) — merge each "
            "finished stage here.\n"
        )
    for s in stages:
        title = f" — {s['title']}" if s.get("title") else ""
        out.append(f"\n### Stage {s['stage']}{title}\n")
        if s.get("worktreePath"):
            out.append(f"- Worktree: `{s['worktreePath']}`\n- Branch: `{s['branch']}`\n")
        else:
            out.append("- Worktree: none (claimed with `--no-worktree`)\n")
        stacked = s.get("stackedOn")
        out.append(
            f"- Base: `{s['baseCommit']}`"
            + (
                f" (stacked on stage {stacked}'s done head: merge stage {stacked} into the "
                "task worktree before this one)"
                if stacked
                else ""
            )
            + "\n"
        )
        if s["startedHeadCommit"] != s["baseCommit"]:
            out.append(
                f"- Continues from: `{s['startedHeadCommit']}` (commits left on the branch by "
                "an earlier claim)\n"
            )
        left = s.get("leftUncommitted") or []
        if left:
            shown = ", ".join(f"`{path}`" for path in left[:10])
            more = f" and {len(left) - 10} more" if len(left) > 10 else ""
            out.append(
                "- **Uncommitted changes already in this worktree**, left by an earlier run — "
                "review them, then commit or discard them (`stage done` refuses a worktree with "
                f"uncommitted changes): {shown}{more}\n"
            )
        if s.get("takeOverOf"):
            out.append(f"- Taken over from run `{s['takeOverOf']}` (its lease expired)\n")
        if s.get("leaseExpiresAt"):
            out.append(f"- Lease expires: {s['leaseExpiresAt']}\n")
    done = okstra("stage", "done", key, "--stage", "N", "--report", "PATH")
    out.append(
        "\nWork stage by stage in number order. When a stage is finished, commit in its "
        f"worktree, then:\n`{done}` (add `--carry carry/stage-N.json` to hand the next stage a "
        "summary)\n"
    )
    return "".join(out)
