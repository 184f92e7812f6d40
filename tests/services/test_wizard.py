"""The run set-up wizard (docs/workflow.md): the pure state machine, its state file, and crashes."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_git.cli.dispatch import json_data
from okstra_git.core.errors import BadInput, Refused
from okstra_git.logic import wizard
from okstra_git.records.wizard import load_state
from okstra_git.services import wizard as service
from okstra_git.views.wizard import reply as view_reply

FULL_ROSTER = "claude,codex,gemini"


def prompt_of(state: wizard.State) -> dict:
    return wizard.current(state).prompt


def drive(state: wizard.State, *answers: str) -> wizard.State:
    for text in answers:
        state = wizard.answer(state, text)
    return state


def customized(task_type: str = "implementation-planning") -> wizard.State:
    """Up to the models group, with every worker on the roster."""
    return drive(wizard.start(task_type, "p:g:t"), "", "customize", FULL_ROSTER)


def all_defaults(state: wizard.State) -> wizard.State:
    """Answer every pending prompt with its first option (groups: every member's default)."""
    for _ in range(50):
        prompt = prompt_of(state)
        if prompt["step"] == wizard.CONFIRM:
            return state
        if prompt["kind"] == "pick_group":
            state = wizard.answer(state, "{}")
        elif prompt["kind"] == "pick":
            state = wizard.answer(state, prompt["options"][0]["value"])
        else:
            state = wizard.answer(state, "" if prompt["step"] == "base_ref" else "some-text")
    raise AssertionError("the wizard never reached its confirmation")


# -- pick_group batching -------------------------------------------------------------------------


def test_five_member_models_group_is_asked_as_four_then_one():
    state = customized()
    first = prompt_of(state)
    assert first["kind"] == "pick_group" and first["step"] == "models"
    assert [q["step"] for q in first["questions"]] == [
        "lead_model",
        "claude_model",
        "codex_model",
        "gemini_model",
    ]
    state = wizard.answer(
        state, json.dumps({"lead_model": "opus", "gemini_model": "gemini-2.5-pro"})
    )
    second = prompt_of(state)
    assert second["kind"] == "pick_group" and second["step"] == "models"
    assert [q["step"] for q in second["questions"]] == ["report_writer_model"]
    # Members routed by key; a member left out takes its default.
    assert state.answers["lead_model"] == "opus"
    assert state.answers["gemini_model"] == "gemini-2.5-pro"
    assert state.answers["claude_model"] == wizard.DEFAULT_MODEL


def test_workers_override_comes_before_the_models_group_and_shapes_it():
    state = drive(wizard.start("error-analysis", "p:g:t"), "", "customize")
    assert prompt_of(state)["step"] == "workers_override"
    state = wizard.answer(state, "codex")
    members = [q["step"] for q in prompt_of(state)["questions"]]
    assert members == ["lead_model", "codex_model", "report_writer_model"]


def test_a_bad_member_value_re_asks_the_whole_group_and_records_nothing():
    state = customized()
    before = prompt_of(state)
    bad = {"lead_model": "opus", "claude_model": "gpt-5", "codex_model": "gpt-5"}
    with pytest.raises(wizard.Rejected) as caught:
        wizard.answer(state, json.dumps(bad))
    assert "claude_model" in str(caught.value) and "nothing recorded" in str(caught.value)
    # The state is immutable and unchanged, so the same group comes again.
    assert "lead_model" not in state.answers and "codex_model" not in state.answers
    assert prompt_of(state) == before
    for junk in ("opus", "[1]", '{"lead_model": 3}', '{"stranger": "x"}'):
        with pytest.raises(wizard.Rejected):
            wizard.answer(state, junk)


def test_an_empty_member_value_means_the_phase_default():
    """Seed 000: a missing key and an empty value ("" or "default") are both the phase
    default; only the other members' values are checked."""
    state = customized()
    answered = wizard.answer(
        state,
        json.dumps(
            {"lead_model": "opus", "claude_model": "", "codex_model": "default", "gemini_model": ""}
        ),
    )
    assert {k: answered.answers[k] for k in ("lead_model", "claude_model", "codex_model")} == {
        "lead_model": "opus",
        "claude_model": wizard.BY_ID["claude_model"].default,
        "codex_model": "default",
    }
    assert answered.answers["gemini_model"] == "default"
    finished = all_defaults(answered)
    state = drive(wizard.start("implementation-planning", "p:g:t"), "", "customize", "claude")
    state = drive(state, "{}", "off")
    assert prompt_of(state)["step"] == "options"
    state = wizard.answer(state, '{"directive_pick": "", "related_tasks_pick": ""}')
    assert (
        state.answers["directive_pick"] == "none" and state.answers["related_tasks_pick"] == "none"
    )
    assert prompt_of(finished)["step"] == wizard.CONFIRM
    with pytest.raises(wizard.Rejected, match="lead_model"):  # a text-less "" is not a model
        wizard.answer(customized(), '{"lead_model": " "}')


def test_a_bad_member_value_through_the_state_file_changes_nothing_on_disk(tmp_path: Path):
    path = str(tmp_path / "wizard.json")
    service.start(path, "implementation-planning", "p:g:t")
    for text in ("", "customize", FULL_ROSTER):
        assert service.step(path, text).error is None
    before = Path(path).read_bytes()
    reply = service.step(path, json.dumps({"lead_model": "opus", "codex_model": "nope"}))
    assert reply.error is not None and "codex_model" in reply.error
    assert json_data(view_reply(reply.prompt, reply.error))["ok"] is False
    assert reply.prompt["step"] == "models" and len(reply.prompt["questions"]) == 4
    assert Path(path).read_bytes() == before


def test_options_group_and_text_follow_ups_asked_alone():
    state = drive(wizard.start("release-handoff", "p:g:t"), "", "customize")
    # release-handoff: no roster, no critic; models: lead only (the lead writes the report).
    assert [q["step"] for q in prompt_of(state)["questions"]] == ["lead_model"]
    state = wizard.answer(state, "{}")
    options = prompt_of(state)
    assert options["kind"] == "pick_group" and options["step"] == "options"
    assert [q["step"] for q in options["questions"]] == [
        "directive_pick",
        "related_tasks_pick",
        "clarification_pick",
        "pr_template_pick",
    ]
    state = wizard.answer(
        state, json.dumps({"directive_pick": "custom", "pr_template_pick": "custom"})
    )
    for step, text in (("directive", "Keep it small."), ("pr_template", "docs/pr.md")):
        prompt = prompt_of(state)
        assert (prompt["kind"], prompt["step"]) == ("text", step)
        state = wizard.answer(state, text)
    assert prompt_of(state)["step"] == wizard.CONFIRM
    setup = prompt_of(state)["summary"]
    assert setup["options"] == {
        "directive": "Keep it small.",
        "relatedTasks": [],
        "clarification": "none",
        "prTemplate": "docs/pr.md",
    }


def test_release_handoff_customize_has_no_worker_roster():
    state = drive(wizard.start("release-handoff", "p:g:t"), "", "customize")
    assert prompt_of(state)["step"] == "models"


# -- the critic opt-in ----------------------------------------------------------------------------


@pytest.mark.parametrize("task_type", wizard.TASK_TYPES)
def test_the_critic_is_asked_only_where_it_applies(task_type: str):
    state = drive(wizard.start(task_type, "p:g:t"))
    asked = []
    for _ in range(20):
        prompt = prompt_of(state)
        if prompt["step"] == wizard.CONFIRM:
            break
        asked.append(prompt["step"])
        if prompt["step"] == "critic_provider":
            state = wizard.answer(state, "codex")
        elif prompt["step"] == "verify_stage":
            state = wizard.answer(state, "auto")
        elif prompt["step"] == "critic_model":
            state = wizard.answer(state, "default")
        elif prompt["kind"] == "text":
            state = wizard.answer(state, "")
        else:
            state = wizard.answer(state, "defaults")
    applies = task_type in wizard.CRITIC_PHASES
    assert ("critic_provider" in asked) is applies
    assert ("critic_model" in asked) is applies
    setup = prompt_of(state)["summary"]
    if applies:
        mode = "acceptance-devils-advocate" if task_type == "final-verification" else "coverage"
        assert setup["convergence"]["critic"] == {
            "enabled": True,
            "provider": "codex",
            "model": "default",
            "mode": mode,
        }
        assert setup["command"].endswith("--critic codex:default")
    else:
        assert "convergence" not in setup and "--critic" not in setup["command"]


def test_critic_model_options_follow_the_provider():
    state = drive(wizard.start("final-verification", "p:g:t"), "auto", "defaults", "gemini")
    values = [o["value"] for o in prompt_of(state)["options"]]
    assert values == ["default", "gemini-2.5-pro", "gemini-2.5-flash"]
    with pytest.raises(wizard.Rejected):
        wizard.answer(state, "opus")


# -- edit and rewind ------------------------------------------------------------------------------


def test_edit_rewind_keeps_later_answers_that_still_apply():
    state = all_defaults(customized())
    models = {k: v for k, v in state.answers.items() if k.endswith("_model")}
    assert "gemini_model" in models
    state = drive(state, "edit", "workers_override")
    prompt = prompt_of(state)
    assert prompt["step"] == "workers_override" and prompt["current"] == FULL_ROSTER
    before = dict(state.answers)
    state = wizard.answer(state, "claude,codex")
    # Gemini's question no longer applies; every other later answer is kept, so the
    # wizard goes straight back to the confirmation.
    assert prompt_of(state)["step"] == wizard.CONFIRM
    expected = {k: v for k, v in before.items() if k != "gemini_model"}
    expected["workers_override"] = "claude,codex"
    assert state.answers == expected


def test_edit_asks_newly_applicable_steps_and_drops_invalid_choices():
    state = drive(wizard.start("implementation-planning", "p:g:t"), "", "customize", "claude")
    state = wizard.answer(state, json.dumps({"lead_model": "haiku"}))
    state = drive(state, "codex", "gpt-5-codex", "{}")
    assert prompt_of(state)["step"] == wizard.CONFIRM
    # Widening the roster adds a member: only that one is asked.
    state = drive(state, "edit", "workers_override", "claude,codex")
    prompt = prompt_of(state)
    assert prompt["kind"] == "pick_group"
    assert [q["step"] for q in prompt["questions"]] == ["codex_model"]
    state = wizard.answer(state, '{"codex_model": "gpt-5"}')
    assert state.answers["lead_model"] == "haiku"
    # A new critic provider makes the old model an invalid choice: it is asked again.
    state = drive(state, "edit", "critic_provider", "claude")
    assert "critic_model" not in state.answers
    assert prompt_of(state)["step"] == "critic_model"
    # A phase without a critic drops both critic answers, keeps the rest.
    state = drive(state, "opus", "edit", "task_type", "implementation")
    assert not {"critic_provider", "critic_model", "workers_override", "base_ref"} & set(
        state.answers
    )
    assert state.answers["lead_model"] == "haiku"
    assert prompt_of(state)["questions"][0]["step"] == "executor_model"


def test_edit_a_group_member_and_back():
    state = all_defaults(customized())
    state = drive(state, "edit", "codex_model")
    prompt = prompt_of(state)
    assert prompt["kind"] == "pick_group"
    assert [q["step"] for q in prompt["questions"]] == ["codex_model"]
    assert prompt["questions"][0]["current"] == "default"
    state = wizard.answer(state, '{"codex_model": "gpt-5-codex"}')
    assert state.answers["codex_model"] == "gpt-5-codex"
    state = drive(state, "edit", "back")
    assert prompt_of(state)["step"] == wizard.CONFIRM
    with pytest.raises(wizard.Rejected):
        drive(state, "edit", "no_such_step")


def test_done_gives_the_setup_and_the_run_start_command():
    state = drive(
        wizard.start("final-verification", "p:g:it's"),
        "auto",
        "customize",
        "claude",
        '{"lead_model": "opus"}',
    )
    state = all_defaults(state)
    state = wizard.answer(state, "start")
    done = prompt_of(state)
    assert done["kind"] == "done"
    setup = done["setup"]
    assert setup["taskKey"] == "p:g:it's" and "baseRef" not in setup
    assert setup["workers"] == ["claude"]
    assert setup["models"] == {"lead": "opus", "claude": "default", "reportWriter": "default"}
    import shlex

    assert setup["stage"] == "auto"
    assert shlex.split(setup["command"]) == [
        "git", "okstra", "run", "start", "p:g:it's", "--type", "final-verification",
        "--stage", "auto", "--workers", "claude", "--model", "lead=opus",
    ]  # fmt: skip
    with pytest.raises(wizard.Rejected):
        wizard.answer(state, "start")


def test_start_checks_its_preset_answers():
    with pytest.raises(BadInput, match="--task-type"):
        wizard.start("planning")
    with pytest.raises(BadInput, match="--key"):
        wizard.start("implementation", "only:two")
    assert prompt_of(wizard.start())["step"] == "task_key"
    state = drive(wizard.start(), "p:g:t")
    assert prompt_of(state)["step"] == "task_type"


def test_text_answers_are_checked():
    state = wizard.start("implementation-planning")
    for bad in ("", "a:b", "a:\x01:c"):
        with pytest.raises(wizard.Rejected):
            wizard.answer(state, bad)
    state = wizard.answer(state, "p:g:t")
    for bad in ("-rf", "main branch", "a\nb"):
        with pytest.raises(wizard.Rejected):
            wizard.answer(state, bad)
    assert wizard.answer(state, "  ").answers["base_ref"] == "HEAD"


# -- the machine's invariants ---------------------------------------------------------------------

VALUES = st.sampled_from(
    ["", "p:g:t", "customize", "defaults", "custom", "none", "claude", "codex", "gemini",
     FULL_ROSTER, "opus", "gpt-5", "default", "off", "HEAD", *wizard.TASK_TYPES]
)  # fmt: skip
ANSWER_MAPS = st.dictionaries(st.sampled_from([s.id for s in wizard.STEPS]), VALUES)


@given(ANSWER_MAPS)
def test_a_step_reads_only_the_answers_before_it(answers: dict[str, str]):
    """What edit-rewind relies on: one forward pass re-checks every answer."""
    for i, step in enumerate(wizard.STEPS):
        earlier = {s.id: answers[s.id] for s in wizard.STEPS[:i] if s.id in answers}
        assert step.applies(earlier) == step.applies(answers)
        if step.applies(answers) and step.kind == "pick":
            assert step.options(earlier) == step.options(answers)


@given(ANSWER_MAPS)
def test_settle_is_idempotent_and_gives_a_valid_state(answers: dict[str, str]):
    settled = wizard.settle(answers)
    assert wizard.settle(settled) == settled
    wizard.check_state(wizard.State(settled), "state")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(VALUES, st.just("{}"), st.just("edit"), st.just("start")), max_size=40))
def test_any_answer_sequence_keeps_a_state_the_file_accepts(texts: list[str]):
    state = wizard.start()
    for text in texts:
        with contextlib.suppress(wizard.Rejected):
            state = wizard.answer(state, text)
        wizard.check_state(state, "state")
        asked = wizard.current(state)
        assert len(asked.steps) <= wizard.GROUP_LIMIT


# -- the state file -------------------------------------------------------------------------------


def test_start_refuses_an_existing_state_file_unless_restarting(tmp_path: Path):
    path = str(tmp_path / "w.json")
    service.start(path, "implementation", "p:g:t")
    with pytest.raises(Refused, match="wizard step --state-file"):
        service.start(path, "implementation")
    reply = service.start(path, "implementation", restart=True)
    assert reply.prompt["step"] == "task_key"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not UTF-8 JSON"),
        ("[]", "expected a JSON object"),
        ('{"schemaVersion": 2, "answers": {}, "mode": "ask"}', "schemaVersion 2"),
        ('{"schemaVersion": 1, "answers": {"x": "1"}, "mode": "ask"}', "answers.x: no such"),
        ('{"schemaVersion": 1, "answers": {"task_type": "nope"}, "mode": "ask"}', "task_type"),
        (
            '{"schemaVersion": 1, "answers": {"critic_model": "opus"}, "mode": "ask"}',
            "does not apply",
        ),
        ('{"schemaVersion": 1, "answers": {}, "mode": "done"}', "still unanswered"),
        ('{"schemaVersion": 1, "answers": {}, "mode": "edit"}', "editing"),
        ('{"schemaVersion": 1, "answers": {"task_key": 5}, "mode": "ask"}', "expected str"),
    ],
)
def test_a_damaged_state_file_is_named_and_left_alone(tmp_path: Path, content: str, message: str):
    path = tmp_path / "w.json"
    path.write_text(content)
    with pytest.raises(BadInput, match=message) as caught:
        service.step(str(path), "x")
    assert str(path) in str(caught.value)
    assert path.read_text() == content


# -- crashes: a real process killed between and during steps -------------------------------------

_LOOP = """
import sys
from pathlib import Path
from okstra_git.services import wizard
path, marker = sys.argv[1], Path(sys.argv[2])
marker.touch()
while True:  # step forever: edit, back, edit, back ...
    for text in ("edit", "back"):
        assert wizard.step(path, text).error is None
"""


def test_sigkill_after_the_temp_file_is_written_leaves_the_previous_state(repo: Path):
    from conftest import okstra

    path = repo.parent / "w.json"
    service.start(str(path), "implementation-planning", "p:g:t")
    service.step(str(path), "")
    before = path.read_bytes()
    env = {**os.environ, "OKSTRA_TEST_CRASH_AT": "temp-written"}
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", "wizard", "step", "--state-file", str(path),
         "--answer", "customize"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == -signal.SIGKILL
    # The new state reached a temp file and was never renamed: the old one is intact …
    assert path.read_bytes() == before
    assert list(repo.parent.glob(".w.json.*.okstra-tmp")), "the child did reach the write"
    # … and the wizard carries on from it, sweeping the dead writer's temp file.
    proc = okstra(repo, "wizard", "step", "--state-file", str(path), "--answer", "customize")
    assert proc.returncode == 0, proc.stderr
    assert service.step(str(path)).prompt["step"] == "workers_override"
    assert not list(repo.parent.glob(".w.json.*.okstra-tmp"))


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _LOOP, *args])


def _wait_for(marker: Path, proc: subprocess.Popen[bytes]) -> None:
    while not marker.exists():
        assert proc.poll() is None, "the child ended before it began stepping"
        time.sleep(0.01)


def test_sigkill_at_random_moments_always_leaves_a_readable_state(tmp_path: Path):
    path = tmp_path / "w.json"
    service.start(str(path), "requirements-discovery", "p:g:t")
    state = all_defaults(load_state(path))
    from okstra_git.records.wizard import store_state

    store_state(path, state)
    rng = random.Random(12)
    for round_ in range(8):
        marker = tmp_path / f"marker-{round_}"
        proc = _spawn(str(path), str(marker))
        _wait_for(marker, proc)
        time.sleep(rng.uniform(0.05, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        state = load_state(path)  # whole and valid, whichever step it was killed in
        assert state.mode in (wizard.ASK, wizard.CHOOSE_EDIT)
        if state.mode == wizard.CHOOSE_EDIT:
            service.step(str(path), "back")


# -- through the real CLI -----------------------------------------------------------------------


def test_the_cli_drives_the_wizard_to_a_run_start_that_records_the_critic(repo: Path):
    from conftest import git, okstra
    from verify_world import KEY, merged_world

    merged_world(repo)  # a final-verification run starts only past the gate
    state = ["--state-file", str(repo.parent / "wizard.json")]

    def step(*args: str) -> tuple[int, dict]:
        proc = okstra(repo, "wizard", *args, *state, "--json")
        return proc.returncode, json.loads(proc.stdout)

    code, out = step("start", "--task-type", "final-verification", "--key", KEY)
    assert (code, out["ok"], out["prompt"]["step"]) == (0, True, "verify_stage")
    for answer in ("auto", "customize", FULL_ROSTER):
        assert step("step", "--answer", answer)[0] == 0
    code, out = step("step", "--answer", '{"lead_model": "opus", "codex_model": "opus"}')
    assert code == 1 and out["ok"] is False and out["exitCode"] == 1
    assert "codex_model" in out["error"] and len(out["prompt"]["questions"]) == 4
    for answer in ('{"lead_model": "opus"}', "{}", "codex", "gpt-5", "{}"):
        code, out = step("step", "--answer", answer)
        assert code == 0, out
    assert out["prompt"]["step"] == "confirm"
    code, out = step("step", "--answer", "start")
    setup = out["prompt"]["setup"]
    assert setup["convergence"]["critic"]["mode"] == "acceptance-devils-advocate"
    # The printed command is one shell line that really starts the run.
    import shlex

    argv = shlex.split(setup["command"])
    assert argv[:2] == ["git", "okstra"]
    started = okstra(repo, *argv[2:], "--json")
    assert started.returncode == 0, started.stderr
    record = json.loads(
        git(repo, "show", "refs/okstra/tasks/grp/feat:runs/final-verification/001.json")
    )
    assert record["convergence"]["critic"] == {
        "enabled": True,
        "provider": "codex",
        "model": "gpt-5",
        "mode": "acceptance-devils-advocate",
    }
    # Without --json a person reads the prompt; a damaged state file is exit 2, named.
    shown = okstra(repo, "wizard", "step", *state)
    assert shown.returncode == 0 and shown.stdout.startswith("done: the run set-up")
    Path(state[1]).write_text("{")
    broken = okstra(repo, "wizard", "step", *state, "--answer", "x")
    assert broken.returncode == 2 and state[1] in broken.stderr


def test_every_wizard_answer_and_the_w1_stage_pick_reach_the_run_manifest(repo: Path):
    """Seed 000 W1: a final-verification set-up asks what to verify — the whole task, one of
    the task's done stages, or a number typed in — and the command the wizard prints carries
    that and every other answer into the run: run literally, its manifest holds them all."""
    import shlex

    from conftest import okstra
    from verify_world import KEY, merged_world

    merged_world(repo)  # stages 1 and 2 done and merged
    state = ["--state-file", str(repo.parent / "wizard.json")]

    def step(*args: str) -> dict:
        proc = okstra(repo, "wizard", *args, *state, "--json")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout)["prompt"]

    picker = step("start", "--task-type", "final-verification", "--key", KEY)
    assert picker["step"] == "verify_stage"
    assert [o["value"] for o in picker["options"]] == ["auto", "1", "2", "custom"]
    assert picker["options"][0]["label"].endswith("(recommended)")
    typed = step("step", "--answer", "custom")
    assert (typed["step"], typed["kind"]) == ("verify_stage_number", "text")
    for answer in (
        "2",
        "customize",
        "claude,gemini",
        json.dumps(
            {
                "lead_model": "sonnet",
                "claude_model": "",
                "gemini_model": "gemini-2.5-flash",
                "report_writer_model": "haiku",
            }
        ),
        "claude",
        "opus",
        json.dumps(
            {"directive_pick": "custom", "related_tasks_pick": "custom", "clarification_pick": ""}
        ),
        "Check the cache path first; it's 'odd'.",
        "proj:grp:other",
    ):
        prompt = step("step", "--answer", answer)
    assert prompt["step"] == "confirm"
    done = step("step", "--answer", "start")
    setup = done["setup"]
    assert setup["stage"] == 2
    command = setup["command"]
    assert "\n" not in command
    argv = shlex.split(command)
    assert argv[argv.index("--stage") + 1] == "2"
    started = okstra(repo, *argv[2:], "--json")
    assert started.returncode == 0, started.stderr
    out = json.loads(started.stdout)
    manifest = json.loads((repo / out["wrote"]["manifest"]).read_text())
    assert (manifest["taskKey"], manifest["taskType"]) == (KEY, "final-verification")
    assert (manifest["verificationScope"], manifest["stage"]) == ("single-stage", 2)
    assert manifest["workers"] == setup["workers"] == ["claude", "gemini"]
    assert (
        manifest["models"]
        == setup["models"]
        == {
            "lead": "sonnet",
            "claude": "default",
            "gemini": "gemini-2.5-flash",
            "reportWriter": "haiku",
        }
    )
    assert (
        manifest["options"]
        == setup["options"]
        == {
            "directive": "Check the cache path first; it's 'odd'.",
            "relatedTasks": ["proj:grp:other"],
            "clarification": "none",
        }
    )
    assert manifest["convergence"] == setup["convergence"]
    assert manifest["convergence"]["critic"]["model"] == "opus"


def test_the_stage_picker_takes_only_stage_numbers_and_the_defaults_verify_the_whole_task():
    state = wizard.with_stages(wizard.start("final-verification", "p:g:t"), (1, 3))
    assert [o["value"] for o in prompt_of(state)["options"]] == ["auto", "1", "3", "custom"]
    with pytest.raises(wizard.Rejected):
        wizard.answer(state, "2")  # not a done stage: type it in instead
    typed = wizard.answer(state, "custom")
    for bad in ("0", "two", "-1", "1.5", ""):
        with pytest.raises(wizard.Rejected):
            wizard.answer(typed, bad)
    assert wizard.answer(typed, " 07 ").answers["verify_stage_number"] == "7"
    whole = all_defaults(wizard.answer(state, "auto"))
    assert whole.answers["verify_stage"] == "auto"
    assert prompt_of(whole)["summary"]["command"].endswith("--stage auto")
    # A stage picked, then no longer done (released): the pick is dropped and asked again.
    picked = wizard.answer(state, "3")
    assert "verify_stage" not in wizard.with_stages(picked, (1,)).answers
    # Other phases have no stage to pick and their command no --stage.
    other = all_defaults(wizard.start("error-analysis", "p:g:t"))
    assert "stage" not in prompt_of(other)["summary"]
    assert "--stage" not in prompt_of(other)["summary"]["command"]


_RACER = """
import json, os, sys, time
path, go = sys.argv[1], sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.001)
from okstra_git.cli.dispatch import json_data
from okstra_git.services import wizard
from okstra_git.views.wizard import reply
answer = wizard.step(path, "customize", expect="setup_mode")
print(json.dumps(json_data(reply(answer.prompt, answer.error))))
"""


def test_answers_sent_at_once_to_one_question_land_once(tmp_path: Path):
    """Six agents answer the first question at the same moment, each expecting it: the state
    file takes them in turn, so exactly one lands and five are told the wizard moved on (before,
    each read the same state and wrote over the others, all six reporting success)."""
    path, go = tmp_path / "w.json", tmp_path / "go"
    service.start(str(path), "final-verification", "p:g:i")
    assert service.step(str(path), "auto").error is None
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, str(path), str(go)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    time.sleep(0.5)  # every racer started and waiting
    go.write_text("go")
    replies = [json.loads(proc.communicate(timeout=60)[0]) for proc in racers]
    assert sorted(r["ok"] for r in replies) == [False] * 5 + [True]
    refused = [r for r in replies if not r["ok"]]
    assert all("not 'setup_mode'" in r["error"] for r in refused)
    assert all(r["prompt"]["step"] == "workers_override" for r in replies)
    assert load_state(path).answers["setup_mode"] == "customize"


def test_an_answer_expecting_another_step_records_nothing(tmp_path: Path):
    path = tmp_path / "w.json"
    service.start(str(path), "final-verification", "p:g:i")
    assert service.step(str(path), "auto").error is None
    before = path.read_bytes()
    reply = service.step(str(path), "customize", expect="workers_override")
    assert reply.error and "at step 'setup_mode'" in reply.error
    assert path.read_bytes() == before and reply.prompt["step"] == "setup_mode"
