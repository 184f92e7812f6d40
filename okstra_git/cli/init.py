"""``git okstra init``: record okstra's settings in the repository config."""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command, lease

TYPE_CHECKING = False  # typing is for the type checker: it costs every command ~3 ms
if TYPE_CHECKING:
    from datetime import timedelta


@command(
    "init",
    "Record okstra settings; with --remote, make plain `git fetch` bring okstra data.",
    Arg("--project-id", "okstra.projectId: the first part of task keys.", metavar="ID"),
    Arg(
        "--worktree-root",
        "okstra.worktreeRoot: stage worktrees go under it.",
        metavar="PATH",
        complete="dir",
    ),
    Arg("--protect", "okstra.protect: a ref glob the gate protects.", metavar="GLOB", repeat=True),
    Arg(
        "--remote",
        "Add fetch refspecs for okstra refs and notes to this remote.",
        metavar="REMOTE",
        complete="remote",
    ),
    Arg("--hooks", "Install the pre-push hook (as `git okstra hooks install`).", flag=True),
    Arg(
        "--lease",
        "okstra.claim.lease: the lease of every claim that names none ('none': no lease). "
        "Default: 2h when unset.",
        metavar="DURATION",
        convert=lease,
    ),
)
def init(
    project_id: str | None,
    worktree_root: str | None,
    protect: list[str],
    remote: str | None,
    hooks: bool,
    lease: timedelta | str | None,
) -> Output:
    from ..services import setup
    from ..services.context import open_context
    from ..views.init import configured

    ctx = open_context()
    changes = setup.init(ctx, project_id, worktree_root, protect, remote, hooks, lease)
    unshared = setup.unshared_remote(ctx) if remote is None and changes else None
    shares = unshared is not None and setup.shares_tasks(ctx, unshared)
    return configured(
        changes,
        ctx.default_project,
        remote,
        ctx.clone_dir,
        unshared,
        shares,
        setup.identity_unset(ctx),
    )
