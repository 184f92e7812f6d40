"""Task and stage worktrees (docs/workflow.md): where they live, making them, listing, tearing down.

Layout under ``okstra.worktreeRoot`` (default: one folder per clone,
``~/.okstra/worktrees/<clone folder>-<8 hex>``, so two clones of one project on one machine never
share a worktree folder)::

    <root>/<project>/<group>/<id>/task        branch okstra/<group>/<id>/task
    <root>/<project>/<group>/<id>/stage-<N>   branch okstra/<group>/<id>/stage-<N>,
                                              git worktree name okstra-<group>-<id>-stage-<N>

The task worktree is where finished stages are merged (by the user); its HEAD is the base of
every new stage. Teardown never loses work: ``prune`` refuses, naming files and commits, a
worktree with uncommitted changes or a branch with commits the task worktree HEAD lacks.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import BadInput, Conflict, Refused, brief
from ..core.keys import TaskKey
from ..core.machine import sha1_hex
from ..core.shell import okstra as shell_okstra
from ..core.userfiles import write_atomic
from ..core.values import Value, field
from ..git.repo import RefMoved, RefUpdate, cas_retry, commits_not_in
from ..git.worktrees import (
    add_worktree,
    delete_branch,
    dirty_paths,
    main_worktree,
    occupied,
    remove_worktree,
    require_intact,
    worktree_at,
    worktree_head,
    worktree_own_refs,
)
from ..records.claim import ClaimState, load_claims
from .context import Context
from .layout import Layout, layout, task_worktree_path


def make_task_folder(ctx: Context, lay: Layout) -> None:
    """Make the folder every worktree of the task goes in; refuse clearly when the root
    cannot hold it (``/proc/…``, a read-only disk), before any claim or branch is written.
    Inside the main work tree it is excluded first (:func:`_exclude_task_folder`)."""
    _exclude_task_folder(ctx, lay)
    try:
        lay.folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(
            f"cannot make the worktree folder {brief(str(lay.folder))} ({exc.strerror}); point "
            "okstra.worktreeRoot at a folder you can write: git config okstra.worktreeRoot PATH"
        ) from exc


def _exclude_task_folder(ctx: Context, lay: Layout) -> None:
    """A worktree root inside the main work tree (``okstra.worktreeRoot=wt``) puts the task's
    worktrees there: untracked (``?? wt/``), and ``git add -A`` would add each one as an
    embedded repository. So the task's folder goes into the common ``info/exclude`` (every
    worktree reads it), once, as an exact path."""
    main = ctx.repo.main_checkout()[0]  # the folder alone: it may have no commit yet
    if main is None:
        return
    try:
        relative = lay.folder.resolve().relative_to(Path(main).resolve())
    except ValueError:
        return  # outside the work tree: nothing to hide
    exclude = ctx.repo.common_dir / "info" / "exclude"
    text = exclude.read_text("utf-8") if exclude.is_file() else ""
    line = "/" + _ignore_escaped(relative.as_posix()) + "/"
    if line in text.splitlines():
        return
    lead = "" if not text or text.endswith("\n") else "\n"
    added = f"{lead}# okstra worktrees of {lay.key} (okstra.worktreeRoot is inside the work tree)\n"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(exclude, (text + added + line + "\n").encode("utf-8"), "info/exclude")


def _ignore_escaped(path: str) -> str:
    """``path`` as a gitignore pattern that matches it alone (gitignore(5): ``\\`` escapes
    the wildcards; trailing spaces are kept only escaped). No pattern holds a line break."""
    if "\n" in path or "\r" in path:
        raise BadInput(
            f"the worktree folder {brief(path)!r} is inside the work tree and holds a line "
            "break, so it cannot be kept out of git status; point okstra.worktreeRoot "
            "elsewhere: git config okstra.worktreeRoot PATH"
        )
    out = "".join("\\" + ch if ch in "\\*?[" else ch for ch in path)
    stripped = out.rstrip(" ")
    return stripped + "\\ " * (len(out) - len(stripped))


def task_head(ctx: Context, lay: Layout) -> str:
    """The task worktree HEAD: its branch head (merges in the task worktree move it), or where
    the task worktree will start (:func:`task_start`) before this clone has the branch."""
    head = ctx.repo.read_ref(f"refs/heads/{lay.task_branch}")
    return head if head is not None else task_start(ctx, lay)[0]


class MadeFrom(Value):
    """What a task worktree was made from (views/worktree.py's ``made_from`` words it)."""

    kind: str
    """``here`` (the task branch this clone has), ``published`` (the task branch another clone
    published on ``remote``: its stages merged there), ``base`` (the task's implementation
    base, where its stages started) or ``main`` (the main worktree HEAD, before the first
    claim)."""
    name: str | None = None
    """The task branch (``here``) or the remote (``published``)."""


def task_start(ctx: Context, lay: Layout) -> tuple[str, MadeFrom]:
    """Where a task worktree made now starts, and what that is: the task branch another clone
    published (its stages merged there), else the task's implementation base (where its
    stages started), else the main worktree HEAD (before the first claim)."""
    from ..core.tracking import tracking_name
    from ..records.task import load_task
    from .branches import shared_ref

    shared = shared_ref(lay.key, "task")
    for remote in ctx.repo.remote_names():
        published = ctx.repo.read_ref(tracking_name(remote, shared))
        if published is not None:
            return published, MadeFrom("published", remote)
    state = load_task(ctx.repo, lay.key)
    base = state.task.implementation_base_commit if state is not None else None
    if base is not None and ctx.repo.has_object(base):
        return base, MadeFrom("base")
    workdir, head = ctx.repo.main_checkout()
    if workdir is not None and head is None:
        raise _nothing_to_start_from(ctx, lay.key, base)
    return main_worktree(ctx.repo)[1], MadeFrom("main")


class NothingToStartFrom(Refused):
    """The task worktree cannot start in this clone: it has no commit yet, nor the one the
    task's worktrees start from. ``argv`` (run in the clone) brings it, when a remote can."""

    def __init__(self, message: str, argv: tuple[str, ...] | None, clone_dir: str) -> None:
        from ..logic.nextstep import line

        super().__init__(message, hint=line(argv, clone_dir) if argv else None)
        self.argv = argv


def _nothing_to_start_from(ctx: Context, key: TaskKey, base: str | None) -> NothingToStartFrom:
    """A clone with no commit yet (``git init`` + ``init --remote``: only okstra's records
    fetched) and not the commit the task's worktrees start from: fetch it, or (the task's
    first claim, which starts from the main worktree's HEAD) bring the remote's branch here."""
    from ..logic.nextstep import line
    from .remoteview import home_remote, shared_remote

    remote = shared_remote(ctx.repo, key) or home_remote(ctx.repo)
    remotes = ctx.repo.remote_names()
    remote = remote or (remotes[0] if remotes else None)
    if remote is None:
        return NothingToStartFrom(
            f"this clone has no commit yet and no remote to fetch one from, and the stages of "
            f"{key} start from a commit: commit something first, then claim again",
            None,
            ctx.clone_dir,
        )
    empty = "this clone has no commit yet (only okstra's records were fetched)"
    if base is not None:
        fetch = ("git", "fetch", remote)
        return NothingToStartFrom(
            f"the stages of {key} start from its implementation base {base[:12]}, which is not "
            f"in this clone: {empty}. Fetch the project's branches from {remote} "
            f"({line(fetch, ctx.clone_dir)}), then claim again",
            fetch,
            ctx.clone_dir,
        )
    branch = _branch_to_pull(ctx, remote)
    pull = ("git", "pull", remote, branch)
    return NothingToStartFrom(
        f"{empty}, and the first claim of {key} starts the task from the main worktree's "
        f"HEAD: bring {remote}'s {branch} here ({line(pull, ctx.clone_dir)}) or commit "
        "something, then claim again",
        pull,
        ctx.clone_dir,
    )


def _branch_to_pull(ctx: Context, remote: str) -> str:
    """The branch of ``remote`` to bring into a clone with no commit: the one HEAD names when
    the remote has it; else the remote's only branch. A clone of a remote whose HEAD names a
    branch nobody pushed (a bare repository made with another default branch) is left on that
    unborn name, which `git pull` would refuse."""
    branch = (ctx.repo.head_branch() or "refs/heads/main").removeprefix("refs/heads/")
    prefix = f"refs/remotes/{remote}/"
    there = [name.removeprefix(prefix) for name in ctx.repo.list_refs(prefix)]
    branches = [name for name in there if name != "HEAD"]
    return branches[0] if branch not in there and len(branches) == 1 else branch


def ensure_task_worktree(ctx: Context, lay: Layout) -> Path:
    """The task worktree, made from the main worktree HEAD the first time it is needed."""
    found = ctx.repo.worktree_for_branch(lay.task_branch)
    if found is not None and found.exists():
        return found
    make_task_folder(ctx, lay)
    add_worktree(ctx.repo, lay.task_name, lay.task_path, lay.task_branch, task_head(ctx, lay))
    return lay.task_path


class TaskWorktree(Value):
    """What ``worktree task`` made or found."""

    path: Path
    """The task worktree."""
    branch: str
    """Its branch."""
    head: str | None
    """Its HEAD now."""
    made_from: MadeFrom | None
    """What it was made from, when this call made it (None: it existed)."""


def task_worktree(ctx: Context, key: TaskKey) -> TaskWorktree:
    """The task worktree, made if this clone has none (a clone that merges and verifies stages
    other clones finished): from the task branch here, else as :func:`task_start` says."""
    from ..records.task import require_task

    require_task(ctx.repo, key)
    lay = layout(ctx, key)
    found = ctx.repo.worktree_for_branch(lay.task_branch)
    made_from = None
    if found is None or not found.exists():
        if ctx.repo.read_ref(f"refs/heads/{lay.task_branch}") is not None:
            made_from = MadeFrom("here", lay.task_branch)
        else:
            made_from = task_start(ctx, lay)[1]
    path = ensure_task_worktree(ctx, lay)
    return TaskWorktree(path, lay.task_branch, worktree_head(path, ctx.repo), made_from)


def check_stage_slot(ctx: Context, lay: Layout, stage: int) -> None:
    """Refuse before claiming when the stage's worktree folder is taken by something else, so
    the claim does not land only to be rolled back."""
    path = lay.stage_path(stage)
    found = worktree_at(ctx.repo, path)
    if found is None and path.exists() and any(path.iterdir()):
        raise Refused(occupied(path, f"the worktree of stage {stage} of {lay.key}", "claim"))


def provision_stage(
    ctx: Context, lay: Layout, stage: int, path: Path, start: str
) -> tuple[bool, bool]:
    """Make (or reuse) the stage worktree and branch; says which of the two this call made."""
    return add_worktree(ctx.repo, lay.stage_name(stage), path, lay.stage_branch(stage), start)


def remove_stage(ctx: Context, path: Path, branch: str, branch_head: str | None) -> None:
    """Remove a stage's worktree, then its branch (if still at ``branch_head``)."""
    remove_worktree(ctx.repo, path)
    if branch_head is not None:
        delete_branch(ctx.repo, branch, branch_head)


# ---------------------------------------------------------------------------------------------
# Listing and teardown


class WorktreeEntry(Value):
    """One worktree of a task as ``worktree list`` shows it."""

    kind: str
    """``task`` or ``stage``."""
    stage: int | None
    """The stage number (stage worktrees)."""
    path: str
    """Folder of the worktree (recorded or default; it may be gone)."""
    branch: str
    """Its branch."""
    exists: bool
    """Whether the folder is a worktree now."""
    head: str | None
    """The commit checked out, or the branch head when the folder is gone."""
    dirty: list[str]
    """Uncommitted paths (outside ``.okstra/``)."""
    claim_status: str | None
    """The stage's claim status (stage worktrees)."""
    run_id: str | None
    """The run holding or having held the stage."""
    repair: str | None = None
    """Set when the folder is a registered worktree git cannot read (its ``.git`` file was
    deleted): the message naming the command that repairs it."""
    elsewhere: str | None = None
    """Set for a stage worktree of another clone's claim (who and where): it lives in that
    clone, so this one never counts it as missing."""


def _entry(
    ctx: Context,
    kind: str,
    stage: int | None,
    path: Path,
    branch: str,
    status: str | None,
    run_id: str | None,
) -> WorktreeEntry:
    repair = None
    try:
        head = worktree_head(path, ctx.repo)
    except BadInput as broken:
        head, repair = None, str(broken)
    exists = head is not None
    return WorktreeEntry(
        kind=kind,
        stage=stage,
        path=str(path),
        branch=branch,
        exists=exists,
        head=head if exists else ctx.repo.read_ref(f"refs/heads/{branch}"),
        dirty=dirty_paths(path) if exists else [],
        claim_status=status,
        run_id=run_id,
        repair=repair,
    )


def list_worktrees(ctx: Context, key: TaskKey) -> list[WorktreeEntry]:
    """The task worktree and every claimed stage's worktree (made or not); another clone's are
    named as such, never as missing here."""
    from .ownership import is_ours  # claims use this module: imported when listing

    lay = layout(ctx, key)
    task_path = task_worktree_path(ctx, key)
    entries = [_entry(ctx, "task", None, task_path, lay.task_branch, None, None)]
    for number, state in sorted(load_claims(ctx.repo, key).items()):
        claim = state.claim
        if not claim.worktree_path:
            continue  # claimed with --no-worktree
        if not is_ours(ctx, lay, claim):
            entries.append(
                WorktreeEntry(
                    kind="stage",
                    stage=number,
                    path=claim.worktree_path,
                    branch=claim.branch,
                    exists=False,
                    head=claim.head_commit or claim.started_head_commit,
                    dirty=[],
                    claim_status=claim.status,
                    run_id=claim.run_id,
                    elsewhere=claim.who,
                )
            )
            continue
        entries.append(
            _entry(
                ctx,
                "stage",
                number,
                Path(claim.worktree_path),
                claim.branch,
                claim.status,
                claim.run_id,
            )
        )
    return entries


KEPT_PREFIX = "refs/okstra-kept/"
"""Where a forced prune keeps the commits it would otherwise drop: local only (``sync`` moves
``refs/okstra/*``), one ref per commit, ``refs/okstra-kept/<group>/<id>/stage-<N>/<sha>``."""


def kept_prefix(key: TaskKey, stage: int) -> str:
    return f"{KEPT_PREFIX}{key.ref_suffix}/stage-{stage}/"


class MovedReport(Value):
    """A stage report moved out of a worktree before it was removed."""

    stage: int
    source: Path
    target: Path


class Skipped(Value):
    """A done stage ``worktree prune`` left as it is (views/worktree.py's ``skipped`` words it)."""

    stage: int
    path: Path
    """The worktree the stage's claim names."""
    locked: str | None
    """Why git keeps it (``git worktree lock --reason``, ``""`` for none): it and its branch
    stay, and ``git worktree unlock`` of ``path`` frees it; ``None``: the claim names a
    folder that is not this clone's (not ``own``, nor a worktree on ``branch``)."""
    own: Path
    """Where this clone keeps the stage's worktree."""
    branch: str
    found: Path | None = None
    """The locked worktree as git lists it."""


class PruneResult(Value):
    """What ``worktree prune`` removed, kept and skipped."""

    removed: list[int]
    """Stages whose worktree and branch are gone now."""
    problems: list[str]
    """Work that would be lost, one line per worktree or commit (removed anyway with force:
    uncommitted files are gone, commits are kept under ``kept``)."""
    kept: list[str] = field(default_factory=list)
    """Refs made under ``refs/okstra-kept/`` for commits the task branch lacks (force)."""
    skipped: list[Skipped] = field(default_factory=list)
    """Locked worktrees, left as they are, each with the command that unlocks it."""
    moved_reports: list[MovedReport] = field(default_factory=list)
    """Stage reports a claim names, moved out of a worktree before it was removed."""


class _Teardown(Value):
    """One done stage's worktree and branch, checked and ready to go."""

    stage: int
    path: Path
    branch: str
    branch_head: str | None
    """The branch's value when checked: deleted only if it still holds it."""
    keep: list[str]
    """Commits no ref that stays contains (pinned under ``refs/okstra-kept/`` first)."""
    report: Path | None
    """The claim's report, when it lives inside the worktree."""


def _unmerged(
    ctx: Context, task: str | None, kept: list[str], labelled: dict[str, str]
) -> tuple[list[str], list[str]]:
    """The commits of ``labelled`` (commit → what points at it) that neither the task branch
    nor a kept ref contains, and one line each saying what would be lost."""
    safe = [c for c in (task, *kept) if c is not None]
    loose = [
        commit
        for commit in labelled
        if not any(ctx.repo.contains(ref_head, commit) for ref_head in safe)
    ]
    lines = []
    for commit in loose:
        if task is None:
            lines.append(
                f"{labelled[commit]} ({commit[:12]}) cannot be checked: the task branch does "
                "not exist"
            )
            continue
        commits = commits_not_in(ctx.repo, commit, task)
        listed = "; ".join(f"{sha[:12]} {subject}" for sha, subject in commits)
        lines.append(
            f"{labelled[commit]} has {len(commits)}{'+' if len(commits) >= 20 else ''} "
            f"commit(s) not in the task worktree HEAD {task[:12]}: {listed}"
        )
    return loose, lines


def _report_inside(report_path: str | None, worktree: Path) -> Path | None:
    """The claim's report file when it lives inside ``worktree`` (named relative to it, as
    ``stage done`` run there records it, or by an absolute path into it)."""
    if not report_path:
        return None
    named = Path(report_path)
    found = named if named.is_absolute() else worktree / named
    if not found.is_file() or not found.resolve().is_relative_to(worktree.resolve()):
        return None
    return found


def _check_stage(
    ctx: Context, key: TaskKey, state: ClaimState, task: str | None, problems: list[str]
) -> _Teardown | Skipped | None:
    """What pruning a done stage takes: a teardown, a reason to skip it, or None (gone)."""
    claim = state.claim
    number, path, branch = claim.stage, Path(claim.worktree_path), claim.branch
    found = worktree_at(ctx.repo, path)
    head = ctx.repo.read_ref(f"refs/heads/{branch}")
    own = layout(ctx, key).stage_path(number)
    if not _same(path, own) and not (found is not None and _on_branch(ctx, found.path, branch)):
        # A claim recorded elsewhere (another clone, a forged record): its folder is not ours
        # to remove, whatever it names.
        if found is None and head is None:
            return None
        return Skipped(number, path, None, own, branch)
    if found is None and head is None:
        remove_worktree(ctx.repo, path)  # finishes a teardown killed after the branch went
        return None
    elsewhere = ctx.repo.worktree_for_branch(branch)
    if elsewhere is not None and (found is None or not _same(elsewhere, found.path)):
        raise Refused(
            f"stage {number}'s branch {branch} is checked out in {elsewhere}; switch that "
            "worktree to another branch before pruning"
        )
    present = found is not None and not found.prunable
    if found is not None and found.locked is not None:
        return Skipped(number, path, found.locked, own, branch, found.path)
    if present:
        require_intact(ctx.repo, path)
        dirty = dirty_paths(path)
        if dirty:
            problems.append(
                f"stage {number} worktree {path} has uncommitted changes: " + ", ".join(dirty)
            )
    labelled: dict[str, str] = {}
    if head is not None:
        labelled[head] = f"branch {branch}"
    worktree_head_now = worktree_head(path, ctx.repo) if present else None
    if worktree_head_now is not None:
        labelled.setdefault(worktree_head_now, f"worktree HEAD {worktree_head_now[:12]}")
    if claim.head_commit and ctx.repo.has_commit(claim.head_commit):  # else not ours to lose
        labelled.setdefault(claim.head_commit, f"done commit {claim.head_commit[:12]}")
    for ref, commit in sorted(worktree_own_refs(path).items()) if present else ():
        labelled.setdefault(commit, f"{ref} (the worktree's own ref) at {commit[:12]}")
    kept = list(ctx.repo.list_refs(kept_prefix(key, number)).values())
    keep, lines = _unmerged(ctx, task, kept, labelled)
    problems += [f"stage {number}: {line}" for line in lines]
    report = _report_inside(claim.report_path, path) if present else None
    return _Teardown(number, path, branch, head, keep, report)


def _on_branch(ctx: Context, path: Path, branch: str) -> bool:
    """Whether the worktree at ``path`` has ``branch`` checked out."""
    where = ctx.repo.worktree_for_branch(branch)
    return where is not None and _same(where, path)


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _keep(ctx: Context, key: TaskKey, plans: list[_Teardown]) -> list[str]:
    """Pin every commit a forced prune would drop under ``refs/okstra-kept/``, in one
    transaction, before anything is removed."""
    refs = {f"{kept_prefix(key, t.stage)}{c}": c for t in plans for c in t.keep}

    def attempt() -> None:
        new = [RefUpdate(ref, c, None) for ref, c in refs.items() if ctx.repo.read_ref(ref) != c]
        if new:
            ctx.repo.update_refs(new, f"okstra: keep commits of pruned stages of {key}")

    cas_retry(ctx.repo, attempt, list(refs))
    return sorted(refs)


def _move_report(ctx: Context, plan: _Teardown) -> MovedReport:
    """Copy the stage report out of the worktree, to the same place in the main worktree's
    workspace (where the claim's relative ``reportPath`` then resolves); another file already
    there is never overwritten: the report goes beside it, named after the stage."""
    assert plan.report is not None
    data = plan.report.read_bytes()
    relative = plan.report.resolve().relative_to(plan.path.resolve())
    target = main_worktree(ctx.repo)[0] / relative
    digest = sha1_hex(data)[:8]
    for candidate in (
        target,
        target.with_name(f"{target.stem}.stage-{plan.stage}{target.suffix}"),
        target.with_name(f"{target.stem}.stage-{plan.stage}-{digest}{target.suffix}"),
    ):
        try:
            if candidate.read_bytes() != data:
                continue
        except FileNotFoundError:
            candidate.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(candidate, data, "stage report", new=True)
        except IsADirectoryError:
            continue
        return MovedReport(plan.stage, plan.report, candidate)
    raise Refused(f"no free place to keep the stage {plan.stage} report {plan.report}")


def prune(ctx: Context, key: TaskKey, force: bool) -> PruneResult:
    """Remove worktrees and branches of done stages; never lose a commit.

    A worktree goes only when its HEAD, its branch and the claim's done commit are all reachable
    from a ref that stays: the task branch, or a ``refs/okstra-kept/`` ref. Without ``force``
    anything else (and any uncommitted change) refuses the whole prune; with it, uncommitted
    changes are dropped and unmerged commits are pinned under ``refs/okstra-kept/`` first.
    Locked worktrees are skipped and named. A report a claim names is moved out first.

    Every step is safe to be killed and redone: kept refs, moved reports and a worktree renamed
    aside all count as done on the next run, which picks up where this one stopped.
    """
    lay = layout(ctx, key)
    task = ctx.repo.read_ref(f"refs/heads/{lay.task_branch}")
    plans: list[_Teardown] = []
    skipped: list[Skipped] = []
    problems: list[str] = []
    for _, state in sorted(load_claims(ctx.repo, key).items()):
        if state.claim.status != "done" or not state.claim.branch:
            continue
        checked = _check_stage(ctx, key, state, task, problems)
        if isinstance(checked, Skipped):
            skipped.append(checked)
        elif checked is not None:
            plans.append(checked)
    if problems and not force:
        forced = shell_okstra("worktree", "prune", key, "--force")
        raise Refused(
            "worktree prune would lose work, so nothing was removed:\n"
            + "\n".join(f"  - {p}" for p in problems)
            + f"\nmerge or commit it (task worktree: {task_worktree_path(ctx, lay.key)}), or "
            "remove the worktrees anyway, keeping their unmerged commits under "
            f"{KEPT_PREFIX}: {forced}",
            hint=forced,
        )
    kept = _keep(ctx, key, plans) if force else []
    moved = [_move_report(ctx, plan) for plan in plans if plan.report is not None]
    for plan in plans:
        remove_worktree(ctx.repo, plan.path)
        if plan.branch_head is not None:
            _delete_branch(ctx, key, plan)
    return PruneResult(
        removed=[p.stage for p in plans],
        problems=problems,
        kept=kept,
        skipped=skipped,
        moved_reports=moved,
    )


def _delete_branch(ctx: Context, key: TaskKey, plan: _Teardown) -> None:
    assert plan.branch_head is not None
    try:
        delete_branch(ctx.repo, plan.branch, plan.branch_head)
    except RefMoved as moved:
        ref = f"refs/heads/{plan.branch}"
        if moved.lock_failed:
            found = ctx.repo.lock_report([ref])
            raise Conflict(
                f"stage {plan.stage}'s worktree is removed, but its branch {plan.branch} could "
                "not be deleted, so the prune stopped there; once the lock is cleared, finish "
                f"with: {shell_okstra('worktree', 'prune', key)}. "
                + (found.text if found else f"{ref} is locked by another writer."),
                hint=found.command if found else shell_okstra("worktree", "prune", key),
            ) from moved
        raise Conflict(  # committed on while we checked it: that is new work
            f"stage {plan.stage}'s branch {plan.branch} moved while it was being pruned, so it "
            f"was kept ({moved}); check it again with: {shell_okstra('worktree', 'prune', key)}"
        ) from moved
