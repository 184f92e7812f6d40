"""Whose a claim is: this clone's or another's (docs/workflow.md).

Its own module, light on imports, for the read commands (``task show``, ``stage list``,
``task status``) that ask it of every claim they show: importing it from ``claims/`` loaded that
package's whole claim, done and release machinery (runs, worktrees, …) on every read.
"""

from __future__ import annotations

from pathlib import Path

from ..core.keys import parse_task_key
from ..core.machine import hostname
from ..git.worktrees import worktree_at
from ..records.claim import Claim
from .context import Context
from .identity import clone_id
from .layout import Layout


def is_ours(ctx: Context, lay: Layout | None, claim: Claim) -> bool:
    """Whether ``claim`` belongs to this clone: it records this clone's id (docs/workflow.md). A
    claim written before clones had ids is this clone's when its worktree is one this repository
    registered, or (gone, or never made) it was taken on this host at this clone's own folder for
    the stage (``lay``: the task's layout, worked out here when None) — clones never share a
    worktree folder. Only such a claim is offered for resuming or releasing here, renewed or marked
    done; another clone's (another machine's, or a clone beside this one) is that clone's."""
    if claim.clone is not None:
        return claim.clone == clone_id(ctx.repo)
    path = Path(claim.worktree_path) if claim.worktree_path else None
    if path is not None and worktree_at(ctx.repo, path) is not None:
        return True
    if claim.host != hostname():
        return False
    if lay is None:
        from .layout import layout

        lay = layout(ctx, parse_task_key(claim.task_key))
    return path is None or path == lay.stage_path(claim.stage)
