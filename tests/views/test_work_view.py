"""``git okstra work``'s progress lines: the loop (services/worker.py) tells typed steps, and
views/work.py words each as the loop did when it built its own lines (the loop itself runs in
tests/cli/test_work.py)."""

from __future__ import annotations

import pytest

from okstra_git.core.keys import parse_task_key
from okstra_git.services import worker as w
from okstra_git.services.claims.common import RunLeftRunning, Unpublished
from okstra_git.views.work import progress

KEY = parse_task_key("p:g:i")
HEAD = "0123456789abcdef0123456789abcdef01234567"
FINISH = "git okstra run finish p:g:i --type implementation --seq 001"

LINES = [
    (w.Waiting(((1, "held by run implementation-001"), (3, "waiting for stage(s) 1"))),
     "waiting: stage 1: held by run implementation-001; stage 3: waiting for stage(s) 1"),
    (w.FetchRetry("exit 128"), "could not fetch (will retry): exit 128"),
    (w.Finished(KEY, None), "every stage of p:g:i is done"),
    (w.Finished(KEY, 3), "stage 3 of p:g:i is done"),
    (w.Stuck((2, 4)), "nothing left for this loop: the command failed on stage(s) 2, 4"),
    (w.NotClaimed("stage 1 is held"), "not claimed yet: stage 1 is held"),
    (w.Claimed(1, "implementation-001", "/wt/1", None, None),
     "claimed stage 1 (implementation-001) in /wt/1"),
    (w.Claimed(1, "implementation-002", "/wt/1", "2026-12-02T20:00:00Z", "implementation-001"),
     "claimed stage 1 (implementation-002, taken over from implementation-001) in /wt/1; "
     "lease until 2026-12-02T20:00:00Z"),
    (w.NotResumed("implementation-001", "taken over"),
     "run implementation-001 not resumed: taken over"),
    (w.Resumed(2, "implementation-001", "/wt/2"),
     "resumed stage 2 (implementation-001, this clone's claim) in /wt/2"),
    (w.RenewRetry(2, "unreachable"), "could not renew stage 2's lease (will retry): unreachable"),
    (w.Renewed(2, "2026-12-02T20:00:00Z"), "renewed stage 2's lease until 2026-12-02T20:00:00Z"),
    (w.Running(("./agent.sh", "a b"), "/wt/2", 2), "running ./agent.sh 'a b' in /wt/2 (stage 2)"),
    (w.Lost(2, "taken over by implementation-003"),
     "stage 2 is no longer this loop's: taken over by implementation-003"),
    (w.NotDone(2, "dirty\nsecond line"), "stage 2 could not be marked done: dirty\nsecond line"),
    (w.Done(2, HEAD, "/r/stage-2.md", None), "stage 2 done at 0123456789ab with /r/stage-2.md"),
    (w.Done(2, HEAD, None, "origin"),
     "stage 2 done at 0123456789ab (the command wrote no report); published to origin"),
    (w.Note(RunLeftRunning("implementation-001", FINISH, "no-report")),
     "every stage of implementation-001 is done, but the run is still running: finishing it "
     "needs its report, and this `stage done` was given no --report. Finish it with: "
     f"{FINISH} --status completed --report PATH"),
    (w.Note(Unpublished("origin", "git okstra sync origin", "exit 128")),
     "not published: exit 128 — publish it with: git okstra sync origin"),
    (w.IntegrateConflict("CONFLICT in a"), "integrating stopped on a conflict: CONFLICT in a"),
    (w.IntegrateLater("lost a race"), "could not integrate now (a later claim does): lost a race"),
    (w.Integrated((1, 2), "okstra/p/g/i", HEAD, "origin"),
     "integrated 1, 2 into okstra/p/g/i at 0123456789ab; published to origin"),
    (w.Integrated((), "okstra/p/g/i", HEAD, None),
     "integrated nothing new into okstra/p/g/i at 0123456789ab"),
    (w.NotReleased(2, "refused"), "stage 2 could not be released: refused"),
    (w.Released(2, "the command exited 3", "okstra/p/g/i/stage-2"),
     "released stage 2 (the command exited 3); its commits stay on okstra/p/g/i/stage-2"),
]  # fmt: skip


@pytest.mark.parametrize(("step", "line"), LINES)
def test_each_step_of_the_loop_has_its_line(step: w.Progress, line: str):
    assert progress(step) == "okstra work: " + line


def test_every_kind_of_step_has_a_line():
    """Each class of ``worker.Progress`` is worded above (a new kind of step gets its line)."""
    assert {type(step) for step, _ in LINES} == set(w.Progress.__args__)
    with pytest.raises(TypeError, match="not a step of the work loop"):
        progress("a line built elsewhere")  # type: ignore[arg-type]
