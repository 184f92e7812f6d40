"""A task with an N-stage plan, a task worktree and stage worktrees, for the verify tests.

State is real: real linked worktrees made with the git CLI, claim records written as the
claims service writes them (``claim.json`` in ``refs/okstra/claims/<g>/<i>/stage-<N>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from conftest import git
from plans import plan_text

from okstra_git.core.keys import TaskKey
from okstra_git.git.repo import RefUpdate
from okstra_git.records.claim import Claim, claim_commit, claim_ref, load_claim
from okstra_git.records.task import Task, now_iso, write_event
from okstra_git.services import plans, tasks
from okstra_git.services.context import Context, open_context

KEY = "proj:grp:feat"


def make_plan(count: int, depends: dict[int, list[int]] | None = None) -> str:
    """A valid plan of ``count`` one-step stages; stage N predicts only ``src/stage<N>.py``."""
    depends = depends or {}
    stages = [(n, depends.get(n, []), [f"src/stage{n}.py"]) for n in range(1, count + 1)]
    return plan_text(stages, steps=1)


@dataclass
class World:
    repo: Path
    """The main worktree."""
    ctx: Context
    key: TaskKey
    root: Path
    """Where the task and stage worktrees live."""
    base: str = ""
    """The implementation base commit."""
    stage_bases: dict[int, str] = field(default_factory=dict)

    @property
    def task_wt(self) -> Path:
        return self.root / "task"

    def stage_wt(self, n: int) -> Path:
        return self.root / f"stage-{n}"

    def branch(self, leaf: str) -> str:
        return f"okstra/{self.key.ref_suffix}/{leaf}"

    def start_stage(self, n: int) -> Path:
        """Claim stage N (record ``started``) on a worktree branched from the task HEAD."""
        base = git(self.task_wt, "rev-parse", "HEAD")
        git(self.repo, "worktree", "add", "-q", "-b", self.branch(f"stage-{n}"),
            str(self.stage_wt(n)), base)  # fmt: skip
        self.stage_bases[n] = base
        claim = Claim(
            task_key=str(self.key),
            stage=n,
            run_id=f"implementation-{n:03d}",
            status="started",
            started_at=now_iso(),
            host="test",
            user="Test User <test@example.invalid>",
            base_commit=base,
            started_head_commit=base,
            worktree_path=str(self.stage_wt(n)),
            branch=self.branch(f"stage-{n}"),
            batch=[n],
        )
        self._write_claim(claim)
        return self.stage_wt(n)

    def commit_in_stage(self, n: int, text: str = "work\n") -> str:
        wt = self.stage_wt(n)
        (wt / "src").mkdir(exist_ok=True)
        path = wt / "src" / f"stage{n}.py"
        path.write_text(path.read_text() + text if path.exists() else text)
        git(wt, "add", "-A")
        git(wt, "commit", "-q", "-m", f"stage {n}: {text.strip()}")
        return git(wt, "rev-parse", "HEAD")

    def finish_stage(self, n: int, report: str | None = None) -> str:
        """Mark stage N done at its worktree HEAD."""
        state = load_claim(self.ctx.repo, self.key, n)
        assert state is not None
        claim = state.claim
        claim.status = "done"
        claim.done_at = now_iso()
        claim.head_commit = git(self.stage_wt(n), "rev-parse", "HEAD")
        claim.report_path = report or f".okstra/reports/stage-{n}.md"
        self._write_claim(claim)
        return claim.head_commit

    def do_stage(self, n: int) -> str:
        self.start_stage(n)
        self.commit_in_stage(n)
        return self.finish_stage(n)

    def merge(self, *stages: int, ff: bool = False) -> str:
        branches = [self.branch(f"stage-{n}") for n in stages]
        git(self.task_wt, "merge", "-q", "--ff" if ff else "--no-ff", "-m", "merge", *branches)
        return git(self.task_wt, "rev-parse", "HEAD")

    def _write_claim(self, claim: Claim) -> None:
        repo = self.ctx.repo
        ref = claim_ref(self.key, claim.stage)
        old = repo.read_ref(ref)
        commit = claim_commit(repo, self.key, claim, old, f"claim {claim.status}")
        repo.update_refs([RefUpdate(ref, commit, old)], "test claim")


def make_world(repo: Path, stages: int = 2, depends: dict[int, list[int]] | None = None) -> World:
    """A task whose plan has ``stages`` stages, its task worktree and implementation base."""
    # libgit2 reads the global config of the HOME the process started with: name the
    # identity in the repository so in-process writes record the test user.
    git(repo, "config", "user.name", "Test User")
    git(repo, "config", "user.email", "test@example.invalid")
    ctx = open_context(repo)
    key = ctx.key(KEY)
    tasks.new_task(ctx, key, "implementation-planning", "feature", None)
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "plan.md").write_text(make_plan(stages, depends))
    git(repo, "add", "docs/plan.md")
    git(repo, "commit", "-q", "-m", "plan")
    plans.submit_plan(ctx, key, str(repo / "docs" / "plan.md"))
    world = World(repo=repo, ctx=ctx, key=key, root=repo.parent / "wt")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "worktree", "add", "-q", "-b", world.branch("task"), str(world.task_wt), base)
    world.base = base

    def change(task: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        assert task is not None
        task.implementation_base_commit = base
        return task, {}

    write_event(ctx.repo, key, change, "implementation base")
    return world


def merged_world(repo: Path, stages: int = 2) -> World:
    """Every stage done and merged into the task worktree: ready for a whole-task verdict."""
    world = make_world(repo, stages)
    for n in range(1, stages + 1):
        world.do_stage(n)
    world.merge(*range(1, stages + 1))
    return world
