"""``git okstra board``: every task, stage, holder and verdict on one page."""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command, duration

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import timedelta

    from ..core.keys import TaskKey
    from ..services.boardserve import Request
    from ..services.context import Context


@command(
    "board",
    "Write every task, its Stage Map, holders, leases, branch, verdict and next step as one "
    "self-contained HTML page, or serve it.",
    Arg(
        "address",
        "Where --serve listens: HOST:PORT, [IPv6]:PORT or PORT (port 0: any free port). "
        "Default: 127.0.0.1:8765.",
        metavar="ADDRESS",
        optional=True,
    ),
    Arg(
        "--out",
        "The page to write. Default: .okstra/board.html in the work tree.",
        metavar="FILE",
        complete="file",
    ),
    Arg("--task", "Only this task.", metavar="KEY", repeat=True, complete="task"),
    Arg("--serve", "Serve the page read-only over HTTP instead, until Ctrl-C.", flag=True),
    Arg(
        "--fetch",
        "First fetch okstra's refs and notes from this remote (with --serve: every --interval).",
        metavar="REMOTE",
        complete="remote",
    ),
    Arg(
        "--interval",
        "How often --serve --fetch fetches.",
        metavar="DURATION",
        default="30s",
        convert=duration,
    ),
    about="Built from the records this clone has, local and fetched (a stage whose claim a "
    "fetch brought newer than this clone's record shows the fetched one), without network "
    "unless --fetch is given. Each task shows its phase, plan approval, its Stage Map as a "
    "graph coloured by stage state (blocked, ready, started, done, merged), each claim's holder "
    "and lease (an expired lease is shown as such), the task branch against each remote's "
    "published one, the latest verdict and the protected branches that carry it, its newest "
    "events and its next step, as `task status` gives it. The page reads without JavaScript; "
    "with it, tasks filter by phase and holder and search by key. Nothing in it is fetched and "
    "only its own script runs (a Content-Security-Policy names it).\n\n"
    "With --serve the page is rebuilt when a ref changes or a shown lease runs out, and reloads "
    "itself in the browser; the server answers GET and HEAD only, on 127.0.0.1 unless ADDRESS "
    "says otherwise. The fetches go into the remote-tracking namespaces only "
    "(refs/okstra-remotes/REMOTE/*): the board never changes this clone's records.",
)
def board(
    address: str | None,
    out: str | None,
    task: list[str],
    serve: bool,
    fetch: str | None,
    interval: timedelta,
) -> Output:
    from ..core.errors import BadInput
    from ..services.context import open_context

    ctx = open_context()
    keys = [ctx.key(text) for text in task] or None
    if fetch is not None:
        from ..services.sync.transport import check_remote

        check_remote(ctx.repo, fetch)
    if not serve:
        if address is not None:
            raise BadInput(f"board {address}: ADDRESS is where --serve listens; add --serve")
        return _write(ctx, keys, out, fetch)
    if out is not None:
        raise BadInput("board --serve serves the page; --out writes it: give one of them")
    import os
    import sys

    from ..services.boardserve import DEFAULT_ADDRESS, VERSION_PATH, BoardServer, parse_address
    from ..views.board import csp, data, render, request_line, served, serving

    def log(request: Request) -> None:
        sys.stderr.write(request_line(request) + "\n")

    server = BoardServer(
        str(ctx.repo.workdir or ctx.repo.git_dir),
        task or None,
        parse_address(address or DEFAULT_ADDRESS),
        page=lambda board, version, fetching: render(
            data(board, fetching), version, VERSION_PATH
        ).encode("utf-8"),
        csp=csp(live=True),
        say=lambda event: print(serving(event), flush=True),
        remote=fetch,
        interval=interval,
        log=log if os.environ.get("OKSTRA_DEBUG") == "1" else None,
    )
    server.serve()
    return served(server.url, server.builds)


def _write(ctx: Context, keys: list[TaskKey] | None, out: str | None, fetch: str | None) -> Output:
    from pathlib import Path

    from ..core.errors import BadInput
    from ..core.userfiles import write_atomic
    from ..services.board import build_board
    from ..views.board import data as board_data
    from ..views.board import render, written

    if fetch is not None:
        from ..services.sync.transport import fetch as fetch_refs

        fetch_refs(ctx.repo, fetch)
    if out is None:
        if ctx.workdir is None:
            raise BadInput("a bare repository has no .okstra/ folder: give --out FILE")
        target = ctx.workdir / ".okstra" / "board.html"
        target.parent.mkdir(parents=True, exist_ok=True)
    else:
        target = Path(out)
    data = board_data(build_board(ctx, keys))
    page = render(data).encode("utf-8")
    write_atomic(target, page, "board")
    return written(target, len(data["tasks"]), len(page))
