"""The run set-up wizard (docs/workflow.md) as a pure state machine: plain data in, plain data out.

An agent UI drives it one prompt at a time. A prompt is ``pick`` (one value from options),
``text`` (free input), ``pick_group`` (up to :data:`GROUP_LIMIT` independent picks of one group
asked together, answered by one JSON object keyed by step id) or ``done`` (the run set-up).

The machine is a list of steps in asking order. Whether a step applies, and which options it
offers, depends only on the answers to steps *before* it, so one forward pass over the answers
re-checks everything: that is how an edit rewinds (the edited step is asked again, and every
later answer that still applies and is still a valid choice is kept).

Nothing here touches files or git; ``services/wizard.py`` keeps the state in a file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import BadInput
from ..core.jsontext import camel
from ..core.keys import TASK_TYPES, parse_task_key
from ..core.shell import okstra
from ..core.values import Value, field
from .critic import CRITIC_PHASES, critic_block
from .providers import DEFAULT_MODEL, MODELS, PROVIDERS
from .runsetup import DIRECTIVE_LIMIT, PATH_LIMIT, setup_flags

GROUP_LIMIT = 4
"""Most questions one ``pick_group`` prompt holds (an agent UI's tab limit); more go next."""

CRITIC_OFF = "off"
ROSTERS = (
    "claude,codex",
    "claude,codex,gemini",
    "claude,gemini",
    "codex,gemini",
    "claude",
    "codex",
    "gemini",
)
"""Worker rosters ``workers_override`` offers; the first is the default."""

# Modes of the machine besides asking the steps in order.
ASK, CHOOSE_EDIT, EDIT, DONE = "ask", "choose-edit", "edit", "done"
MODES = (ASK, CHOOSE_EDIT, EDIT, DONE)
CONFIRM, EDIT_TARGET = "confirm", "edit_target"
START, EDIT_CHOICE, BACK = "start", "edit", "back"

Answers = Mapping[str, str]

KNOWN_STAGES = "@stages"
"""The key under which the steps read what the wizard knows besides the answers: the task's
done stages (comma-separated), which the stage picker offers. Never a recorded answer."""
AUTO = "auto"


class Rejected(Exception):
    """An answer the current prompt does not accept; nothing was recorded."""


# ---------------------------------------------------------------------------------------------
# Steps


class Step(Value):
    """One question. ``applies`` and ``options`` read only the answers to earlier steps."""

    id: str
    """The key of the answer, and of the member in a ``pick_group`` answer."""
    label: str
    """What the question asks, for the UI."""
    kind: str = "pick"
    """``pick`` or ``text``."""
    group: str | None = None
    """A pick group (``models``, ``options``) asked together with its other members."""
    applies: Callable[[Answers], bool] = lambda _answers: True
    options: Callable[[Answers], tuple[tuple[str, str], ...]] = lambda _answers: ()
    """(value, label) pairs of a pick."""
    default: str | None = None
    """The value a group member takes when its key is left out of the answer or its value is
    ``""`` (the phase default, seed 000)."""
    check: Callable[[str], str] | None = None
    """A text step's check: the value to record, or raises Rejected."""


def _phase(answers: Answers) -> str:
    return answers.get("task_type", "")


def _customize(answers: Answers) -> bool:
    return answers.get("setup_mode") == "customize"


def _has_roster(answers: Answers) -> bool:
    return _phase(answers) not in ("implementation", "release-handoff")


def _roster(answers: Answers) -> tuple[str, ...]:
    if not _has_roster(answers):
        return ()
    return tuple(answers.get("workers_override", ROSTERS[0]).split(","))


def _models(*providers: str) -> Callable[[Answers], tuple[tuple[str, str], ...]]:
    def options(_answers: Answers) -> tuple[tuple[str, str], ...]:
        picks = [(DEFAULT_MODEL, "the phase's default model")]
        for provider in providers:
            picks += [(m, f"{provider}: {m}") for m in MODELS[provider]]
        return tuple(picks)

    return options


def _fixed(*pairs: tuple[str, str]) -> Callable[[Answers], tuple[tuple[str, str], ...]]:
    return lambda _answers: pairs


def _text(limit: int, *, one_line: bool = True) -> Callable[[str], str]:
    def check(value: str) -> str:
        value = value.strip()
        if not value:
            raise Rejected("an answer is required")
        if len(value) > limit:
            raise Rejected(f"at most {limit} characters")
        allowed = "\t" if one_line else "\t\n"
        bad = next((ch for ch in value if ord(ch) < 0x20 and ch not in allowed), None)
        if bad is not None:
            what = "a line break" if bad in "\r\n" else f"control character U+{ord(bad):04X}"
            raise Rejected(f"contains {what}")
        return value

    return check


def _task_key(value: str) -> str:
    try:
        return str(parse_task_key(value.strip()))
    except BadInput as exc:
        raise Rejected(str(exc)) from exc


def _base_ref(value: str) -> str:
    value = value.strip() or "HEAD"
    if value.startswith("-") or any(ch.isspace() or ord(ch) < 0x20 for ch in value):
        raise Rejected(f"{value!r} is not a revision (no spaces, control characters or leading -)")
    return _text(200)(value)


def _stage_number(value: str) -> str:
    value = value.strip()
    if not (value.isascii() and value.isdigit()) or int(value) < 1 or len(value) > 6:
        raise Rejected(f"{value!r} is not a stage number (1, 2, …)")
    return str(int(value))


def _stage_options(answers: Answers) -> tuple[tuple[str, str], ...]:
    known = [n for n in answers.get(KNOWN_STAGES, "").split(",") if n]
    return (
        (AUTO, "the whole task, every stage (recommended)"),
        *((n, f"stage {n} alone") for n in known),
        ("custom", "type a stage number in"),
    )


def _task_keys(value: str) -> str:
    keys = [part.strip() for part in value.split(",") if part.strip()]
    if not keys:
        raise Rejected("name at least one task key, comma-separated")
    return ",".join(_task_key(k) for k in keys)


def _model_member(provider_key: str | None, step_id: str, label: str, *providers: str) -> Step:
    def applies(answers: Answers) -> bool:
        if not _customize(answers):
            return False
        if provider_key == "executor":
            return _phase(answers) == "implementation"
        if provider_key == "report":
            return _phase(answers) != "release-handoff"
        if provider_key is None:
            return True
        return provider_key in _roster(answers)

    return Step(
        step_id,
        label,
        group="models",
        applies=applies,
        options=_models(*providers),
        default=DEFAULT_MODEL,
    )


def _follow_up(step_id: str, label: str, pick: str, limit: int, one_line: bool = True) -> Step:
    """A free-text answer asked alone, only when its pick chose "custom"."""
    return Step(
        step_id,
        label,
        kind="text",
        applies=lambda answers: answers.get(pick) == "custom",
        check=_text(limit, one_line=one_line),
    )


NONE_OR_CUSTOM = _fixed(("none", "none"), ("custom", "type it in"))

STEPS: tuple[Step, ...] = (
    Step("task_key", "Task key (project-id:task-group:task-id)", kind="text", check=_task_key),
    Step("task_type", "Phase to run", options=_fixed(*((t, t) for t in TASK_TYPES))),
    Step(
        "base_ref",
        "Revision the run starts from (empty for HEAD)",
        kind="text",
        applies=lambda a: _phase(a) not in ("implementation", "final-verification"),
        check=_base_ref,
    ),
    # W1 (seed 000): what a final-verification run verifies, as run start --stage takes it.
    Step(
        "verify_stage",
        "What to verify: the whole task, or one done stage alone",
        applies=lambda a: _phase(a) == "final-verification",
        options=_stage_options,
    ),
    Step(
        "verify_stage_number",
        "Stage number to verify alone",
        kind="text",
        applies=lambda a: a.get("verify_stage") == "custom",
        check=_stage_number,
    ),
    Step(
        "setup_mode",
        "Workers, models and options",
        options=_fixed(("defaults", "use the defaults"), ("customize", "choose them")),
    ),
    # Before the models group: the roster decides which worker model questions it holds.
    Step(
        "workers_override",
        "Analysis workers",
        applies=lambda a: _customize(a) and _has_roster(a),
        options=_fixed(*((r, r.replace(",", " + ")) for r in ROSTERS)),
    ),
    _model_member(None, "lead_model", "Lead model", "claude"),
    _model_member("executor", "executor_model", "Executor model", "claude", "codex"),
    _model_member("claude", "claude_model", "Claude worker model", "claude"),
    _model_member("codex", "codex_model", "Codex worker model", "codex"),
    _model_member("gemini", "gemini_model", "Gemini worker model", "gemini"),
    _model_member("report", "report_writer_model", "Report writer model", "claude"),
    Step(
        "critic_provider",
        "Critic pass (opt-in): which provider's worker plays the critic",
        applies=lambda a: _phase(a) in CRITIC_PHASES,
        options=_fixed((CRITIC_OFF, "no critic pass"), *((p, p) for p in PROVIDERS)),
    ),
    # Not in a group: its options depend on the provider just chosen.
    Step(
        "critic_model",
        "Critic model",
        applies=lambda a: _phase(a) in CRITIC_PHASES and a.get("critic_provider") in PROVIDERS,
        options=lambda a: _models(a["critic_provider"])(a),
    ),
    Step(
        "directive_pick",
        "Extra directive for the lead",
        group="options",
        applies=_customize,
        options=NONE_OR_CUSTOM,
        default="none",
    ),
    # One line: it goes on the run start command line the wizard prints.
    _follow_up("directive", "Directive text (one line)", "directive_pick", DIRECTIVE_LIMIT),
    Step(
        "related_tasks_pick",
        "Related tasks",
        group="options",
        applies=_customize,
        options=NONE_OR_CUSTOM,
        default="none",
    ),
    Step(
        "related_tasks",
        "Related task keys, comma-separated",
        kind="text",
        applies=lambda a: a.get("related_tasks_pick") == "custom",
        check=_task_keys,
    ),
    Step(
        "clarification_pick",
        "Clarification response to carry in",
        group="options",
        applies=_customize,
        default="none",
        options=_fixed(
            ("none", "none"), ("latest", "the latest report's response"), ("custom", "a file path")
        ),
    ),
    _follow_up("clarification", "Clarification response file", "clarification_pick", PATH_LIMIT),
    Step(
        "pr_template_pick",
        "Pull request template",
        group="options",
        applies=lambda a: _customize(a) and _phase(a) == "release-handoff",
        default="default",
        options=_fixed(("default", "the repository's"), ("custom", "a file path")),
    ),
    _follow_up("pr_template", "Pull request template file", "pr_template_pick", PATH_LIMIT),
)
BY_ID = {step.id: step for step in STEPS}


# ---------------------------------------------------------------------------------------------
# State and prompts


class State(Value):
    """Everything the wizard remembers between steps (the state file holds exactly this)."""

    answers: dict[str, str] = field(default_factory=dict)
    """Recorded answers by step id, each valid for the answers before it."""
    mode: str = ASK
    """``ask`` the steps in order, ``choose-edit`` which answer to change, ``edit`` one answer
    again, or ``done``."""
    editing: str | None = None
    """In ``edit`` mode, the step being asked again."""
    stages: tuple[int, ...] = ()
    """The task's done stages, which the stage picker offers (read by the service from the
    repository; empty when none is known)."""


def known(state: State) -> dict[str, str]:
    """What the steps read besides the answers (:data:`KNOWN_STAGES`)."""
    return {KNOWN_STAGES: ",".join(map(str, state.stages))}


def _view(state: State) -> dict[str, str]:
    return {**known(state), **state.answers}


def _valid(step: Step, value: str, answers: Answers) -> str:
    """The value to record for ``step``, or raises Rejected."""
    if step.kind == "text":
        assert step.check is not None
        if not isinstance(value, str):
            raise Rejected("expected text")
        return step.check(value)
    choices = [v for v, _ in step.options(answers)]
    if value not in choices:
        raise Rejected(f"{value!r} is not one of: {', '.join(choices)}")
    return value


def settle(answers: Answers, context: Answers | None = None) -> dict[str, str]:
    """``answers`` without those that no longer apply or are no longer valid choices, in step
    order (one pass suffices: a step reads only the answers before it, and ``context``, what
    the wizard knows besides them)."""
    kept: dict[str, str] = dict(context or {})
    for step in STEPS:
        if step.id in answers and step.applies(kept):
            try:
                kept[step.id] = _valid(step, answers[step.id], kept)
            except Rejected:
                continue
    return {k: v for k, v in kept.items() if k in BY_ID}


def check_state(state: State, where: str) -> None:
    """Refuse (BadInput naming the field) a state no run of the machine could have written."""
    if state.mode not in MODES:
        raise BadInput(f"{where}: mode {state.mode!r} is not one of {', '.join(MODES)}")
    if list(state.stages) != sorted(set(state.stages)) or any(n < 1 for n in state.stages):
        raise BadInput(f"{where}: stages: distinct stage numbers (1, 2, …) in order")
    seen: dict[str, str] = known(state)
    for step_id in state.answers:
        if step_id not in BY_ID:
            raise BadInput(f"{where}: answers.{step_id}: no such wizard step")
    for step in STEPS:
        if step.id not in state.answers:
            continue
        if not step.applies(seen):
            raise BadInput(f"{where}: answers.{step.id}: does not apply to the answers before it")
        try:
            seen[step.id] = _valid(step, state.answers[step.id], seen)
        except Rejected as exc:
            raise BadInput(f"{where}: answers.{step.id}: {exc}") from exc
        if seen[step.id] != state.answers[step.id]:
            raise BadInput(f"{where}: answers.{step.id}: not in its recorded form")
    if (state.mode == EDIT) != (state.editing is not None):
        raise BadInput(f"{where}: editing is set exactly when mode is {EDIT!r}")
    if state.editing is not None and state.editing not in _editable(state.answers):
        raise BadInput(f"{where}: editing {state.editing!r} is not an answered step")
    if state.mode in (CHOOSE_EDIT, DONE) and _pending(_view(state)):
        raise BadInput(f"{where}: mode {state.mode!r} with questions still unanswered")


def _pending(answers: Answers) -> list[Step]:
    return [s for s in STEPS if s.id not in answers and s.applies(answers)]


def _editable(answers: Answers) -> list[str]:
    return [s.id for s in STEPS if s.id in answers]


def _question(step: Step, answers: Answers) -> dict[str, Any]:
    out: dict[str, Any] = {"step": step.id, "kind": step.kind, "label": step.label}
    if step.kind == "pick":
        out["options"] = [{"value": v, "label": label} for v, label in step.options(answers)]
        out["multi"] = False
    if step.default is not None:
        out["default"] = step.default
    if step.id in answers:
        out["current"] = answers[step.id]
    return out


def _group_prompt(group: str, members: list[Step], answers: Answers) -> dict[str, Any]:
    return {
        "step": group,
        "kind": "pick_group",
        "label": f"{group}: answer with one JSON object keyed by step id",
        "questions": [_question(m, answers) for m in members],
    }


class Asked(Value):
    """What the current prompt asks: the steps an answer goes to, and how it is shown."""

    steps: tuple[Step, ...]
    """The members answered (one for pick/text; empty for control prompts and done)."""
    prompt: dict[str, Any]
    """The prompt as the protocol prints it."""


def current(state: State) -> Asked:
    """The prompt to show for ``state``."""
    answers = _view(state)
    if state.mode == DONE:
        return Asked((), {"step": "done", "kind": "done", "setup": setup(answers)})
    if state.mode == CHOOSE_EDIT:
        options = [{"value": s, "label": f"{s}: {answers[s]}"} for s in _editable(answers)] + [
            {"value": BACK, "label": "change nothing"}
        ]
        prompt = {
            "step": EDIT_TARGET,
            "kind": "pick",
            "label": "Which answer to change",
            "options": options,
            "multi": False,
        }
        return Asked((), prompt)
    if state.mode == EDIT:
        assert state.editing is not None
        step = BY_ID[state.editing]
        if step.group is not None:
            return Asked((step,), _group_prompt(step.group, [step], answers))
        return Asked((step,), _question(step, answers))
    pending = _pending(answers)
    if not pending:
        prompt = {
            "step": CONFIRM,
            "kind": "pick",
            "label": "Start the run with this set-up, or change an answer",
            "options": [
                {"value": START, "label": "start"},
                {"value": EDIT_CHOICE, "label": "change an answer"},
            ],
            "multi": False,
            "summary": setup(answers),
        }
        return Asked((), prompt)
    first = pending[0]
    if first.group is None:
        return Asked((first,), _question(first, answers))
    members = [s for s in pending if s.group == first.group][:GROUP_LIMIT]
    return Asked(tuple(members), _group_prompt(first.group, members, answers))


def answer(state: State, text: str) -> State:
    """The state after answering the current prompt with ``text``, or raises Rejected (the
    state is then unchanged: a group records all its members or none)."""
    asked = current(state)
    kind = asked.prompt["kind"]
    if kind == "done":
        raise Rejected("the wizard is done; start a new one to set up another run")
    if not asked.steps:
        return _control(state, asked.prompt["step"], text)
    view = _view(state)
    if kind == "pick_group":
        values = _group_values(asked.steps, text, view)
    else:
        values = {asked.steps[0].id: _valid(asked.steps[0], text, view)}
    answers = settle({**state.answers, **values}, known(state))
    return state.replace(answers=answers, mode=ASK, editing=None)


def _group_values(members: tuple[Step, ...], text: str, answers: Answers) -> dict[str, str]:
    try:
        given = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Rejected(
            f"a group is answered with one JSON object keyed by step id ({exc})"
        ) from exc
    if not isinstance(given, dict):
        raise Rejected("a group is answered with one JSON object keyed by step id")
    ids = [m.id for m in members]
    problems = [
        f"{k}: not a question of this prompt ({', '.join(ids)})" for k in given if k not in ids
    ]
    values: dict[str, str] = {}
    for member in members:
        value = given.get(member.id, member.default)
        if value == "" and member.default is not None:
            value = member.default  # "" is the phase default, as leaving the key out is
        if value is None:
            problems.append(f"{member.id}: missing")
            continue
        try:
            values[member.id] = _valid(member, value, answers)
        except Rejected as exc:
            problems.append(f"{member.id}: {exc}")
    if problems:
        raise Rejected("nothing recorded; " + "; ".join(problems))
    return values


def _control(state: State, step: str, text: str) -> State:
    if step == CONFIRM:
        if text == START:
            return state.replace(mode=DONE)
        if text == EDIT_CHOICE:
            return state.replace(mode=CHOOSE_EDIT)
        raise Rejected(f"{text!r} is not one of: {START}, {EDIT_CHOICE}")
    if text == BACK:
        return state.replace(mode=ASK)
    if text not in _editable(state.answers):
        raise Rejected(f"{text!r} is not an answered step (or {BACK})")
    return state.replace(mode=EDIT, editing=text)


def with_stages(state: State, stages: tuple[int, ...]) -> State:
    """``state`` knowing the task's done ``stages``; an answer no longer offered is dropped
    (and asked again), as an edit drops one."""
    stages = tuple(sorted(set(stages)))
    if stages == state.stages:
        return state
    new = state.replace(stages=stages)
    answers = settle(state.answers, known(new))
    mode = state.mode if answers == state.answers else ASK
    return new.replace(answers=answers, mode=mode, editing=None if mode == ASK else state.editing)


def start(task_type: str | None = None, key: str | None = None) -> State:
    """A new wizard, with the task type and key already answered when given (BadInput if
    either is not a valid answer)."""
    state = State()
    for step_id, value, flag in (
        ("task_key", key, "--key"),
        ("task_type", task_type, "--task-type"),
    ):
        if value is None:
            continue
        step = BY_ID[step_id]
        try:
            state = state.replace(answers={**state.answers, step_id: _valid(step, value, {})})
        except Rejected as exc:
            raise BadInput(f"{flag} {value!r}: {exc}") from exc
    return state


# ---------------------------------------------------------------------------------------------
# The result


def setup(answers: Answers) -> dict[str, Any]:
    """The run set-up the answers describe (complete once no step is pending), with the
    ``git okstra run start`` command that records it: every answer reaches the run, through
    ``--base``, ``--stage``, ``--critic``, ``--workers``, ``--model`` and ``--option``."""
    phase = _phase(answers)
    out: dict[str, Any] = {"taskKey": answers.get("task_key"), "taskType": phase or None}
    if "base_ref" in answers:
        out["baseRef"] = answers["base_ref"]
    stage = _stage(answers)
    if stage is not None:
        out["stage"] = stage
    out["workers"] = list(_roster(answers)) if _has_roster(answers) else None
    models = {
        s.id.removesuffix("_model"): answers.get(s.id, DEFAULT_MODEL)
        for s in STEPS
        if s.group == "models" and s.applies({**answers, "setup_mode": "customize"})
    }
    out["models"] = {camel(k): v for k, v in models.items()}
    critic = _critic(answers)
    if critic is not None:
        out["convergence"] = {"critic": critic}
    out["options"] = {
        "directive": answers.get("directive"),
        "relatedTasks": answers["related_tasks"].split(",") if "related_tasks" in answers else [],
        "clarification": answers.get("clarification") or answers.get("clarification_pick", "none"),
    }
    if phase == "release-handoff":
        out["options"]["prTemplate"] = answers.get("pr_template") or answers.get(
            "pr_template_pick", "default"
        )
    if out["taskKey"] and phase:
        extra: list[str] = []
        if out.get("baseRef", "HEAD") != "HEAD":
            extra += ["--base", out["baseRef"]]
        if stage is not None:
            extra += ["--stage", str(stage)]
        if critic and critic["enabled"]:
            extra += ["--critic", f"{critic['provider']}:{critic['model']}"]
        extra += setup_flags(phase, out)
        out["command"] = okstra("run", "start", out["taskKey"], "--type", phase, *extra)
    return out


def _stage(answers: Answers) -> int | str | None:
    """What a final-verification run verifies: ``auto`` (the whole task) or a stage number."""
    if _phase(answers) != "final-verification":
        return None
    picked = answers.get("verify_stage", AUTO)
    if picked == "custom":
        picked = answers.get("verify_stage_number", AUTO)
    return AUTO if picked == AUTO else int(picked)


def _critic(answers: Answers) -> dict[str, Any] | None:
    phase = _phase(answers)
    if phase not in CRITIC_PHASES:
        return None
    provider = answers.get("critic_provider", CRITIC_OFF)
    if provider == CRITIC_OFF:
        return {"enabled": False}
    return critic_block(provider, answers.get("critic_model", DEFAULT_MODEL), phase)
