"""Which command a refusal hints with (``logic/nextstep.refusal_hint``): the task's next step,
unless that step is the refused command itself or the refusal is about a file it was given."""

from __future__ import annotations

from okstra_git.logic.nextstep import Step, okstra_argv, refusal_hint


def step(*args: object) -> dict[str, object]:
    return Step("run", okstra_argv(*args), "/clone", "agent", "why").to_data()


def test_a_refusal_about_the_task_hints_with_its_next_step():
    sync = step("sync", "origin")
    assert refusal_hint(sync, ("stage", "done"), "git okstra stage list p:g:i") == (
        "git -C /clone okstra sync origin"
    )
    assert refusal_hint(sync, ("run", "start"), None) == "git -C /clone okstra sync origin"


def test_the_refused_command_itself_is_never_the_hint():
    """`stage claim` refused because merging the dependencies conflicts: the engine, which
    cannot see a conflict coming, says `stage claim` again; the refusal's own fix stands."""
    claim = step("stage", "claim", "p:g:i", "--remote", "origin")
    own = "git -C /clone okstra integrate p:g:i --remote origin"
    assert refusal_hint(claim, ("stage", "claim"), own) == own
    assert refusal_hint(claim, ("stage", "done"), own) == claim["command"]


def test_a_refusal_about_a_file_keeps_its_fix_and_a_step_with_nothing_to_run_too():
    """...made to run from anywhere (in the step's clone), unless it names a relative path,
    which is the user's, relative to where they ran the command."""
    own = "git okstra report validate /clone/data.json"
    absolute = "git -C /clone okstra report validate /clone/data.json"
    assert refusal_hint(step("integrate", "p:g:i"), ("report", "init"), own) == absolute
    relative = "git okstra report validate plans/data.json"
    assert refusal_hint(step("integrate", "p:g:i"), ("report", "init"), relative) == relative
    human = Step("human", None, "/clone", "human", "write the plan").to_data()
    assert refusal_hint(human, ("stage", "claim"), "git okstra plan submit p:g:i F") == (
        "git -C /clone okstra plan submit p:g:i F"
    )
    assert refusal_hint(human, ("stage", "claim"), "git okstra plan submit p:g:i F.md") == (
        "git okstra plan submit p:g:i F.md"
    )
    assert refusal_hint(None, ("stage", "claim"), None) is None
