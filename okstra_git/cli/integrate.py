"""``git okstra integrate``: merge the done stages into the one published task branch."""

from __future__ import annotations

from ..views import Output
from .declare import KEY, Arg, command


@command(
    "integrate",
    "Bring the task worktree to the published task branch, merge every done stage it lacks "
    "(in dependency order, one merge commit per stage), then publish it with a lease.",
    KEY,
    Arg(
        "--remote",
        "The remote the task is shared through (default: the one holding the task).",
        metavar="REMOTE",
        complete="remote",
    ),
    about="The task branch is published like a claim: the task event recording what was "
    "integrated at which commit and the branch itself land in one atomic push, each leased on "
    "what the fetch saw. When another clone integrated first, this one starts over on its "
    "head. A merge that conflicts stays in the task worktree and nothing is published: the "
    "refusal prints the commands that finish it (commit, then integrate again) or abort it. "
    "The task worktree is made when this clone has none.",
)
def integrate(key: str, remote: str | None) -> Output:
    from ..services import integrate as service
    from ..services.context import open_context
    from ..services.status import next_for
    from ..views.integrate import integrated

    ctx = open_context()
    task_key = ctx.key(key)
    done = service.integrate(ctx, task_key, remote)
    return integrated(done, next_for(ctx, task_key))
