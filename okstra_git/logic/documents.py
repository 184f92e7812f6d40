"""The multi-line texts commands print: the ``VERIFICATION_TARGET`` block, the run directive
of a claim and the task index.

Pure: plain data (the ``--json`` objects) in, Markdown out; every command in them is built by
``shell``. They are short fixed layouts, so
they are written here as Python rather than Jinja templates: importing jinja2 alone costs a
command about a third of what loading pygit2 does, which is the whole start-up budget of a
read command (the reports, long and many-sectioned, keep their Jinja templates).
"""

from __future__ import annotations

from ..core.shell import command, okstra

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Every line break str.splitlines knows, as Python's unicode_escape spells it (written out: the
# codec costs a read command ~0.2 ms to load).
_BREAKS = {
    0x0A: "\\n", 0x0D: "\\r", 0x0B: "\\x0b", 0x0C: "\\x0c", 0x1C: "\\x1c", 0x1D: "\\x1d",
    0x1E: "\\x1e", 0x85: "\\x85", 0x2028: "\\u2028", 0x2029: "\\u2029",
}  # fmt: skip


def _v(value: Any) -> str:
    """A value as one line (a line break shown as its escape): an agent acts on these texts
    line by line, and a value (a plan path, a file name from git status, a title from a fetched
    record) that added a line would be read as scope."""
    return value.translate(_BREAKS) if isinstance(value, str) else str(value)


def _code(value: Any) -> str:
    """``value`` (as one line) as one Markdown code span, fenced past any run of backticks in
    it (CommonMark): a key or path holding a backtick would otherwise end the span early and
    leave the rest, a printed command too, outside it."""
    text = _v(value)
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    # A span's content that starts or ends with a backtick needs a space beside the fence, and
    # one that starts and ends with a space loses one at each end when read: pad both.
    spaced = text.startswith(" ") and text.endswith(" ") and text.strip(" ")
    pad = " " if text.startswith("`") or text.endswith("`") or spaced else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _pipes_escaped(markdown: str) -> str:
    """A table cell's Markdown with every ``|`` escaped: GFM splits a row at each unescaped one,
    inside code spans too, and reads ``\\|`` as ``|`` there."""
    return markdown.replace("|", "\\|")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def verification_target(target: dict[str, Any]) -> str:
    """``verify target``'s block: scope, worktree, base, head, diff stat and stages."""
    base, head, worktree = target["base"], target["head"], target["worktree"]
    scope = f"- **Verification scope:** {_code(target['scope'])}"
    if target["scope"] == "single-stage":
        scope += (
            " — a partial verification: even an `accepted` verdict does not open `release-handoff`"
        )
    stat = target["diffStat"]
    width = max((len(f["path"]) for f in stat["files"]), default=0)
    files = [
        f"{_v(f['path'].ljust(width))} | "
        + ("binary" if f["binary"] else f"+{f['added']} -{f['deleted']}")
        for f in stat["files"]
    ]
    stages = [
        f"| {_v(s['stage'])} | {_v(s['status'])} | "
        f"{_code(s['headCommit'][:12]) if s.get('headCommit') else '—'} | "
        f"{_pipes_escaped(_report_cell(s))} |"
        for s in target["stages"]
    ]
    review = command("git", "-C", worktree, "diff", f"{base[:12]}..{head[:12]}")
    lines = [
        "## VERIFICATION_TARGET",
        "",
        f"- **Task:** {_code(target['taskKey'])}",
        scope,
        f"- **Worktree:** {_code(worktree)}",
        f"- **Base:** {_code(base)}",
        f"- **HEAD:** {_code(head)} (tree {_code(target['headTree'])})",
        f"- **Review:** {_code(review)}",
        "",
        f"### Diff stat ({_v(base[:12])}..{_v(head[:12])})",
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
        lines += stage_report_section(s)
    return "\n".join(lines) + "\n"  # each value escaped where it is used (file paths pad first)


def _report_cell(stage: dict[str, Any]) -> str:
    """Where a stage's report is read in this clone: stored with its done claim (shown below
    the table), else its file here; a path only another clone has is said to be so."""
    if stage.get("report"):
        return f"stored with its done claim (stage {_v(stage['stage'])} report, below)"
    if stage.get("reportHere"):
        return _code(stage["reportHere"])
    if stage.get("reportPath"):
        return f"{_code(stage['reportPath'])} (written in the clone that did the stage; not here)"
    return "—"


def stage_report_section(stage: dict[str, Any], level: str = "###") -> list[str]:
    """A stage's stored report as lines of a document (none without one): a heading naming the
    stage and the file it is stored as, then the readable report (``report``: Markdown, report
    data rendered) inside one fenced block, which nothing in the report can close — its
    headings and commands stay the report's, never the document's. ``stage`` holds ``stage``,
    ``reportFile`` and ``report`` as ``verify target --json`` gives them."""
    from .reports.stored import fenced

    report = stage.get("report")
    if not report:
        return []
    name = stage.get("reportFile") or "report.md"
    kind = "report data, rendered" if name.endswith(".json") else "Markdown"
    return [
        "",
        f"{level} Stage {_v(stage['stage'])} report ({_code(name)} stored with its done claim; "
        f"{kind})",
        "",
        fenced(report, "markdown").rstrip("\n"),
    ]


def task_index(task: dict[str, Any], ref: str, resume: str | None = None) -> str:
    """``task show``'s summary of a manifest (and ``task-index.md``). ``resume``: the task's next
    step for this clone (``logic/nextstep.py``), else the phase's ``run start``."""
    flow = task["workflow"]
    run = task.get("latestRun")
    plan = task.get("latestPlan")
    latest_run = f"{run['taskType']} {run['seq']} ({run['status']})" if run else "—"
    plan_cell = (
        f"plan-{plan['seq']} ({_code(plan['path'])}, blob {plan['blob'][:12]})" if plan else "—"
    )
    rows = [
        ("task key", _code(task["taskKey"])),
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
        f"> Quick summary rendered from {_code(ref + ':task.json')}; the ref is the source of "
        "truth.",
        "",
        "| field | value |",
        "|---|---|",
        *(f"| {name} | {_pipes_escaped(_v(value))} |" for name, value in rows),
        "",
        f"Resume: {_code(resume or okstra('run', 'start', task['taskKey'], '--type', phase))}",
    ]
    return "".join(_v(line) + "\n" for line in lines)


def run_directive(
    key: str,
    run_id: str,
    stages: list[dict[str, Any]],
    task_worktree: str,
    task_branch: str,
    implementation_base: str,
    plan_path: str | None,
    plan_blob: str | None,
    concurrent: list[dict[str, Any]] | None = None,
    clone_dir: str = "",
) -> str:
    """What a claim prints: the run's authoritative scope; the stages other runs hold now; and,
    per stage, where to work, its section of the approved plan (steps and Stage Exit Contract),
    its done dependencies' hand-over (done commit, carry, report) and the ``stage done`` that
    finishes it, with its report file (``report``) — run in ``clone_dir`` when given."""
    csv = ",".join(str(s["stage"]) for s in stages)
    scope = "this Stage Map stage" if len(stages) == 1 else "these Stage Map stages"
    lines = [
        f"## Implementation run {run_id} — {_code(key)}",
        "",
        f"- **Stage for this implementation run:** {_code(csv)}. Execute exactly {scope} — this is "
        "the authoritative scope.",
    ]
    if plan_path:
        approved = f" (approved blob {_code(plan_blob[:12])})" if plan_blob else ""
        show = okstra("plan", "show", key)
        lines.append(
            f"- Plan: {_code(plan_path)}{approved}; read it from the task on any clone: "
            f"{_code(show)} (each stage's part of it is below)"
        )
    lines.append(f"- Implementation base: {_code(implementation_base)}")
    integrate = _code(okstra("integrate", key))
    if task_worktree:
        lines.append(
            f"- Task worktree: {_code(task_worktree)} (branch {_code(task_branch)}) — done stages "
            f"are merged here by {integrate} (it also publishes the task branch), not by hand."
        )
    lines += _concurrent_lines(concurrent)
    for s in stages:
        title = f" — {s['title']}" if s.get("title") else ""
        lines += ["", f"### Stage {s['stage']}{title}"]
        if s.get("worktreePath"):
            lines += [f"- Worktree: {_code(s['worktreePath'])}", f"- Branch: {_code(s['branch'])}"]
        else:
            lines.append("- Worktree: none (claimed with `--no-worktree`)")
        stacked = s.get("stackedOn")
        lines.append(
            f"- Base: {_code(s['baseCommit'])}"
            + (
                f" (stacked on stage {stacked}'s done head: {integrate} merges stage "
                f"{stacked} into the task branch before this one)"
                if stacked
                else ""
            )
        )
        if s["startedHeadCommit"] != s["baseCommit"]:
            lines.append(
                f"- Continues from: {_code(s['startedHeadCommit'])} (commits left on the branch by "
                "an earlier claim)"
            )
        left = s.get("leftUncommitted") or []
        if left:
            shown = ", ".join(_code(path) for path in left[:10])
            more = f" and {len(left) - 10} more" if len(left) > 10 else ""
            lines.append(
                "- **Uncommitted changes already in this worktree**, left by an earlier run — "
                "review them, then commit or discard them (`stage done` refuses a worktree with "
                f"uncommitted changes): {shown}{more}"
            )
        if s.get("takeOverOf"):
            lines.append(f"- Taken over from run {_code(s['takeOverOf'])} (its lease expired)")
        if s.get("leaseExpiresAt"):
            lines.append(f"- Lease expires: {s['leaseExpiresAt']}")
        lines += _plan_lines(key, s)
        for dep in s.get("dependencies") or []:
            lines += _handover_lines(dep)
    # Claimed with --no-worktree: the work is committed in the clone's checkout, and stage
    # done, run there, records its HEAD (there is no stage worktree HEAD to record).
    bare = not any(s.get("worktreePath") for s in stages)
    where = (
        f"in this clone's checkout{f', {_code(clone_dir)}' if clone_dir else ''} (no stage "
        "worktree: `--head HEAD` records its HEAD as the stage's head; `--head SHA` names "
        "another commit)"
        if bare
        else "in its worktree"
    )
    lines += [
        "",
        f"Work stage by stage in number order. When a stage is finished, commit {where}, "
        "write its report, then mark it done:",
    ]
    for s in stages:
        report = s.get("report") or "PATH"
        head = () if s.get("worktreePath") else ("--head", "HEAD")
        done = _here(
            clone_dir, "stage", "done", key, "--stage", s["stage"], "--report", report, *head
        )
        lines.append(f"- stage {s['stage']}: {_code(done)}")
    first = stages[0]["stage"] if stages else "N"
    carry = command("--carry", _carry(stages[0].get("report", "") if stages else "", first))
    start = _here(clone_dir, "report", "init", key, "--type", "implementation", "--stage", first)
    lines += [
        f"(add {_code(carry)} to hand the next stage a summary). The report is Markdown, or "
        f"report data started from the task's records with {_code(start)} "
        "— write its `Replace:` prompts, nothing else; `stage done` checks it "
        f"({_code(okstra('docs', 'report-format'))} says every field).",
    ]
    if any(s.get("leaseExpiresAt") for s in stages):
        renew = _here(clone_dir, "stage", "renew", key)
        lines.append(
            f"Renew the lease while you work — once it runs out another run may take the stage "
            f"over: {_code(renew)}"
        )
    # Each line's values are escaped as one: its literal text holds no line break.
    return "".join(_v(line) + "\n" for line in lines)


def _here(clone_dir: str, *args: object) -> str:
    """``git okstra ARGS``, run in ``clone_dir`` (``git -C``) when it is known."""
    return command("git", "-C", clone_dir, "okstra", *args) if clone_dir else okstra(*args)


def _carry(report: str, stage: object) -> str:
    """A carry file for ``stage``: in the run's ``carry/`` folder beside its ``reports/``,
    when the report's path is known."""
    import posixpath

    if not report:
        return f"carry/stage-{stage}.json"
    runs = posixpath.dirname(posixpath.dirname(report))
    return posixpath.join(runs, "carry", f"stage-{stage}.json")


def _block(text: str, info: str) -> list[str]:
    """``text`` as one fenced block, line by line (nothing in it can close the block)."""
    from .reports.stored import fenced

    return fenced(text, info).rstrip("\n").split("\n")


def _concurrent_lines(concurrent: list[dict[str, Any]] | None) -> list[str]:
    """The seed's ``CONCURRENT_RUN_STAGES``: what other runs hold now, and their files."""
    if concurrent is None:
        return []
    if not concurrent:
        return ["- **Concurrent run stages:** none — no other run holds a stage of this task now."]
    csv = ",".join(str(c["stage"]) for c in concurrent)
    lines = [
        f"- **Concurrent run stages:** {_code(csv)} — held by other runs now; leave their "
        "predicted files to them:"
    ]
    for c in concurrent:
        title = f" — {c['title']}" if c.get("title") else ""
        lease = f", lease until {c['leaseExpiresAt']}" if c.get("leaseExpiresAt") else ""
        if c.get("state") == "expired":
            lease += " (expired)"
        files = ", ".join(_code(f) for f in c.get("predictedFiles") or []) or "none listed"
        lines.append(
            f"  - stage {c['stage']}{title}: run {_code(c['runId'])} ({c['who']}{lease}); "
            f"predicted files {files}"
        )
    return lines


def _plan_lines(key: str, stage: dict[str, Any]) -> list[str]:
    """The stage's section of the approved plan: its steps and Stage Exit Contract."""
    show = okstra("plan", "show", key, "--stage", stage["stage"])
    brief = stage.get("plan")
    if not brief or not brief.get("section"):
        return [f"- Plan section: not readable here; see {_code(show)}"]
    return [
        "",
        f"#### Stage {stage['stage']} in the approved plan — its steps and Stage Exit Contract "
        f"(again: {_code(show)})",
        "",
        *_block(brief["section"], "markdown"),
    ]


def _handover_lines(dep: dict[str, Any]) -> list[str]:
    """A done dependency's hand-over: its done commit, its carry and its report."""
    import json

    title = f" — {dep['title']}" if dep.get("title") else ""
    commit = dep.get("doneCommit")
    lines = [
        "",
        f"#### Hand-over from stage {dep['stage']}{title} (a dependency, done)",
        "",
        f"- Done commit: {_code(commit) if commit else '—'} (run {_code(dep['runId'])}, "
        f"{dep['who']}, at {dep.get('doneAt') or '—'})",
    ]
    if dep.get("carry") is not None:
        carry = json.dumps(dep["carry"], ensure_ascii=False, indent=2, sort_keys=True)
        lines += ["- Carry (stored with its done claim):", "", *_block(carry, "json")]
    else:
        lines.append("- Carry: none (its `stage done` was given no `--carry`)")
    # One line per item: the directive escapes a line break inside an item.
    report = [part for item in stage_report_section(dep, "#####") for part in item.split("\n")]
    return lines + (
        report if report else ["- Report: none (its `stage done` was given no `--report`)"]
    )
