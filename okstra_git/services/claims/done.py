"""Finishing a stage: ``stage done`` records the stage worktree's HEAD, its report and its carry."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from ...core.errors import BadInput, Refused
from ...core.keys import TaskKey
from ...core.shell import command
from ...core.shell import okstra as shell_okstra
from ...core.userfiles import read_json_object, workspace_relative
from ...core.values import Value
from ...git.repo import RefUpdate, cas_retry
from ...git.worktrees import dirty_paths, worktree_head
from ...logic.planfile import read_plan_file
from ...records.claim import Claim, claim_commit, claim_holder, claim_ref, report_file_name
from ...records.task import now_iso, task_ref
from ..context import Context
from ..layout import layout, task_worktree_path
from ..ownership import is_ours
from .common import (
    RUN_TYPE,
    RunLeftRunning,
    Unpublished,
    finish_run_if_done,
    not_started,
    require_claim,
)

MAX_CARRY_BYTES = 64 * 1024
"""A stage carry sidecar is a small summary handed to the next stage; larger is refused."""


class DoneResult(Value):
    """A stage marked done, and what happened to its run."""

    claim: Claim
    """The claim as stored now."""
    run_finished: bool
    """True when this was the batch's last stage and the run was finished ``completed``."""
    run_note: RunLeftRunning | None
    """Why the run was not finished, when every stage of its batch is done."""
    already: bool = False
    """True when the stage was already done at this head: nothing was written to the claim (a
    rerun after an interrupted ``stage done``; the run is still finished if it can be)."""
    merge: str | None = None
    """The command integrating the stage into the task branch (``integrate``; None: no task
    worktree here, or merged already)."""
    published: str | None = None
    """The remote the claim and the stage's branch were pushed to (``stage done --remote``)."""
    publish_note: Unpublished | None = None
    """What was recorded here but could not be published yet, with the command that does it."""


def _stage_head(ctx: Context, c: Claim, given: str | None) -> str:
    """The stage worktree HEAD (the branch head if the folder is gone); a given SHA must match."""
    wanted = ctx.repo.resolve_commit(given) if given is not None else None
    if c.worktree_path:
        head = worktree_head(c.worktree_path, ctx.repo)
        if head is not None:
            dirty = dirty_paths(c.worktree_path)
            if dirty:
                raise Refused(
                    f"stage {c.stage} worktree {c.worktree_path} has uncommitted changes: "
                    f"{', '.join(dirty)}; commit them there before marking the stage done"
                )
        else:
            head = ctx.repo.read_ref(f"refs/heads/{c.branch}")
        if head is None:
            raise Refused(
                f"stage {c.stage}: neither the worktree {c.worktree_path} nor the branch "
                f"{c.branch} exists, so there is no head commit to record"
            )
        if wanted is not None and wanted != head:
            raise Refused(
                f"--head {given} is {wanted[:12]}, but the stage {c.stage} worktree HEAD is "
                f"{head[:12]} ({c.worktree_path}); commit there or pass the right commit"
            )
        return head
    if wanted is None:
        raise BadInput(
            f"stage {c.stage} was claimed without a worktree; give its head commit with --head"
        )
    return wanted


def require_report_file(ctx: Context, key: TaskKey, stage: int, report: str) -> None:
    """``stage done --report X`` where nothing is at X yet (often the path the claim and task
    status named): refused (exit 2) with how to write it, as ``run finish`` does — render the
    report data beside it if there is some, else write it or start the stage's report data.
    The hint runs in the clone from any folder: report init run in the stage worktree would
    write the data in that worktree's ``.okstra/``, not beside X."""
    import os

    from ...logic.nextstep import line, okstra_argv

    if os.path.isfile(report):
        return
    data = report[: -len(".md")] + ".data.json" if report.endswith(".md") else None
    if data is not None and os.path.isfile(data):
        render = line(okstra_argv("report", "render", data), ctx.clone_dir)
        raise BadInput(
            f"--report {report}: no such file; its report data is beside it: write the report "
            f"from it (the hint), or mark the stage done with --report {data} itself",
            hint=render,
        )
    init = line(
        okstra_argv("report", "init", key, "--type", RUN_TYPE, "--stage", stage), ctx.clone_dir
    )
    raise BadInput(
        f"--report {report}: no such file; write the stage's report there (Markdown), or start "
        f"its report data (the hint), write its 'Replace:' prompts, and give --report the "
        f"data.json report init wrote (report render DATA writes {os.path.basename(report)} "
        "from it)",
        hint=init,
    )


def done(
    ctx: Context,
    key: TaskKey,
    stage: int,
    report: str | None = None,
    carry: str | None = None,
    head: str | None = None,
    publish: Callable[[list[RefUpdate], Claim], Unpublished | None] | None = None,
) -> DoneResult:
    """Mark ``stage`` done with its worktree HEAD; finish the run when its batch is done.

    The report's content is stored in the done commit — Markdown as ``report.md``, report data
    (``*.json``) as ``report.json`` — so it travels with the claim. ``publish`` (``stage done
    --remote``, see ``sync.done_via_remote``) gets the ref changes made here — the claim, and
    the task ref when the run was finished — and publishes them with the stage's code, or puts
    them back and raises; it returns what it could not publish, in words.
    """
    if report is not None:
        require_report_file(ctx, key, stage, report)
    report_path = workspace_relative(ctx.workdir, report, "--report") if report else None
    if report is not None:
        from ..reports import check_report_file

        check_report_file(ctx, key, report, RUN_TYPE, stage)
    report_raw = read_plan_file(report, "report").raw if report else None
    if report_raw is not None:
        # Stored with the claim and printed on other clones: held to what they accept.
        from ...records.incoming import report_problems

        problems = report_problems(report_raw, f"--report {report}")
        if problems:
            raise BadInput("; ".join(problems))
    carry_data = read_json_object(carry, "--carry", MAX_CARRY_BYTES)[1] if carry else None
    ref = claim_ref(key, stage)
    first = require_claim(ctx, key, stage)
    if first.claim.status != "released" and not is_ours(ctx, layout(ctx, key), first.claim):
        # Another clone's run holds it (a take-over after an expired lease, seen after a
        # fetch) or finished it: this clone's commits are not that run's to record.
        c = first.claim
        what = (
            f"held by {claim_holder(c, datetime.now(UTC)).held_by}"
            if c.status == "started"
            else f"done at {(c.head_commit or '')[:12]} by run {c.run_id} ({c.who})"
        )
        listing = shell_okstra("stage", "list", key)
        raise Refused(
            f"stage {stage} of {key} is {what}, not by this clone, so this clone cannot mark "
            "it done",
            hint=listing,
        )
    if first.claim.status != "started":
        # Done already at this head (a rerun): nothing to write, but the run may still need
        # finishing, and the claim publishing.
        _check_done_again(ctx, key, first.claim, head)
        unchanged = RefUpdate(ref, first.head, first.head)
        return _after_done(ctx, key, first.claim, unchanged, report, publish, already=True)
    head_commit = _stage_head(ctx, first.claim, head)

    def attempt() -> tuple[Claim, RefUpdate]:
        current = require_claim(ctx, key, stage)
        c = current.claim
        if c.status != "started":
            raise not_started(key, c)
        if c.run_id != first.claim.run_id:
            raise Refused(f"stage {stage} of {key} was taken over by {c.run_id} meanwhile")
        c.status = "done"
        c.done_at = now_iso()
        c.head_commit = head_commit
        c.report_path = report_path
        c.carry = carry_data
        files = (
            {report_file_name(report): report_raw}
            if report is not None and report_raw is not None
            else None
        )
        subject = f"done stage {stage} at {head_commit[:12]} ({c.run_id})"
        commit = claim_commit(ctx.repo, key, c, current.head, subject, files)
        update = RefUpdate(ref, commit, current.head)
        ctx.repo.update_refs([update], f"okstra: done stage {stage}")
        return c, update

    stored, update = cas_retry(ctx.repo, attempt, [ref])
    return _after_done(ctx, key, stored, update, report, publish, already=False)


def _after_done(
    ctx: Context,
    key: TaskKey,
    stored: Claim,
    update: RefUpdate,
    report: str | None,
    publish: Callable[[list[RefUpdate], Claim], Unpublished | None] | None,
    already: bool,
) -> DoneResult:
    """Finish the run if this was its last stage, then publish what changed (``publish``)."""
    tref = task_ref(key)
    task_before = ctx.repo.read_ref(tref)
    finished, note = finish_run_if_done(ctx, key, stored, report)
    unpublished = None
    if publish is not None:
        changed = [update]
        task_after = ctx.repo.read_ref(tref)
        if task_after != task_before:
            changed.append(RefUpdate(tref, task_after, task_before))
        unpublished = publish(changed, stored)
    merge = _merge_hint(ctx, key, stored)
    return DoneResult(
        stored, finished, note, already=already, merge=merge, publish_note=unpublished
    )


def _merge_hint(ctx: Context, key: TaskKey, c: Claim) -> str | None:
    """The command bringing a done stage into the task branch, when this clone has a task
    worktree that lacks the stage's done commit: ``integrate`` (through the remote the task is
    shared through, if any), which merges every done stage it lacks and publishes the branch. A
    plain ``git merge`` there would leave a local task branch beside the published one."""
    from ...logic.nextstep import line, okstra_argv
    from ..remoteview import shared_remote

    task_path = task_worktree_path(ctx, key)
    task_head = worktree_head(task_path, ctx.repo)
    if c.head_commit is None or task_head is None or ctx.repo.contains(task_head, c.head_commit):
        return None
    remote = shared_remote(ctx.repo, key)
    argv = okstra_argv("integrate", key, *(("--remote", remote) if remote else ()))
    return line(argv, ctx.clone_dir)


def _check_done_again(ctx: Context, key: TaskKey, c: Claim, head: str | None) -> None:
    """``stage done`` of a stage that is no longer started: fine when it is done at the same
    head (e.g. rerun after a kill between the claim update and the run's finish, which the
    caller then completes); otherwise a refusal saying what happened and the way out."""
    if c.status != "done":
        raise not_started(key, c)
    assert c.head_commit is not None
    if head is not None:
        now: str | None = ctx.repo.resolve_commit(head)
    elif c.worktree_path:
        now = worktree_head(c.worktree_path, ctx.repo) or ctx.repo.read_ref(
            f"refs/heads/{c.branch}"
        )
    else:
        now = c.head_commit
    if now != c.head_commit:
        merge = None
        if c.branch:
            task_path = task_worktree_path(ctx, key)
            merge = command("git", "-C", task_path, "merge", c.branch)
        raise Refused(
            f"stage {c.stage} of {key} is already done at {c.head_commit[:12]} ({c.run_id}, "
            f"{c.done_at}), and a done stage is not reopened; its head is now "
            f"{(now or 'gone')[:12]}. To take the later commits too, merge the stage branch "
            f"into the task worktree: {merge or 'git merge <the later commits>'}",
            hint=merge,
        )
