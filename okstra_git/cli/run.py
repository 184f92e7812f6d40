"""``git okstra run``: start and finish runs of a phase."""

from __future__ import annotations

from ..core.keys import TASK_TYPES
from ..logic.phases import RUN_END_STATUSES
from ..views import Output
from .declare import KEY, Arg, auto_or_number, command, group, run_seq

group("run", "Runs: one execution of a phase for a task, numbered 001, 002… per phase.")


def _phase(help: str) -> Arg:
    return Arg("--type", help, metavar="TYPE", choices=TASK_TYPES, required=True, dest="task_type")


@command(
    "run start",
    "Allocate the next run number for a phase and record the run.",
    KEY,
    _phase("The phase to run."),
    Arg(
        "--critic",
        "Opt into a critic pass: whose worker plays it, and optionally its model "
        "(codex, codex:gpt-5). Only requirements-discovery, error-analysis, "
        "implementation-planning and final-verification have one.",
        metavar="CRITIC",
    ),
    Arg(
        "--base",
        "The commit the run analyses (default: HEAD); a later run re-verifies incrementally "
        "only while it is unchanged.",
        metavar="REV",
    ),
    Arg(
        "--stage",
        "final-verification only: 'auto' verifies the whole task, N stage N alone.",
        metavar="auto|N",
        default="auto",
        convert=auto_or_number,
    ),
    Arg(
        "--workers",
        "The analysis workers, comma-separated (default claude,codex): claude, codex, gemini. "
        "Not for implementation or release-handoff, which have none.",
        metavar="LIST",
    ),
    Arg(
        "--model",
        "A role's model as ROLE=MODEL: lead, executor (implementation), claude, "
        "codex, gemini (the workers run), reportWriter; default (or empty) is the phase's "
        "default.",
        metavar="MODEL",
        repeat=True,
    ),
    Arg(
        "--option",
        "A run option as NAME=VALUE: directive (one line for the lead), "
        "relatedTasks (task keys, comma-separated), clarification (none, latest or a file), "
        "prTemplate (release-handoff: default or a file).",
        metavar="OPTION",
        repeat=True,
    ),
    Arg(
        "--remote",
        "Start the run on the task as this remote holds it and publish the start at once, so "
        "no other clone starts the same run.",
        metavar="REMOTE",
        complete="remote",
    ),
    about="Phases are routed: implementation starts only from an approved plan, "
    "final-verification only when the verification gate is met (refused with its texts), "
    "release-handoff only with an accepted whole-task verdict on the task's HEAD. The run's "
    "set-up (type, critic, workers, models, options, base, stage) is kept in its record and "
    "in the run manifest it writes in .okstra/, beside its state file; `wizard` asks for it "
    "and prints this command with every answer.",
)
def start(
    key: str,
    task_type: str,
    critic: str | None,
    base: str | None,
    stage: int | None,
    workers: str | None,
    model: list[str] | None,
    option: list[str] | None,
    remote: str | None,
) -> Output:
    from ..services import runs
    from ..services.context import open_context
    from ..services.verify import GateRefused
    from ..views.run import started, started_elsewhere

    ctx = open_context()
    setup = (workers, model or (), option or ())
    try:
        if remote is not None:
            try:
                state, record = runs.start_run_shared(
                    ctx, remote, ctx.key(key), task_type, critic, base, stage, *setup
                )
            except runs.StartedElsewhere as exc:
                # Another clone started it since this one last fetched: nothing to start here,
                # an expected outcome of two clones following one task. Say what comes next.
                from ..services.status import next_for

                return started_elsewhere(str(exc), next_for(ctx, ctx.key(key)))
        else:
            state, record = runs.start_run(
                ctx, ctx.key(key), task_type, critic, base, stage, *setup
            )
    except GateRefused as exc:
        from ..views.verify import refusal

        return refusal(exc, key, ("run", "start"))
    from ..services.status import next_for

    wrote = runs.written_at_start(ctx, record)
    return started(state, record, wrote, remote, next_for(ctx, ctx.key(key)))


@command(
    "run finish",
    "Record how a run ended and move the task's workflow.",
    KEY,
    _phase("The phase of the run."),
    Arg("--seq", "The run number, e.g. 001.", metavar="SEQ", required=True, convert=run_seq),
    Arg(
        "--status", "How the run ended.", metavar="STATUS", choices=RUN_END_STATUSES, required=True
    ),
    Arg("--report", "The run's final report.", metavar="FILE", complete="file"),
    Arg(
        "--data",
        "The run's report data (data.json): checked against the run and kept in the task, "
        "where the next run of the phase compares with it (incremental scope). A --report "
        "that is report data counts as this.",
        metavar="FILE",
        complete="file",
    ),
    Arg(
        "--remote",
        "Finish the run on the task as this remote holds it and publish the finish at once "
        "(as run start --remote publishes the start), so other clones see the phase move on.",
        metavar="REMOTE",
        complete="remote",
    ),
)
def finish(
    key: str,
    task_type: str,
    seq: str,
    status: str,
    report: str | None,
    data: str | None,
    remote: str | None,
) -> Output:
    from ..services import runs
    from ..services.context import open_context
    from ..services.status import next_for
    from ..views.run import finished

    ctx = open_context()
    task_key = ctx.key(key)
    if remote is not None:
        state, record = runs.finish_run_shared(
            ctx, remote, task_key, task_type, seq, status, report, data
        )
    else:
        state, record = runs.finish_run(ctx, task_key, task_type, seq, status, report, data)
    return finished(state, record, remote, next_for(ctx, task_key))
