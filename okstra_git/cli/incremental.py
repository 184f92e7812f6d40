"""``git okstra incremental``: re-verify only what an answer touched (docs/workflow.md)."""

from __future__ import annotations

from ..core.keys import TASK_TYPES
from ..views import Output
from .declare import Arg, command, group

group(
    "incremental",
    "Incremental re-verification: which stages a re-run verifies, and carrying the rest.",
)


@command(
    "incremental scope",
    "Decide whether a re-run re-verifies every stage (full) or only the impacted ones.",
    Arg(
        "key",
        "The task: decide for its running run against the previous completed run of the "
        "phase, from the task's records, and record the decision on the run.",
        optional=True,
        complete="task",
    ),
    Arg("--prev-data", "Without KEY: the previous run's report data.", metavar="FILE",
        complete="file"),
    Arg("--cur-base-sha", "Without KEY: this run's base commit.", metavar="SHA"),
    Arg("--prev-base-sha", "Without KEY: the previous run's base commit.", metavar="SHA"),
    Arg("--impacted", "Stage Map stages the answers touch, comma-separated (none: full).",
        metavar="CSV"),
    Arg("--cutoff", "Full when the impacted closure covers more than this share of the stages.",
        metavar="RATIO", default="0.5"),
    Arg("--type", "With KEY: the run's phase (default: the task's latest run).",
        metavar="TYPE", choices=TASK_TYPES, dest="task_type"),
    Arg("--seq", "With KEY: the run (default: the latest running run of the phase).",
        metavar="SEQ"),
    about="Full is the default; the scope narrows only when the base commit is unchanged, the "
    "Stage Map sound, every impacted stage in it, and the downstream closure of the impacted "
    "stages within the cutoff. Prints {mode, reverify_stages, carry_stages, reason}; the same "
    "inputs always give the same decision.",
)  # fmt: skip
def scope(
    key: str | None,
    prev_data: str | None,
    cur_base_sha: str | None,
    prev_base_sha: str | None,
    impacted: str | None,
    cutoff: str,
    task_type: str | None,
    seq: str | None,
) -> Output:
    from ..core.errors import BadInput
    from ..logic.incremental import parse_cutoff, parse_impacted

    stages, ratio = parse_impacted(impacted or ""), parse_cutoff(cutoff)
    pure = {"--prev-data": prev_data, "--cur-base-sha": cur_base_sha,
            "--prev-base-sha": prev_base_sha}  # fmt: skip
    if key is not None:
        given = [name for name, value in pure.items() if value is not None]
        if given:
            raise BadInput(f"incremental scope: KEY reads the task's records; drop {given[0]}")
        from ..services.context import open_context
        from ..services.incremental import decide_for_task
        from ..views.incremental import scope_data

        ctx = open_context()
        data = scope_data(decide_for_task(ctx, ctx.key(key), stages, ratio, task_type, seq))
    else:
        missing = [name for name, value in pure.items() if value is None]
        if prev_data is None or cur_base_sha is None or prev_base_sha is None:
            raise BadInput(
                f"incremental scope: give KEY, or all of --prev-data, --cur-base-sha and "
                f"--prev-base-sha (missing {', '.join(missing)})"
            )
        if task_type is not None or seq is not None:
            raise BadInput("incremental scope: --type and --seq name a run of KEY")
        from ..services.incremental_files import decide_from_file

        data = decide_from_file(prev_data, cur_base_sha, prev_base_sha, stages, ratio).to_cli()
    from ..views.incremental import scope

    return scope(data)


@command(
    "incremental carry",
    "Carry the previous run's plan items this run did not re-verify into its report data.",
    Arg("--prev-data", "The previous run's report data.", metavar="FILE", required=True,
        complete="file"),
    Arg("--cur-data", "This run's report data.", metavar="FILE", required=True, complete="file"),
    Arg("--prev-seq", "The previous run's number; carried items are tagged with it.",
        metavar="SEQ", required=True),
    Arg("--out", "Where to write the merged data (atomically; may be --cur-data).",
        metavar="FILE", required=True, complete="file"),
    about="Items are tagged carriedForwardFromSeq and sorted by id; nothing else of the previous "
    "data (never its verdict card or final verdict) is carried. A schemaVersion mismatch "
    "refuses (exit 1): re-verify in full instead.",
)  # fmt: skip
def carry(prev_data: str, cur_data: str, prev_seq: str, out: str) -> Output:
    from ..services.incremental_files import carry_files
    from ..views.incremental import carried

    return carried(carry_files(prev_data, cur_data, prev_seq, out), prev_seq, out)
