"""Final verification (docs/workflow.md): resolve what a run verifies, enforce the gate, record
verdicts.

Nothing is typed in by hand: the worktree, base, HEAD and stage list come from the task record
(implementation base), the stage claims (done head commits, report paths, stage worktrees and
bases) and the plan snapshot's Stage Map. The gate's git questions are answered with one
history walk from HEAD hiding the base, and one status of the worktree.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.shell import okstra
from ..core.values import Value
from ..git.notesview import NotesView
from ..git.repo import DiffStatEntry, GitRepo, RefUpdate
from ..git.worktrees import dirty_paths, worktree_head
from ..logic import verify_rules as rules
from ..logic.phases import FINAL_VERIFICATION
from ..records.claim import Claim, StoredReport, load_claims, read_report
from ..records.task import Task, TaskState, now_iso, require_task, write_event
from ..records.verdict import VERDICTS_REF, Verdict, read_verdicts, verdict_notes_update
from .context import Context


class GateRefused(Refused):
    """The gate is not met; ``lines`` are the refusal texts, one per offence."""

    def __init__(self, lines: list[str], hint: str | None = None) -> None:
        super().__init__("\n".join(lines), hint=hint)
        self.lines = lines


class TargetStage(Value):
    """One Stage Map stage as the target sees it."""

    number: int
    """The Stage Map number."""
    status: str
    """The claim's status (``started``, ``done``, ``released``) or ``unclaimed``."""
    head_commit: str | None
    """The done head commit."""
    report_path: str | None
    """The stage's implementation report, recorded at ``stage done``."""
    branch: str | None
    """The stage branch, when claimed."""
    report: StoredReport | None = None
    """The report as stored in the done claim (``report.md`` or ``report.json``): readable on
    every clone, whoever wrote it."""
    report_here: str | None = None
    """``report_path`` in this clone (absolute), when the file is here: the path is the one
    the clone that marked the stage done wrote it at, which another clone may not have."""


class Target(Value):
    """What a final-verification run verifies (the ``VERIFICATION_TARGET`` block)."""

    task_key: str
    """The task, exactly as typed."""
    scope: str
    """``whole-task`` or ``single-stage``."""
    worktree: str
    """The worktree the run reads."""
    base: str
    """The implementation base (whole-task) or the stage's claim base (single-stage)."""
    head: str
    """The worktree's HEAD: the commit a verdict will be attached to."""
    head_tree: str
    """HEAD's tree."""
    stages: tuple[TargetStage, ...]
    """Every Stage Map stage (whole-task) or stage N alone."""
    all_stages_done: bool
    """Whether every Stage Map stage is done (routing after a single-stage verdict)."""


def resolve_target(
    ctx: Context, key: TaskKey, stage: int | None, worktree: str | None = None
) -> Target:
    """The verification target, or :class:`GateRefused` naming every offence at once."""
    from .snapshots import stage_map_of

    state = require_task(ctx.repo, key)
    numbers = stage_map_of(ctx, state).numbers
    states = load_claims(ctx.repo, key)
    claims = {n: c.claim for n, c in states.items()}
    reports = {n: read_report(ctx.repo, c) for n, c in states.items() if c.claim.status == "done"}
    done = {
        n: c.head_commit
        for n, c in claims.items()
        if n in numbers and c.status == "done" and c.head_commit
    }
    all_done = all(n in done for n in numbers)
    override = _worktree_override(ctx.repo, worktree) if worktree is not None else None
    if stage is None:
        target = _whole_task(ctx, state, numbers, claims, done, all_done, override)
        return _with_reports(target, reports)
    if stage not in numbers:
        raise BadInput(
            f"--stage {stage}: the Stage Map of {key} has stages {', '.join(map(str, numbers))}"
        )
    target = _single_stage(ctx, state, stage, claims.get(stage), done, all_done, override)
    return _with_reports(target, reports)


def _with_reports(target: Target, reports: dict[int, StoredReport | None]) -> Target:
    stages = tuple(s.replace(report=reports.get(s.number)) for s in target.stages)
    return target.replace(stages=stages)


def _whole_task(
    ctx: Context,
    state: TaskState,
    numbers: list[int],
    claims: dict[int, Claim],
    done: dict[int, str],
    all_done: bool,
    override: Path | None,
) -> Target:
    from .layout import task_worktree_path

    key = state.key
    worktree = override or task_worktree_path(ctx, key)
    head = worktree_head(worktree, ctx.repo)
    base = state.task.implementation_base_commit
    lines = []
    hint = None
    if head is None:
        hint = okstra("worktree", "task", key)
        lines.append(rules.task_worktree_missing(str(worktree), hint))
    # A done commit never fetched here can be neither merged nor asked about: say how to get it.
    absent = {n: sha for n, sha in done.items() if not ctx.repo.has_object(sha)}
    if absent:
        from .sync.transport import remote_or_placeholder  # only to name the fetch: sync is heavy

        hint = okstra("sync", remote_or_placeholder(ctx.repo))
        lines += [rules.not_here(n, sha, hint) for n, sha in sorted(absent.items())]
    unmerged: set[str] = set()
    dirty = False
    if head is not None:
        here = [sha for n, sha in done.items() if n not in absent]
        unmerged = ctx.repo.not_contained(head, here, base)
        dirty = bool(dirty_paths(worktree, ctx.repo))
    lines += rules.whole_task_refusals(numbers, done, unmerged, dirty)
    if lines and override is None and not dirty and (head is None or absent or unmerged):
        # The task branch is one published ref: integrate makes the task worktree if absent,
        # fetches what is missing and merges every done stage (docs/workflow.md).
        from ..logic.nextstep import line, okstra_argv
        from .remoteview import shared_remote

        remote = shared_remote(ctx.repo, key)
        hint = line(
            okstra_argv("integrate", key, *(("--remote", remote) if remote else ())),
            ctx.clone_dir,
        )
    if lines:
        if unmerged and hint is None:
            from .branches import merge_command, merge_ref

            merge = [
                merge_ref(ctx.repo, key, n, sha)
                for n, sha in sorted(done.items())
                if sha in unmerged
            ]
            hint = merge_command(worktree, [ref for ref in merge if ref])
        raise GateRefused(lines, hint)
    assert head is not None
    if base is None:
        raise Refused(
            f"task {key} records no implementation base although every stage is done; the "
            "task record is incomplete — check it with: git okstra task show "
            f"'{key}' --json"
        )
    return Target(
        task_key=str(key),
        scope=rules.WHOLE_TASK,
        worktree=str(worktree),
        base=base,
        head=head,
        head_tree=ctx.repo.tree_id(head),
        stages=tuple(_target_stage(ctx, n, claims.get(n)) for n in numbers),
        all_stages_done=all_done,
    )


def _single_stage(
    ctx: Context,
    state: TaskState,
    stage: int,
    claim: Claim | None,
    done: dict[int, str],
    all_done: bool,
    override: Path | None,
) -> Target:
    key = str(state.key)
    done_head = done.get(stage)
    if claim is None or done_head is None:
        raise GateRefused(rules.single_stage_refusals(stage, key, None, "", None, False))
    worktree = override or Path(claim.worktree_path)
    head = worktree_head(worktree, ctx.repo)
    dirty = head is not None and bool(dirty_paths(worktree, ctx.repo))
    lines = rules.single_stage_refusals(stage, key, done_head, str(worktree), head, dirty)
    if lines:
        raise GateRefused(lines)
    assert head is not None
    return Target(
        task_key=key,
        scope=rules.SINGLE_STAGE,
        worktree=str(worktree),
        base=claim.base_commit,
        head=head,
        head_tree=ctx.repo.tree_id(head),
        stages=(_target_stage(ctx, stage, claim),),
        all_stages_done=all_done,
    )


def _target_stage(ctx: Context, number: int, claim: Claim | None) -> TargetStage:
    if claim is None:
        return TargetStage(number, "unclaimed", None, None, None)
    here = None
    if claim.report_path:
        path = Path(ctx.clone_dir) / claim.report_path  # an absolute path stays itself
        here = str(path) if path.is_file() else None
    return TargetStage(
        number, claim.status, claim.head_commit, claim.report_path, claim.branch,
        report_here=here,
    )  # fmt: skip


def _worktree_override(repo: GitRepo, path: str) -> Path:
    """``--worktree PATH``: the root of a work tree of this same repository."""
    try:
        other = GitRepo.open(path)
    except BadInput:
        raise BadInput(f"--worktree {path}: not inside a git work tree") from None
    if other.workdir is None:
        raise BadInput(f"--worktree {path}: a bare repository has no work tree to verify")
    if other.common_dir.resolve() != repo.common_dir.resolve():
        raise BadInput(
            f"--worktree {path}: a work tree of {other.common_dir}, not of this repository "
            f"({repo.common_dir})"
        )
    return other.workdir.resolve()


def diff_stat(ctx: Context, target: Target) -> list[DiffStatEntry]:
    return ctx.repo.diff_stat(target.base, target.head)


# ---------------------------------------------------------------------------------------------
# Recording a verdict


class Recorded(Value):
    """The outcome of ``verify record``."""

    verdict: Verdict
    """The record in the notes (possibly one recorded before, see ``added``)."""
    added: bool
    """False when an equivalent verdict was already there (a re-run after a crash)."""
    next_phase: str
    """The task's next recommended phase."""
    task_head: str
    """The task event commit that moved the workflow."""


def record_verdict(
    ctx: Context,
    key: TaskKey,
    verdict: str | None,
    report: str,
    stage: int | None,
    worktree: str | None = None,
    expect_head: str | None = None,
    sign: bool = False,
) -> Recorded:
    """Re-run the gate now, check the report against the verdict, and record it (docs/workflow.md).
    ``verdict`` None: the report's own (``finalVerdict.verdictToken``), so the command the next
    step prints runs as printed, whatever the verifier decided."""
    import hashlib

    from .reportfiles import read_data

    raw, data = read_data(report)
    if verdict is None:
        final = data.get("finalVerdict")
        verdict = final.get("verdictToken") if isinstance(final, dict) else None
        if verdict not in rules.VERDICTS:
            raise BadInput(
                f"report {report}: finalVerdict.verdictToken is {verdict!r}, not a verdict "
                f"({', '.join(rules.VERDICTS)}); decide the verdict in the report, or give "
                "--verdict"
            )
    if verdict not in rules.VERDICTS:
        raise BadInput(f"--verdict {verdict!r}: one of {', '.join(rules.VERDICTS)}")
    signing_key = _signing_key(ctx.repo) if sign else None
    target = resolve_target(ctx, key, stage, worktree)
    if expect_head is not None:
        expected = ctx.repo.resolve_commit(expect_head)
        if expected != target.head:
            raise Refused(
                f"final-verification: HEAD of {target.worktree} is now {target.head}, not the "
                f"verified {expected} (--expect-head) — verify the new HEAD, then record"
            )
    from ..logic.reports.consistency import record_problems
    from .reports import check_report

    stages = [s.number for s in target.stages]
    problems = check_report(ctx, key, data) + record_problems(data, verdict, target.scope, stages)
    if problems:
        raise BadInput(
            f"report {report} does not support --verdict {verdict}:\n"
            + "\n".join(f"  - {p.line()}" for p in problems)
        )
    route = rules.routing(target.scope, verdict)
    record = Verdict(
        task_key=str(key),
        scope=target.scope,
        stages=[s.number for s in target.stages],
        base=target.base,
        head=target.head,
        head_tree=target.head_tree,
        verdict=verdict,
        blocker_count=len(data["finalVerification"]["acceptanceBlockers"]),
        report_digest="sha256:" + hashlib.sha256(raw).hexdigest(),
        routing=route,
        recorded_at=now_iso(),
        recorded_by=ctx.repo.identity(),
    )
    earlier = _equivalent(ctx.repo, record, sign)
    if earlier is not None:
        record = earlier  # a re-run (e.g. after a crash) adds no second line
    elif signing_key is not None:
        from ..gate import signing

        record = record.replace(signature=signing.sign(record.signed_payload(), signing_key))
    nxt = rules.next_phase(route, target.all_stages_done)
    added: list[bool] = []

    def note() -> RefUpdate | None:
        update = verdict_notes_update(ctx.repo, record)
        added[:] = [update is not None]
        return update

    # The note and the task's move land in one transaction: never a verdict without its routing.
    state = write_event(
        ctx.repo, key, _workflow_change(nxt), _event(record, nxt), also=note, also_ref=VERDICTS_REF
    )
    return Recorded(record, added[0], nxt, state.head)


def _signing_key(repo: GitRepo) -> str:
    configured = repo.config_get("user.signingKey")
    if not configured:
        raise BadInput(
            "--sign needs an ssh signing key in git config: git config user.signingKey "
            "~/.ssh/id_ed25519 (and git config gpg.format ssh)"
        )
    return configured


def _equivalent(repo: GitRepo, record: Verdict, signed: bool) -> Verdict | None:
    """A verdict already on the head by the same person for the same target, verdict and
    report (and signed if a signature is asked for): recording again adds no second line."""
    same = (
        "task_key",
        "scope",
        "stages",
        "base",
        "head_tree",
        "verdict",
        "report_digest",
        "recorded_by",
    )
    found, _problems = read_verdicts(repo, record.head)
    for old in found:
        if all(getattr(old, f) == getattr(record, f) for f in same) and (
            old.signature is not None or not signed
        ):
            return old
    return None


def _workflow_change(nxt: str):
    def change(task: Task | None, head: str | None) -> tuple[Task, dict[str, bytes | None]]:
        assert task is not None
        flow = task.workflow
        flow.current_phase = FINAL_VERIFICATION
        flow.current_phase_state = "completed"
        flow.phase_states[FINAL_VERIFICATION] = "completed"
        flow.last_completed_phase = FINAL_VERIFICATION
        flow.next_recommended_phase = nxt
        flow.routing_status = "ready"
        task.current_status = "active"
        return task, {}

    return change


def _event(record: Verdict, nxt: str) -> str:
    scope = record.scope
    if scope == rules.SINGLE_STAGE:
        scope += f" stage {record.stages[0]}"
    return f"final-verification completed: {record.verdict} ({scope}) on {record.head[:12]} → {nxt}"


# ---------------------------------------------------------------------------------------------
# Showing verdicts


class ShownVerdict(Value):
    """A verdict found for a commit, with how it was found and its signature status."""

    verdict: Verdict
    """The record."""
    same_commit: bool
    """False: recorded on another commit with the identical tree."""
    signature: str
    """``unsigned``, ``good`` (checked against allowed signers), ``valid`` (intact, signer
    unchecked: no allowed signers file configured) or ``bad``."""
    principal: str | None
    """Who signed, when checked against allowed signers."""


class Shown(Value):
    """The verdicts ``verify show`` found for a commit."""

    commit: str
    """The commit asked about."""
    tree: str
    """Its tree."""
    verdicts: list[ShownVerdict]
    """Newest first."""
    problems: list[str]
    """Note lines that are not verdict records."""
    allowed_signers: str | None
    """The allowed signers file signatures were checked against."""


def show_verdicts(ctx: Context, rev: str) -> Shown:
    commit = ctx.repo.resolve_commit(rev)
    tree = ctx.repo.tree_id(commit)
    view = NotesView(ctx.repo, VERDICTS_REF)  # local and fetched copies: the hook's view
    own, problems = read_verdicts(ctx.repo, commit, view)
    by_tree, tree_problems = read_verdicts(ctx.repo, tree, view)
    found = [(v, True) for v in own]
    found += [(v, v.head == commit) for v in by_tree if v not in own]
    found.sort(key=lambda item: (item[0].recorded_at, item[0].head), reverse=True)
    signers = _allowed_signers(ctx.repo)
    shown = [ShownVerdict(v, same, *_signature_status(v, signers)) for v, same in found]
    return Shown(commit, tree, shown, problems + tree_problems, signers)


def _allowed_signers(repo: GitRepo) -> str | None:
    """``okstra.gate.allowedSigners``, else git's ``gpg.ssh.allowedSignersFile``, resolved as
    the gate resolves it."""
    from ..gate.config import signers_path

    for name in ("okstra.gate.allowedSigners", "gpg.ssh.allowedSignersFile"):
        value = repo.config_get(name)
        if value:
            return str(signers_path(lambda: repo.common_dir, value, name))
    return None


def _signature_status(verdict: Verdict, signers: str | None) -> tuple[str, str | None]:
    if verdict.signature is None:
        return "unsigned", None
    from ..gate import signing

    result = signing.check(verdict.signed_payload(), verdict.signature, signers)
    if not result.good:
        return "bad", None
    return ("good", result.principal) if signers is not None else ("valid", None)
