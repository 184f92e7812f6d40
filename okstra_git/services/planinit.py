"""``plan init``: write the plan skeleton (``logic/planskeleton.py``) for a task, never over an
existing file."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import BadInput, Refused
from ..core.keys import TaskKey
from ..core.userfiles import write_atomic
from ..logic.planskeleton import skeleton
from .context import Context


def default_path(ctx: Context, key: TaskKey) -> Path:
    """``plans/<task id>.md`` at the top of the work tree."""
    if ctx.workdir is None:
        raise BadInput(f"{ctx.repo.git_dir} is a bare repository: plans live in a work tree")
    return ctx.workdir / "plans" / f"{key.id_slug}.md"


def init_plan(ctx: Context, key: TaskKey, file: str | None) -> Path:
    """Write the skeleton for ``key`` to ``file`` (default :func:`default_path`), making missing
    folders; refuse a file that exists."""
    path = Path(file) if file is not None else default_path(ctx, key)
    if path.exists():
        raise Refused(f"{path} exists; plan init writes a new file only — name another FILE")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, skeleton(str(key)).encode("utf-8"), "plan", new=True)
    return path
