"""What ``git okstra init`` prints: each setting it changed, and what a clone does next."""

from __future__ import annotations

from ..core.shell import okstra
from . import Output


def configured(changes: dict[str, str], project_id: str | None, remote: str | None) -> Output:
    """One ``name = value`` line a setting changed, then (the first time) the next commands:
    bring the tasks ``remote`` shares, or make the first one."""
    # What a clone does next: bring the tasks its remote shares, or make the first one.
    then = [okstra("sync", remote), okstra("task", "list")] if remote else []
    then.append(okstra("task", "new", "KEY", "--type", "TYPE"))
    lines = [f"{k} = {v}" for k, v in changes.items()] or ["nothing to change"]
    # Run again with nothing to change, it said what comes next the first time already.
    if changes and remote:
        lines.append(f"next: bring the tasks {remote} shares: {then[0]}, then {then[1]}")
        lines.append(f"  or start a task: {then[2]} (the types: git okstra task new -h)")
    elif changes:
        lines.append(f"next: start a task: {then[0]} (the types: git okstra task new -h)")
    return Output(
        {"config": changes, "projectId": project_id, "then": then},
        "\n".join(lines),
    )
