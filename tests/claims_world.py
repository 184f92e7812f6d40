"""A task approved for claims, and the claim refs it gets: shared by the claim, worktree and sync
tests."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git
from plans import DIAMOND_PLAN

from okstra_git.services import claims, plans
from okstra_git.services.context import open_context

KEY = "p:g:i"


CLAIMS = "refs/okstra/claims/g/i/"


TASK_REF = "refs/okstra/tasks/g/i"


def approved_task(repo: Path, key: str = KEY, plan: str = DIAMOND_PLAN, name: str = "") -> Path:
    """A task whose plan is submitted and approved (method B), with worktrees under the repo's
    sibling folder ``wt/``. Done in-process: the CLI adds nothing these tests look at."""
    ctx = open_context(repo)
    if ctx.repo.config_get("okstra.worktreeRoot") is None:
        git(repo, "config", "okstra.worktreeRoot", str(repo.parent / "wt"))
    task_key = ctx.key(key)
    from okstra_git.services import tasks

    tasks.new_task(ctx, task_key, "implementation-planning", "feature", None)
    path = f"plans/{name or task_key.task_id}.md"
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(plan, "utf-8")
    plans.submit_plan(ctx, task_key, str(repo / path))
    plans.approve_plan(ctx, task_key)
    return repo.parent / "wt" / "p" / task_key.group_slug / task_key.id_slug


def claim_refs(repo: Path, prefix: str = CLAIMS) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return dict(line.split(" ") for line in out.splitlines())


def stored(repo: Path) -> str:
    """Every okstra ref with its value: what "nothing stored changed" compares."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/okstra/")


def show_claim(repo: Path, stage: int) -> dict:
    return json.loads(git(repo, "show", f"{CLAIMS}stage-{stage}:claim.json"))


def commit_in(worktree: Path, name: str, text: str = "x\n") -> str:
    (worktree / name).parent.mkdir(parents=True, exist_ok=True)
    (worktree / name).write_text(text)
    git(worktree, "add", name)
    git(worktree, "commit", "-q", "-m", f"add {name}")
    return git(worktree, "rev-parse", "HEAD")


def done_stage_one(repo: Path) -> tuple[Path, str]:
    """Diamond plan, stage 1 claimed, one commit in its worktree, marked done (not merged)."""
    folder = approved_task(repo)
    ctx = open_context(repo)
    claims.claim(ctx, ctx.key(KEY))
    head = commit_in(folder / "stage-1", "src/schema.py")
    claims.done(ctx, ctx.key(KEY), 1)
    return folder, head
