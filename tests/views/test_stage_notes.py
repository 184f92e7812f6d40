"""What ``stage done`` and ``stage release`` say of the run they left running and of what they
could not publish: the claims services hand typed notes (RunLeftRunning, Unpublished),
views/stage.py words them as the services did when they built the sentences."""

from __future__ import annotations

from okstra_git.services.claims.common import RunLeftRunning, Unpublished
from okstra_git.views.stage import publish_note, run_note

FINISH = "git okstra run finish p:g:i --type implementation --seq 002"
RUN = "implementation-002"


def test_the_run_left_running_and_what_finishes_it():
    assert run_note(RunLeftRunning(RUN, FINISH, "no-report")) == (
        f"every stage of {RUN} is done, but the run is still running: finishing it needs its "
        f"report, and this `stage done` was given no --report. Finish it with: {FINISH} "
        "--status completed --report PATH"
    )
    assert run_note(RunLeftRunning(RUN, FINISH, "some-done")) == (
        f"run {RUN} holds no started stage now and is still running; {FINISH} --status "
        "completed --report PATH (some of its stages are done)"
    )
    assert run_note(RunLeftRunning(RUN, FINISH, "none-done")) == (
        f"run {RUN} holds no started stage now and is still running; {FINISH} --status error"
    )


def test_what_a_done_could_not_publish_yet():
    sync = "git okstra sync origin"
    assert publish_note(Unpublished("origin", sync)) == (
        "the task's latest events are recorded here but not on origin (its task ref moved "
        f"there); publish them with: {sync}"
    )
    assert publish_note(Unpublished("origin", sync, "git fetch origin failed (exit 128)")) == (
        f"not published: git fetch origin failed (exit 128) — publish it with: {sync}"
    )
