"""What ``task status`` prints: plain lines (no template engine on this often-called read)."""

from __future__ import annotations

from ..services.status import TaskStatus
from . import Output


def status(found: TaskStatus) -> Output:
    return Output(found.to_data(), lambda: text(found))


def text(found: TaskStatus) -> str:
    data = found.to_data()
    phase = data["phase"]
    state = phase["state"]
    if phase["openStages"] and phase["current"] == "implementation" and state != "running":
        # A finished run is one batch: the phase is open while any stage is.
        done = len(data["stages"]) - phase["openStages"]
        state = f"{done} of {len(data['stages'])} stages done"
    lines = [
        f"task {data['taskKey']} — {phase['status']}; phase {phase['current']} "
        f"({state}), next {phase['next'] or '-'}"
    ]
    run = phase["latestRun"]
    if run:
        lines.append(f"latest run: {run['taskType']} {run['seq']} ({run['status']})")
    plan = data["plan"]
    if plan is None:
        lines.append("plan: none submitted")
    else:
        said = (
            f"approved by {plan['approvedBy']} at {plan['approvedAt']} (method {plan['method']})"
            if plan["approved"]
            else "NOT approved: " + ", ".join(plan["reasons"])
        )
        lines.append(f"plan: plan-{plan['seq']} {plan['path']} ({plan['blob'][:12]}) — {said}")
    if data["stages"]:
        lines.append("stages:")
    for stage in data["stages"]:
        lines.append("  " + _stage(stage))
    tw = data["taskWorktree"]
    if tw["head"]:
        lines.append(f"task worktree: {tw['path'] or '(not checked out)'} at {tw['head'][:12]}")
    verdict = data["verdict"]
    if verdict is None:
        lines.append("verdict: none on the task's HEAD")
    elif "error" in verdict:
        lines.append(f"verdict: cannot be judged: {verdict['error']}")
    else:
        gate = (
            "opens the gate"
            if verdict["opensGate"]
            else f"does not open the gate: {verdict['why']}"
        )
        lines.append(
            f"verdict: {verdict['verdict']} ({verdict['scope']}) recorded on "
            f"{verdict['recordedOn'][:12]} at {verdict['recordedAt']} — {gate}"
        )
    lags = data["remoteLag"]
    for lag in lags:
        lines.append(f"remote {lag['remote']}: {lag['ref']} {lag['state'].replace('-', ' ')}")
    published = data["published"]
    branch = published["taskBranch"]
    if published["remote"] is not None:
        lines.append(f"task branch: {_branch(published['remote'], branch)}")
        if published["unpublished"]:
            lines.append(
                f"not on {published['remote']} yet: " + ", ".join(published["unpublished"])
            )
    if not lags and not published["unpublished"]:
        lines.append("remotes: in step with what was last fetched")
    step = data["next"]
    said = step["command"] or "nothing to run — " + step["why"]
    lines.append(f"next ({step['kind']}, {step['who']}): {said}")
    if step["command"]:
        lines.append(f"  why: {step['why']}")
    if step["kind"] == "work":
        lines.append(f"  work in: {step['worktree']}")
        if step.get("report"):
            lines.append(f"  report: {step['report']}")
    lines += [f"  also: {cmd}" for cmd in step["also"]]
    return "\n".join(lines)


def _branch(remote: str, branch: dict | None) -> str:
    if branch is None:
        return f"none here, none published on {remote}"
    mine, theirs = (v[:12] if v else "-" for v in (branch["local"], branch["published"]))
    return {
        "same": f"in step with {remote}'s ({mine})",
        "ahead": (
            f"ahead of {remote}'s ({theirs} → {mine}): not published"
            if branch["published"]
            else f"{mine} here, not published on {remote}"
        ),
        "behind": f"behind {remote}'s ({mine} here, {theirs} there)",
        "diverged": f"diverged from {remote}'s ({mine} here, {theirs} there)",
        "missing-here": f"none here; {remote} published {theirs}",
    }[branch["state"]]


def _stage(stage: dict) -> str:
    head = f"{stage['stage']:>3} {stage['state']:<8} {stage['title']}"
    holder = stage["holder"]
    if stage["state"] == "blocked":
        return f"{head} — {stage['why']}"
    if holder is None:
        return head
    who = f"{holder['runId']} by {holder['user']} on {holder['host']}"
    if holder["mine"]:
        who += " (this clone)"
    elif holder["clone"]:
        who += f" (clone {holder['clone']})"
    parts = [who]
    if stage["state"] in ("started", "expired") and stage["leaseExpiresAt"]:
        parts.append(f"lease until {stage['leaseExpiresAt']}")
    if stage["doneCommit"]:
        merged = {True: "integrated", False: "NOT integrated", None: "commit not here (sync)"}
        said = merged[stage["integrated"] if stage["merged"] is not None else None]
        parts.append(f"done {stage['doneCommit'][:12]}, {said}")
    return f"{head} — " + "; ".join(parts)
