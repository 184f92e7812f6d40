"""What ``incremental scope KEY`` prints (the decision, and the command that carries the rest)
and what ``incremental carry`` prints."""

from __future__ import annotations

from ..core.shell import okstra
from ..logic.incremental import INCREMENTAL
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..services.incremental import TaskScope


def scope(data: dict[str, Any]) -> Output:
    """``incremental scope``: the decision, its JSON as the text too (what a script reads)."""
    import json

    return Output(data, json.dumps(data, ensure_ascii=False))


def scope_data(scope: TaskScope) -> dict[str, Any]:
    """The decision as ``--json`` gives it (snake_case, as the file-based form's), with the run,
    the previous one, and the ``incremental carry`` command when there is something to carry."""
    out = {
        **scope.decision.to_cli(),
        "task_type": scope.run.task_type,
        "seq": scope.run.seq,
        "prev_seq": scope.prev_seq,
        "prev_data": scope.prev_data,
    }
    data = scope.run.paths.get("data")
    if scope.decision.mode == INCREMENTAL and scope.prev_data and scope.prev_seq and data:
        out["carry_command"] = okstra(
            "incremental", "carry", "--prev-data", scope.prev_data, "--cur-data", data,
            "--prev-seq", scope.prev_seq, "--out", data,
        )  # fmt: skip
    return out


def carried(count: int, prev_seq: str, out: str) -> Output:
    """How many plan items ``incremental carry`` brought forward, and where it wrote them."""
    return Output(
        {"carried": count, "prevSeq": prev_seq, "out": out},
        f"merged {count} carried-forward plan item(s) from seq {prev_seq} -> {out}",
    )
