"""``git okstra work``: the worker loop an agent runs under (docs/agents.md).

Claim the next batch, run the agent's command once per claimed stage in that stage's worktree,
renew the lease while it runs, then mark the stage done (its work committed, the tree clean)
or release it keeping every commit; then the next batch, until no stage is left for this loop.

Why it is built this way:

- A signal (Ctrl-C, SIGTERM) is acted on only while the loop waits — on the command or
  between polls. Arriving during a claim, a done or a release, it is held until that write is
  over: the loop then knows exactly which claims it holds, and releases them all.
- The lease is renewed from a thread at a third of its length, with a repository of its own;
  it stops before the done or the release, so the two never race. A renewal refused because
  the stage changed hands (the lease ran out and another run took it over) stops the command:
  its work is no longer this loop's to record.
- A stage whose command failed is not claimed again by this loop (it would fail the same way):
  the loop goes on with the others and, when only such stages are left, says so and exits 1.
- Each step is told to ``say`` as a typed value (:data:`Progress`); ``views/work.py`` words
  it and the command prints it (a service never imports a view).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import Any

from ..core.errors import BadInput, OkstraError, Refused
from ..core.keys import TaskKey
from ..core.userfiles import write_atomic
from ..core.values import Record, Value, field
from ..git.process import no_progress, no_prompts
from ..git.worktrees import dirty_paths, worktree_head
from ..logic.workspace import run_paths
from ..records.claim import load_claims
from . import claims
from .claims.common import RunLeftRunning, Unpublished
from .claims.leases import claim_lease, renew_via_remote
from .claims.remote import claim_via_remote, done_via_remote, release_via_remote
from .claimview import readiness
from .context import Context, open_context
from .runs import finish_run

POLL_FIRST = 1.0
"""Seconds between looks for a ready stage at first; doubled up to :data:`POLL_MOST`."""
POLL_MOST = 30.0
STOP_GRACE = 10.0
"""Seconds the command has to exit after SIGTERM before it is killed."""
STOPPING = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""The signals that stop the loop, and its exit status for each (128 + the signal)."""


class _Stop(Exception):
    """A stop signal arrived while the loop could act on it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class WorkReport(Record):
    """What one ``git okstra work`` did."""

    key: TaskKey
    done: list[int] = field(default_factory=list)
    """Stages this loop marked done, in order."""
    released: dict[int, str] = field(default_factory=dict)
    """Stages this loop released, with why."""
    lost: dict[int, str] = field(default_factory=dict)
    """Stages whose claim another run took while this loop worked on them."""
    finished: bool = False
    """Every stage of the task is done (with ``stage``: that stage)."""
    stage: int | None = None
    """The one stage this loop works (``work --stage N``); None: every stage."""
    stopped: str | None = None
    """The signal that stopped the loop (``SIGTERM``), if one did."""
    conflict: str | None = None
    """Why integrating the done stages stopped (a merge conflict left in the task worktree)."""
    code: int = 0
    """The exit status."""


# -- what the loop tells as it goes (views/work.py's progress words each) --------------------


class Waiting(Value):
    """Nothing to claim now: the stages that wait, and what for (told when that changes)."""

    blocked: tuple[tuple[int, str], ...]


class FetchRetry(Value):
    """The remote could not be fetched; the loop looks again."""

    error: str


class Finished(Value):
    """Every stage of the task (``stage``: that one) is done."""

    key: TaskKey
    stage: int | None


class Stuck(Value):
    """Only stages whose command failed are left: the loop ends, exit 1."""

    failed: tuple[int, ...]


class NotClaimed(Value):
    """A claim was refused (another run took it first, or it waits on something)."""

    why: str


class Claimed(Value):
    """A stage claimed for this loop."""

    stage: int
    run_id: str
    worktree: str
    lease_until: str | None
    taken_over_from: str | None


class NotResumed(Value):
    """A run of this clone's could not be resumed (taken over meanwhile)."""

    run_id: str
    why: str


class Resumed(Value):
    """A stage this clone held, resumed by the loop."""

    stage: int
    run_id: str
    worktree: str


class RenewRetry(Value):
    """A lease renewal failed for a reason other than the stage changing hands."""

    stage: int
    error: str


class Renewed(Value):
    """A stage's lease renewed while its command runs."""

    stage: int
    until: str


class Running(Value):
    """The agent's command started in a stage's worktree."""

    argv: tuple[str, ...]
    worktree: str
    stage: int


class Lost(Value):
    """A stage taken over by another run while its command ran."""

    stage: int
    why: str


class NotDone(Value):
    """A stage whose done was refused."""

    stage: int
    error: str


class Done(Value):
    """A stage marked done."""

    stage: int
    head: str
    report: str | None
    """The report the command wrote, or None."""
    published: str | None
    """The remote it was published to, or None."""


class Note(Value):
    """What a done said of its run (left running) or of its publication (not yet)."""

    note: RunLeftRunning | Unpublished


class IntegrateConflict(Value):
    """Integrating the done stages stopped on a merge conflict: the loop ends."""

    error: str


class IntegrateLater(Value):
    """Integrating failed now (a lost race, an unreachable remote): a later claim retries."""

    error: str


class Integrated(Value):
    """The done stages merged into the task branch."""

    stages: tuple[int, ...]
    task_branch: str
    head: str
    published: str | None
    """The remote it was published to, or None."""


class NotReleased(Value):
    """A stage's release failed."""

    stage: int
    error: str


class Released(Value):
    """A stage given back, its commits kept on its branch."""

    stage: int
    why: str
    branch: str


Progress = (
    Waiting | FetchRetry | Finished | Stuck | NotClaimed | Claimed | NotResumed | Resumed
    | RenewRetry | Renewed | Running | Lost | NotDone | Done | Note | IntegrateConflict
    | IntegrateLater | Integrated | NotReleased | Released
)  # fmt: skip
"""What the loop tells ``say``, one step at a time."""


class Worker:
    """One loop over one task of one clone (see the module's docstring)."""

    def __init__(
        self,
        ctx: Context,
        key: TaskKey,
        argv: list[str],
        remote: str | None,
        lease: timedelta | str | None,
        once: bool,
        say: Callable[[Progress], None],
        directive: Callable[[claims.ClaimResult], str],
        output: int,
        stage: int | None = None,
        race_lost: Callable[[str], None] | None = None,
    ) -> None:
        if not argv:
            raise BadInput("work: give the command to run after --, e.g. -- ./agent.sh")
        if shutil.which(argv[0]) is None:
            raise BadInput(f"work: command {argv[0]!r} not found (not on PATH, or not executable)")
        if ctx.workdir is None:
            raise BadInput("work needs a clone with a work tree (this one is bare)")
        self.root = ctx.workdir
        """The clone's work tree: each step opens the repository afresh from it (``ctx``)."""
        self.key = key
        self.argv = argv
        self.remote = remote
        self.lease = claim_lease(ctx, lease)
        self.once = once
        self.say = say
        self.directive = directive
        """Writes a claim's run directive (``views/stage.py``: a service never imports a view,
        so the command hands it in)."""
        self.race_lost = race_lost
        """Told the remote when another clone claimed first (``claim_via_remote``)."""
        self.stage = stage
        """``work --stage N``: the one stage this loop claims and works, then it ends."""
        self.output = output
        """The file descriptor the command's output goes to (the command gives its stderr)."""
        self.report = WorkReport(key, stage=stage)
        self.failed: set[int] = set()
        self.held: dict[int, str] = {}
        """The started claims this loop holds: stage → run id."""
        self.stop: int | None = None
        """A stop signal that arrived while the loop was writing (acted on when it is done)."""
        self.interruptible = False
        self.child: subprocess.Popen[bytes] | None = None
        self.last_note: Progress | None = None

    @property
    def ctx(self) -> Context:
        """The repository, opened afresh for each step as each command opens its own: a loop
        outlives many fetches and pushes made by git itself, and an opened repository keeps
        the view of refs and packs it started with."""
        return open_context(self.root)

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> WorkReport:
        previous = {s: signal.signal(s, self._on_signal) for s in STOPPING}
        try:
            self._loop()
        except _Stop as stop:
            self.report.stopped = stop.args[0]
            self.report.code = STOPPING[signal.Signals(stop.signum)]
            self._release_held(f"the work loop was stopped ({stop.args[0]})")
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return self.report

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stop is not None:
            return  # already stopping: the first signal decides
        self.stop = signum
        if self.interruptible:
            raise _Stop(signum)

    def _checkpoint(self) -> None:
        """Act on a stop signal that arrived during a write."""
        if self.stop is not None:
            raise _Stop(self.stop)

    def _loop(self) -> None:
        pause = POLL_FIRST
        last_wait: tuple[tuple[int, str], ...] = ()
        while True:
            self._checkpoint()
            batch = self._claim_next()
            self._checkpoint()
            if batch is None:
                if self.report.finished or self.report.code:
                    return
                if self.once:
                    raise Refused(f"work --once: no stage of {self.key} is ready to claim now")
                why = self._waiting_for()
                if why != last_wait:  # a change is worth a line, and a quick look again
                    if why:
                        self.say(Waiting(why))
                    last_wait, pause = why, POLL_FIRST
                self._sleep(pause)
                pause = min(pause * 2, POLL_MOST, self._poll_cap())
                continue
            pause, last_wait = POLL_FIRST, ()
            for place in batch.stages:
                if self.stage is not None and place.stage != self.stage:
                    continue  # a resumed batch's other stage: left to a loop that works it
                self._work_on(batch, place)
                self._checkpoint()
            if self.report.conflict is not None:
                self._release_held("integrating stopped on a merge conflict")
                return
            if self.once:
                self._finish_if_all_done()
                return

    def _poll_cap(self) -> float:
        """Poll at least twice a lease: a stage whose holder died is taken over soon after."""
        if self.lease is None:
            return POLL_MOST
        return max(POLL_FIRST, self.lease.total_seconds() / 2)

    def _sleep(self, seconds: float) -> None:
        self.interruptible = True
        try:
            self._checkpoint()
            time.sleep(seconds)
        finally:
            self.interruptible = False

    # -- claiming ---------------------------------------------------------------------------

    def _claim_next(self) -> claims.ClaimResult | None:
        """Claim the next batch (a single stage when the batch would hold one this loop
        failed); None when there is none now (``report`` says when there never will be)."""
        if self.remote is not None:
            from .sync.engine import pull
            from .sync.transport import FetchFailed

            try:
                pull(self.ctx, self.remote)
            except FetchFailed as exc:  # the remote unreachable a while: wait and look again
                self._once_said(FetchRetry(str(exc)))
                return None
        own = self._resume_own()
        if own is not None:
            return own
        found = readiness(self.ctx, self.key, take_over_expired=True)
        if self.stage is not None and self.stage not in found.stages:
            have = ", ".join(map(str, sorted(found.stages))) or "none"
            raise BadInput(f"--stage {self.stage}: the plan of {self.key} has stages {have}")
        states = load_claims(self.ctx.repo, self.key)
        left = [n for n in found.stages if n not in states or states[n].claim.status != "done"]
        if self.stage is not None:
            left = [n for n in left if n == self.stage]
        if not left:
            self.report.finished = True
            self.say(Finished(self.key, self.stage))
            return None
        ready = [n for n in found.selection.ready if n not in self.failed]
        if self.stage is not None:
            ready = [n for n in ready if n == self.stage]
        if not ready:
            if self.failed and not self._can_wait_for(left, found.stages):
                self.say(Stuck(tuple(sorted(self.failed))))
                self.report.code = 1
            return None
        only = None if not set(found.selection.batch) & self.failed else ready[0]
        if self.stage is not None:
            only = self.stage
        try:
            if self.remote is not None:
                result = claim_via_remote(
                    self.ctx, self.remote, self.key, only, self.lease, take_over_expired=True,
                    race_lost=self.race_lost,
                )  # fmt: skip
            else:
                result = claims.claim(self.ctx, self.key, only, self.lease, take_over_expired=True)
        except Refused as exc:  # another run took it first, or it needs what waiting brings
            self._once_said(NotClaimed(str(exc).splitlines()[0]))
            return None
        for place in result.stages:
            self.held[place.stage] = result.run_id
            self.say(
                Claimed(
                    place.stage, result.run_id, place.worktree_path, place.lease_expires_at,
                    place.take_over_of,
                )
            )  # fmt: skip
        self._write_directive(result)
        return result

    def _resume_own(self) -> claims.ClaimResult | None:
        """A run of this clone's holding started claims of the task (a ``stage claim`` made
        before the loop, a loop killed mid-stage): it is worked first, its worktrees made again
        where missing and its lease renewed at once. No other clone may work it, so waiting for
        it would wait on this clone itself until its lease ran out."""
        from .ownership import is_ours

        ctx = self.ctx
        runs = sorted(
            {
                s.claim.run_id
                for n, s in load_claims(ctx.repo, self.key).items()
                if s.claim.status == "started"
                and n not in self.failed
                and (self.stage is None or n == self.stage)
                and s.claim.worktree_path
                and is_ours(ctx, None, s.claim)
            }
        )
        for run in runs:
            try:
                result = claims.resume(ctx, self.key, run)
                if self.lease is not None:
                    for place in result.stages:
                        self._renew_now(place.stage)
            except Refused as exc:  # taken over meanwhile: no longer this clone's
                self._once_said(NotResumed(run, str(exc).splitlines()[0]))
                continue
            for place in result.stages:
                self.held[place.stage] = result.run_id
                self.say(Resumed(place.stage, result.run_id, place.worktree_path))
            self._write_directive(result)
            return result
        return None

    def _renew_now(self, stage: int) -> None:
        """Renew a resumed stage's lease before its work starts (it may have run low, or
        out); refused when another run took the stage over."""
        try:
            renew_via_remote(self.ctx, self.remote, self.key, stage)
        except Refused:
            raise
        except OkstraError as exc:  # the remote unreachable: the renewer tries again
            self.say(RenewRetry(stage, str(exc)))

    def _once_said(self, step: Progress) -> None:
        """``say`` a step unless it is the one said last by this method (a poll repeats it)."""
        if step != self.last_note:
            self.last_note = step
            self.say(step)

    def _can_wait_for(self, left: list[int], stages: dict[int, Any]) -> bool:
        """Whether a stage not done may still become ready for this loop: one that is not a
        failed stage and does not wait (at any depth) on one."""

        def blocked(n: int, seen: frozenset[int] = frozenset()) -> bool:
            if n in self.failed:
                return True
            deps = [d for d in stages[n].depends_on if d in left and d not in seen]
            return any(blocked(d, seen | {n}) for d in deps)

        return any(not blocked(n) for n in left)

    def _waiting_for(self) -> tuple[tuple[int, str], ...]:
        """The stages not done that wait, and what for (this loop's one stage, with one)."""
        sel = readiness(self.ctx, self.key, take_over_expired=True).selection
        return tuple((n, why) for n, why in sorted(sel.blocked.items()) if
                     not why.startswith("done")
                     and self.stage in (None, n))  # fmt: skip

    def _paths(self, result: claims.ClaimResult) -> dict[str, str]:
        seq = result.run_id.removeprefix(f"{claims.RUN_TYPE}-")
        return run_paths(self.key, claims.RUN_TYPE, seq)

    def _write_directive(self, result: claims.ClaimResult) -> None:
        path = self._file(self._paths(result)["prompt"])
        write_atomic(path, self.directive(result).encode("utf-8"), "the run directive")

    def _file(self, relative: str) -> Path:
        return self.root / relative

    # -- one stage --------------------------------------------------------------------------

    def _work_on(self, batch: claims.ClaimResult, place: claims.Placement) -> None:
        stage, worktree = place.stage, place.worktree_path
        paths = self._paths(batch)
        report = self._file(paths["report"].replace("final-report-", f"stage-{stage}-report-"))
        report.parent.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "OKSTRA_TASK": str(self.key),
            "OKSTRA_RUN": batch.run_id,
            "OKSTRA_STAGE": str(stage),
            "OKSTRA_STAGES": batch.csv,
            "OKSTRA_DIRECTIVE": str(self._file(paths["prompt"])),
            "OKSTRA_REPORT": str(report),
            "OKSTRA_BASE": place.base_commit,
            "OKSTRA_WORKTREE": worktree,
            "OKSTRA_TASK_WORKTREE": batch.task_worktree,
            "OKSTRA_REPOSITORY": str(self.root),
            "OKSTRA_REMOTE": self.remote or "",
        }
        self.say(Running(tuple(self.argv), worktree, stage))
        code, lost = self._run_command(env, worktree, stage)
        if lost is not None:
            self.report.lost[stage] = lost
            self.held.pop(stage, None)
            self.say(Lost(stage, lost))
            return
        head = worktree_head(worktree, self.ctx.repo)
        dirty = dirty_paths(worktree) if head is not None else []
        if code != 0:
            self._give_back(stage, f"the command exited {code}")
        elif dirty:
            self._give_back(stage, f"the command left uncommitted changes: {', '.join(dirty[:5])}")
        elif head is None or head == place.started_head_commit:
            self._give_back(stage, "the command exited 0 but committed nothing")
        else:
            self._mark_done(stage, report if report.is_file() else None)

    def _run_command(self, env: dict[str, str], cwd: str, stage: int) -> tuple[int, str | None]:
        """Run the command in ``cwd`` with the lease renewed meanwhile; its exit status, and
        why the stage is lost when a renewal found it taken over."""
        renewer = _Renewer(self, stage)
        # Its own session: a stop reaches every process it started; its output goes to
        # ``output`` (stderr, beside the loop's progress: stdout holds the loop's --json).
        self.child = subprocess.Popen(
            self.argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=self.output,
            start_new_session=True,
        )  # fmt: skip
        renewer.start()
        try:
            self.interruptible = True
            self._checkpoint()
            code = self.child.wait()
        except _Stop:
            self.interruptible = False
            self._end_child()
            raise
        finally:
            self.interruptible = False
            renewer.finish()
            self.child = None
        return code, renewer.lost

    def _end_child(self) -> None:
        """SIGTERM the command's process group; SIGKILL it if it has not exited in time."""
        child = self.child
        if child is None or child.poll() is not None:
            return
        try:
            os.killpg(child.pid, signal.SIGTERM)
            child.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        except ProcessLookupError:
            pass

    def _mark_done(self, stage: int, report: Path | None) -> None:
        try:
            result = done_via_remote(
                self.ctx, self.remote, self.key, stage, str(report) if report else None
            )
        except Refused as exc:
            self.held.pop(stage, None)
            self.report.lost[stage] = str(exc).splitlines()[0]
            self.say(NotDone(stage, str(exc)))
            return
        self.held.pop(stage, None)
        self.report.done.append(stage)
        head = result.claim.head_commit or ""
        self.say(Done(stage, head, str(report) if report else None, result.published or None))
        for note in (result.run_note, result.publish_note):
            if note:
                self.say(Note(note))
        self._integrate()

    def _integrate(self) -> None:
        """Merge the done stages into the published task branch (``git okstra integrate``).
        A merge that conflicts stops the loop: the task worktree holds it for a person, with
        the commands that finish or abort it."""
        from .integrate import MergeConflict, integrate

        try:
            done = integrate(self.ctx, self.key, self.remote)
        except MergeConflict as exc:
            self.say(IntegrateConflict(str(exc)))
            self.report.code = 1
            self.report.conflict = str(exc)
            return
        except OkstraError as exc:  # lost races, an unreachable remote: a later claim retries
            self.say(IntegrateLater(str(exc)))
            return
        merged = tuple(m.stage for m in done.merged)
        published = done.remote if done.published else None
        self.say(Integrated(merged, done.task_branch, done.head, published))

    def _give_back(self, stage: int, why: str) -> None:
        self.failed.add(stage)
        self.report.released[stage] = why
        self._release(stage, why)

    def _release(self, stage: int, why: str) -> None:
        run = self.held.pop(stage)
        reason = f"git okstra work: {why}"
        try:
            result = release_via_remote(self.ctx, self.remote, self.key, stage, reason, run)
        except OkstraError as exc:
            self.say(NotReleased(stage, str(exc)))
            return
        self.say(Released(stage, why, result.claim.branch))
        if result.run_note:
            self._finish_run(run)

    def _release_held(self, why: str) -> None:
        for stage in sorted(self.held):
            self.report.released[stage] = why
            self._release(stage, why)

    def _finish_run(self, run: str) -> None:
        """A run all of whose stages were given back ends ``error``; with some done it stays
        for ``run finish --status completed`` with its report, which only the agent has."""
        seq = run.removeprefix(f"{claims.RUN_TYPE}-")
        states = load_claims(self.ctx.repo, self.key)
        if any(s.claim.run_id == run and s.claim.status == "done" for s in states.values()):
            return
        finish_run(self.ctx, self.key, claims.RUN_TYPE, seq, "error", None)
        if self.remote is not None:
            from .sync.engine import sync

            sync(self.ctx, self.remote)

    def _finish_if_all_done(self) -> None:
        states = load_claims(self.ctx.repo, self.key)
        stages = readiness(self.ctx, self.key).stages
        self.report.finished = all(n in states and states[n].claim.status == "done" for n in stages)
        if self.report.released or self.report.lost:
            self.report.code = 1


class _Renewer(threading.Thread):
    """Renews the stage's lease at a third of its length while the command runs."""

    def __init__(self, worker: Worker, stage: int) -> None:
        super().__init__(name=f"okstra-renew-stage-{stage}", daemon=True)
        self.worker = worker
        self.stage = stage
        self.stopping = threading.Event()
        self.lost: str | None = None

    def start(self) -> None:
        if self.worker.lease is not None:
            super().start()

    def finish(self) -> None:
        self.stopping.set()
        if self.is_alive():
            self.join()

    def run(self) -> None:
        worker = self.worker
        assert worker.lease is not None
        every = max(1.0, worker.lease.total_seconds() / 3)
        while not self.stopping.wait(every):
            try:  # a repository of this thread's own, opened afresh each time
                # No prompt: the agent's command has the terminal (docs/concurrency-and-sync.md).
                with no_prompts():
                    done = renew_via_remote(worker.ctx, worker.remote, worker.key, self.stage)
            except Refused as exc:
                self.lost = str(exc).splitlines()[0]
                if worker.child is not None:  # its work is not this loop's any more
                    worker._end_child()
                return
            except OkstraError as exc:  # the remote unreachable a while: try again next time
                worker.say(RenewRetry(self.stage, str(exc)))
                continue
            for r in done.renewed:
                worker.say(Renewed(r.stage, r.lease_expires_at))


def work(
    ctx: Context,
    key: TaskKey,
    argv: list[str],
    remote: str | None = None,
    lease: timedelta | str | None = None,
    once: bool = False,
    *,
    say: Callable[[Progress], None],
    directive: Callable[[claims.ClaimResult], str],
    output: int,
    stage: int | None = None,
    race_lost: Callable[[str], None] | None = None,
) -> WorkReport:
    """Run the loop (see the module's docstring); progress goes to ``say``, one step at a
    time (:data:`Progress`); each claim's run directive, as ``directive`` words it, into the
    run's prompt file; the command's output to the file descriptor ``output``; a claim through
    ``remote`` that another clone beat tells ``race_lost``.
    ``stage``: work that stage alone — wait until it is ready, claim it, work it, then end."""
    if remote is not None:
        from .sync.transport import check_remote

        check_remote(ctx.repo, remote)
    with no_progress():  # one line a step: no fetch, push or checkout draws git's meter
        return Worker(
            ctx, key, argv, remote, lease, once, say, directive, output, stage, race_lost
        ).run()
