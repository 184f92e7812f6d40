"""``git okstra wizard``: set up a run one prompt at a time (docs/workflow.md)."""

from __future__ import annotations

from ..core.keys import TASK_TYPES
from ..views import Output
from .declare import Arg, command, group

group(
    "wizard",
    "Run set-up as a JSON prompt protocol for an agent UI.",
    about="Each call prints the prompt to show: pick (one value), text, pick_group (up to four "
    "picks answered by one JSON object keyed by step id; all are recorded or none) or done "
    "(the run set-up and its git okstra run start command). The state lives in --state-file, "
    "replaced atomically at every step.",
)

STATE = Arg(
    "--state-file",
    "The wizard's state (JSON), kept between steps.",
    metavar="FILE",
    required=True,
    complete="file",
)


@command(
    "wizard start",
    "Begin setting up a run; prints the first prompt.",
    STATE,
    Arg("--task-type", "The phase to run (else it is asked).", metavar="TYPE", choices=TASK_TYPES),
    Arg("--key", "The task (else it is asked).", metavar="KEY", complete="task"),
    Arg("--restart", "Replace an existing state file.", flag=True),
)
def start(state_file: str, task_type: str | None, key: str | None, restart: bool) -> Output:
    from ..services import wizard
    from ..views.wizard import reply

    answer = wizard.start(state_file, task_type, key, restart)
    return reply(answer.prompt, answer.error)


@command(
    "wizard step",
    "Answer the current prompt (or, without --answer, show it again).",
    STATE,
    Arg(
        "--answer",
        "The value picked, the text typed, or for a pick_group one JSON object keyed by step "
        "id. A rejected answer records nothing, asks again and exits 1.",
        metavar="ANSWER",
    ),
    Arg(
        "--expect",
        'Record the answer only if the current prompt is this step (its "step" field); '
        "otherwise nothing is recorded and the current prompt is shown, exit 1. For several "
        "agents answering one state file.",
        metavar="STEP",
    ),
    about="In the confirmation prompt, answer edit to change an earlier answer: it is asked "
    "again and every later answer that still applies is kept. Steps on one state file take "
    "turns, so answers sent at once all land, one after the other.",
)
def step(state_file: str, answer: str | None, expect: str | None) -> Output:
    from ..services import wizard
    from ..views.wizard import reply

    result = wizard.step(state_file, answer, expect)
    return reply(result.prompt, result.error)
