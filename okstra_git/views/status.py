"""What ``task status`` prints: plain lines (no template engine on this often-called read)."""

from __future__ import annotations

from ..records.base import to_data
from ..services.status import PlanStatus, StageStatus, TaskStatus, VerdictStatus
from . import Output
from .remote import lags_data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def status(found: TaskStatus) -> Output:
    return Output(data(found), lambda: text(found))


def data(found: TaskStatus) -> dict[str, Any]:
    """``task status --json`` (and each task of the board's data)."""
    task = found.state.task
    flow = task.workflow
    assert found.next is not None
    branch = found.branch
    return {
        "taskKey": task.task_key,
        "ref": f"refs/okstra/tasks/{found.state.key.ref_suffix}",
        "commit": found.state.head,
        "phase": {
            "status": task.current_status,
            "current": flow.current_phase,
            "state": flow.current_phase_state,
            "next": flow.next_recommended_phase,
            "routing": flow.routing_status,
            "latestRun": to_data(task.latest_run) if task.latest_run else None,
            "openStages": found.open_stages,
        },
        "plan": plan_data(found.plan) if found.plan is not None else None,
        "stages": [stage_data(s) for s in found.stages],
        "taskWorktree": {
            "branch": found.task_branch,
            "head": found.task_head,
            "path": found.task_worktree or None,
        },
        "published": {
            "remote": found.remote,
            "taskBranch": (
                {"state": branch.state, "local": branch.local, "published": branch.remote}
                if branch is not None
                else None
            ),
            "unpublished": found.unpublished,
            "home": found.home,
        },
        "verdict": verdict_data(found.verdict) if found.verdict is not None else None,
        "publishedVerdict": (
            {**verdict_data(found.published_verdict), "remote": found.remote}
            if found.published_verdict is not None
            else None
        ),
        "remoteLag": lags_data(found.lag),
        "next": found.next.to_data(),
    }


def plan_data(plan: PlanStatus) -> dict[str, Any]:
    """``plan`` of ``task status --json``."""
    return {
        "seq": plan.seq,
        "path": plan.path,
        "blob": plan.blob,
        "readFrom": plan.read_from,
        "approved": plan.approved,
        "reasons": plan.reasons,
        "approvedBy": plan.approved_by,
        "approvedAt": plan.approved_at,
        "method": plan.method,
    }


def verdict_data(verdict: VerdictStatus) -> dict[str, Any]:
    """``verdict`` of ``task status --json`` (``publishedVerdict`` adds its remote)."""
    if verdict.error is not None:
        return {"head": verdict.head, "error": verdict.error, "opensGate": False}
    return {
        "head": verdict.head,
        "verdict": verdict.verdict,
        "scope": verdict.scope,
        "recordedOn": verdict.recorded_on,
        "recordedAt": verdict.recorded_at,
        "recordedBy": verdict.recorded_by,
        "opensGate": verdict.opens_gate,
        "why": verdict.why,
    }


def stage_data(stage: StageStatus) -> dict[str, Any]:
    """One stage of ``task status --json``."""
    c = stage.claim
    return {
        "stage": stage.number,
        "title": stage.title,
        "dependsOn": stage.depends_on,
        "state": stage.state,
        "why": stage.why,
        "holder": (
            {
                "host": c.host,
                "user": c.user,
                "clone": c.clone,
                "runId": c.run_id,
                "mine": stage.mine,
            }
            if c is not None and stage.state != "ready" and stage.state != "blocked"
            else None
        ),
        "leaseExpiresAt": c.lease_expires_at if c is not None else None,
        "doneCommit": c.head_commit if c is not None and c.status == "done" else None,
        "merged": stage.merged,
        "integrated": stage.integrated,
        "branch": c.branch if c is not None and c.branch else None,
        "worktree": c.worktree_path if c is not None and c.worktree_path else None,
        **({"fetchedFrom": stage.fetched_from} if stage.fetched_from else {}),
    }


def text(found: TaskStatus) -> str:
    shown = data(found)
    phase = shown["phase"]
    state = phase["state"]
    if phase["openStages"] and phase["current"] == "implementation" and state != "running":
        # A finished run is one batch: the phase is open while any stage is.
        done = len(shown["stages"]) - phase["openStages"]
        state = f"{done} of {len(shown['stages'])} stages done"
    lines = [
        f"task {shown['taskKey']} — {phase['status']}; phase {phase['current']} "
        f"({state}), next {phase['next'] or '-'}"
    ]
    run = phase["latestRun"]
    if run:
        lines.append(f"latest run: {run['taskType']} {run['seq']} ({run['status']})")
    plan = shown["plan"]
    if plan is None:
        lines.append("plan: none submitted")
    else:
        said = (
            f"approved by {plan['approvedBy']} at {plan['approvedAt']} (method {plan['method']})"
            if plan["approved"]
            else "NOT approved: " + ", ".join(plan["reasons"])
        )
        lines.append(f"plan: plan-{plan['seq']} {plan['path']} ({plan['blob'][:12]}) — {said}")
    if shown["stages"]:
        lines.append("stages:")
    for stage in shown["stages"]:
        lines.append("  " + _stage(stage))
    tw = shown["taskWorktree"]
    if tw["head"]:
        lines.append(f"task worktree: {tw['path'] or '(not checked out)'} at {tw['head'][:12]}")
    verdict = shown["verdict"]
    published = shown["publishedVerdict"]
    if verdict is None and published is not None:
        lines.append("verdict: none on this clone's task branch; " + _published(published))
    elif verdict is None:
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
    if verdict is not None and published is not None:
        lines.append("published verdict: " + _published(published))
    lags = shown["remoteLag"]
    for lag in lags:
        lines.append(f"remote {lag['remote']}: {lag['ref']} {lag['state'].replace('-', ' ')}")
    published = shown["published"]
    branch = published["taskBranch"]
    if published["remote"] is not None:
        lines.append(f"task branch: {_branch(published['remote'], branch)}")
        if published["unpublished"]:
            lines.append(
                f"not on {published['remote']} yet: " + ", ".join(published["unpublished"])
            )
    if published["remote"] is None and published.get("home"):
        lines.append(
            f"not on {published['home']} yet: the task and its claims, here only ("
            + ", ".join(published["unpublished"])
            + ")"
        )
    if not lags and not published["unpublished"]:
        lines.append("remotes: in step with what was last fetched")
    step = shown["next"]
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


def _published(v: dict[str, Any]) -> str:
    """The verdict on the published task branch, for a clone whose own is not that one (its
    next step brings that branch here)."""
    gate = "opens the gate there" if v["opensGate"] else f"does not open the gate: {v['why']}"
    return (
        f"{v['verdict']} ({v['scope']}) recorded on {v['recordedOn'][:12]} at "
        f"{v['recordedAt']}, on {v['remote']}'s task branch ({v['head'][:12]}), which this "
        f"clone's has not taken in — {gate}"
    )
