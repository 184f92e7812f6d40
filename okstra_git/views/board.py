"""The board as one self-contained HTML page (docs/security.md), from the plain data
:func:`data` makes of ``services.board``'s :class:`Board`. Pure: no repository here.

Everything is written into the page — every task, its Stage Map drawn as an SVG graph laid
out here (a column per depth, an edge per depends-on), its stages, holders, leases, branch,
verdict, events and ``next`` — so it reads without JavaScript. The one inline script (filters
by phase and holder, search by key; when served, a reload once the board was rebuilt) and the
one inline style run under a Content-Security-Policy that names their hashes and allows no
other source, as the report view does (``reports.render``): nothing is fetched, nothing a
record holds can run.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from typing import Any

from ..core.shell import command
from . import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ..services.board import Board, BoardTask
    from ..services.boardserve import FetchProblem, Rebuilt, Request, Serving

STATES = ("blocked", "ready", "started", "done", "merged")
"""A stage's colour on the board: ``started`` includes a claim whose lease expired (shown as
such), ``merged`` a done stage whose commit the task worktree holds — or the published task
branch does (the team's state, in a clone that has not taken that branch in yet)."""

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 176, 40, 40, 12, 2
"""Stage Map graph geometry, in pixels."""
BRANCH_WORDS = {
    "same": "in step with this clone's",
    "ahead": "this clone's has more, not published yet",
    "behind": "the published one has more",
    "diverged": "diverged from this clone's",
    "missing-here": "this clone has none yet",
}
"""The task branch here against a remote's published one (``branches.task_branch_against``)."""
TITLE_CHARS = 23
"""A node's title is cut to this many characters (the full title is its tooltip)."""


def written(target: Path, count: int, size: int) -> Output:
    """``board``: where the page was written, of how many tasks."""
    return Output(
        {"out": str(target), "tasks": count, "bytes": size},
        f"wrote the board of {count} task{'' if count == 1 else 's'} to {target}",
    )


REBUILT_BECAUSE = {
    "refs": "the refs changed",
    "lease": "a lease ran out",
    "fetch-failed": "fetching failed",
    "fetch-works": "fetching works again",
}
"""Why ``board --serve`` built the page again (``services.boardserve.Rebuilt.reason``)."""


def serving(event: Serving | Rebuilt) -> str:
    """``board --serve``'s line for each step as it serves: where it listens, then each
    rebuild (or why one failed; the last page stays up)."""
    from ..services.boardserve import Serving

    if isinstance(event, Serving):
        return f"serving the board at {event.url} (read-only; Ctrl-C stops it)"
    because = REBUILT_BECAUSE[event.reason]
    if event.error is not None:
        return f"could not rebuild the board ({because}): {event.error}"
    return f"rebuilt the board ({because}): build {event.build}"


def request_line(request: Request) -> str:
    """``board --serve``'s line for a request it answered (under ``OKSTRA_DEBUG=1``)."""
    return f"board: {request.client} {request.line}"


def fetch_problem(problem: FetchProblem) -> str:
    """The board's problem line when fetching from the remote it follows failed."""
    return f"fetching from {problem.remote} failed at {problem.at}: {problem.error}"


def served(url: str, builds: int) -> Output:
    """``board --serve``, once stopped: where it served, how many times it built the page."""
    return Output({"url": url, "builds": builds}, f"stopped serving the board at {url}")


def data(board: Board, fetching: FetchProblem | None = None) -> dict[str, Any]:
    """The board's plain data: what the page is laid out from (each task as ``task status
    --json`` gives it, with its events, task branch and the branches carrying its verdict);
    ``fetching``: why the last fetch of a served board failed, the last of its problems."""
    return {
        "repository": board.repository,
        "generatedAt": board.generated_at,
        "tasks": [_task_data(task) for task in board.tasks],
        "fetchedOnly": [
            {"remote": f.remote, "ref": f.ref, "taskKey": f.task_key} for f in board.fetched_only
        ],
        "remotes": board.remotes,
        "protected": board.protected,
        "problems": [*problems(board), *([fetch_problem(fetching)] if fetching else [])],
    }


def problems(board: Board) -> list[str]:
    """What could not be read for the whole board: the gate's config (so no protected branch
    is known)."""
    unknown = board.protect_unknown
    return [] if unknown is None else [f"the protected branches are not known: {unknown}"]


def _task_data(task: BoardTask) -> dict[str, Any]:
    from .status import data as status_data
    from .task import event_data

    if task.status is None:
        return {"taskKey": task.key, "error": task.error}
    from ..logic.reports.stored import report_view

    shown = status_data(task.status)
    for stage in shown["stages"]:
        stored = task.reports.get(stage["stage"])
        stage.update(report_view(*stored) if stored else report_view(None, None))
    shown["events"] = [event_data(event) for event in task.events]
    shown["taskBranch"] = [
        {"remote": remote, "local": b.local, "published": b.remote, "state": b.state}
        for remote, b in task.branches
    ]
    if shown["verdict"] is not None:
        shown["verdict"]["carriedBy"] = task.carriers
    return shown


def stage_state(stage: dict[str, Any]) -> str:
    """The board's state of a ``task status`` stage (one of :data:`STATES`)."""
    state = stage["state"]
    if state == "expired":
        return "started"
    if state == "done" and (stage["merged"] or stage.get("integrated")):
        return "merged"
    return state


def holder_label(holder: dict[str, Any]) -> str:
    """``user on host`` and, when the claim recorded one, its clone."""
    label = f"{holder['user']} on {holder['host']}"
    return f"{label} (clone {holder['clone']})" if holder.get("clone") else label


def _short_user(user: str) -> str:
    name = user.split(" <", 1)[0]
    return name or user


def graph(stages: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each stage of a Stage Map is drawn, and its depends-on edges (a layered layout).

    A stage's column is its depth (the longest chain of dependencies below it), so every edge
    points right. An edge that spans columns passes through a free slot in each column between
    (a slot no stage takes), so it never runs under a stage. Within a column, stages and slots
    sit in the order of the rows they come from, then by number.
    """
    numbers = [s["stage"] for s in stages]
    known = set(numbers)
    deps = {
        s["stage"]: [d for d in dict.fromkeys(s["dependsOn"]) if d in known and d != s["stage"]]
        for s in stages
    }
    column = dict.fromkeys(numbers, 0)
    for _ in range(len(numbers)):  # longest path; a cycle (never stored) stops at the bound
        changed = False
        for n in numbers:
            depth = max((column[d] + 1 for d in deps[n]), default=0)
            if column[n] < depth < len(numbers):
                column[n], changed = depth, True
        if not changed:
            break
    # Every cell of the layout: a stage (its number) or an edge's slot (from, to, column).
    Cell = int | tuple[int, int, int]
    before: dict[Cell, Cell | None] = {}
    cells: dict[int, list[Cell]] = {c: [] for c in range(max(column.values(), default=-1) + 1)}
    chains: list[tuple[int, int, list[Cell]]] = []
    for n in sorted(numbers, key=lambda n: (column[n], n)):
        cells[column[n]].append(n)
        for d in deps[n]:
            chain: list[Cell] = []
            previous: Cell = d
            for c in range(column[d] + 1, column[n]):
                slot = (d, n, c)
                cells[c].append(slot)
                before[slot] = previous
                chain.append(slot)
                previous = slot
            chains.append((d, n, chain))
    row: dict[Cell, int] = {}
    for c in sorted(cells):

        def order(cell: Cell) -> tuple[float, int, int]:
            if isinstance(cell, int):
                placed = [row[d] for d in deps[cell] if d in row]
                return (sum(placed) / len(placed) if placed else -1.0, 0, cell)
            came = before[cell]
            return (float(row[came]) if came in row else -1.0, 1, cell[1])

        cells[c].sort(key=order)
        for index, cell in enumerate(cells[c]):
            row[cell] = index

    def left(cell: Cell) -> tuple[int, int]:
        c = column[cell] if isinstance(cell, int) else cell[2]
        return PAD + c * (NODE_W + GAP_X), PAD + row[cell] * (NODE_H + GAP_Y) + NODE_H // 2

    edges = []
    for d, n, chain in chains:
        x, y = left(d)
        path = f"M{x + NODE_W} {y}"
        x += NODE_W
        for cell in [*chain, n]:
            x2, y2 = left(cell)
            mid = (x + x2) // 2
            end = x2 - 6 if cell == n else x2
            path += f"C{mid} {y} {mid} {y2} {end} {y2}"
            if cell != n:
                path += f"H{x2 + NODE_W}"
            x, y = x2 + NODE_W, y2
        edges.append({"from": d, "to": n, "d": path})
    at = {n: (left(n)[0], left(n)[1] - NODE_H // 2) for n in numbers}
    tallest = max((len(c) for c in cells.values()), default=0)
    return {
        "at": at,
        "edges": edges,
        "width": PAD * 2 + len(cells) * (NODE_W + GAP_X) - GAP_X if cells else 0,
        "height": PAD * 2 + tallest * (NODE_H + GAP_Y) - GAP_Y if cells else 0,
    }


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _next_line(step: dict[str, Any]) -> str | None:
    """The next step's command as one shell line: ``command`` as ``task status`` gives it, or
    its ``argv`` run in ``cwd``."""
    if step.get("command"):
        return str(step["command"])
    argv = step.get("argv")
    if not argv:
        return None
    line = command(*argv)
    cwd = step.get("cwd")
    return f"cd {command(cwd)} && {line}" if cwd else line


class _Holders:
    """The holders on the board, each with a short id the filter and the page's rows share."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, str], str] = {}
        self.labels: dict[str, str] = {}

    def id_of(self, holder: dict[str, Any]) -> str:
        who = (holder["user"], holder["host"], str(holder.get("clone") or ""))
        if who not in self.ids:
            found = self.ids[who] = f"h{len(self.ids) + 1}"
            self.labels[found] = holder_label(holder)
        return self.ids[who]


def _stage(stage: dict[str, Any], holders: _Holders) -> dict[str, Any]:
    from ..logic.mdinline import markdown_text

    holder = stage["holder"]
    title = markdown_text(stage["title"])  # the graph's label: the title as the table shows it
    state = stage_state(stage)
    expired = stage["state"] == "expired"
    who = holder_label(holder) if holder else ""
    sub = state if not expired else "lease expired"
    label = _clip(f"{stage['stage']} · {title}", TITLE_CHARS)
    if holder:
        sub += " · " + _short_user(holder["user"])
    return {
        **stage,
        "board_state": state,
        "expired": expired,
        "holder_id": holders.id_of(holder) if holder else "",
        "who": who,
        "label": label,
        "sub": _clip(sub, TITLE_CHARS + 3),
        "tip": label != f"{stage['stage']} · {title}",
        "plain_title": title,
    }


def _task(task: dict[str, Any], holders: _Holders, index: int) -> dict[str, Any]:
    anchor = f"t{index}"
    if "error" in task:
        return {"key": task["taskKey"], "anchor": anchor, "error": task["error"], "phase": ""}
    stages = [_stage(s, holders) for s in task["stages"]]
    phase = task["phase"]
    done = phase["status"] == "done"
    counts = {state: 0 for state in STATES}
    for stage in stages:
        counts[stage["board_state"]] += 1
    return {
        **task,
        "key": task["taskKey"],
        "anchor": anchor,
        "phase_word": "done" if done else phase["current"],
        "stage_rows": stages,
        "counts": counts,
        "graph": graph(stages),
        "holder_ids": sorted({s["holder_id"] for s in stages if s["holder_id"]}),
        "next_line": _next_line(task["next"]),
        "expired": any(s["expired"] for s in stages),
    }


@functools.cache
def _assets() -> tuple[str, str, str, str]:
    """The page's script and style, and the CSP hash of each."""
    from ..core.resources import data_dir

    folder = data_dir("templates")
    script = (folder / "board.js").read_text("utf-8")
    style = (folder / "board.css").read_text("utf-8")
    return script, style, _hash(script), _hash(style)


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def csp(live: bool = False) -> str:
    """The page's Content-Security-Policy: its own script and style only, nothing fetched —
    except, served, the build id from its own server."""
    _, _, script_hash, style_hash = _assets()
    policy = (
        f"default-src 'none'; style-src '{style_hash}'; script-src '{script_hash}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return policy + ("; connect-src 'self'" if live else "")


def render(board: dict[str, Any], version: str = "", live: str = "") -> str:
    """The board page. ``live``: the path a served page polls for ``version``, the build it
    shows, to reload itself when the board was rebuilt (and the one place it may connect to)."""
    from markupsafe import Markup

    from ..logic.mdinline import markdown_html
    from ..logic.templates import render as render_template

    holders = _Holders()
    tasks = [_task(task, holders, n) for n, task in enumerate(board["tasks"], 1)]
    totals = {state: 0 for state in STATES}
    for task in tasks:
        for state, count in task.get("counts", {}).items():
            totals[state] += count
    script, style, _, _ = _assets()
    return render_template(
        "board.html.j2",
        board=board,
        tasks=tasks,
        states=STATES,
        totals=totals,
        phases=sorted({t["phase_word"] for t in tasks if t.get("phase_word")}),
        holders=sorted(holders.labels.items(), key=lambda item: item[1]),
        version=version,
        live=live,
        script=Markup(script),
        style=Markup(style),
        csp=Markup(csp(bool(live))),  # hashes and keywords only: no value of a record
        node=(NODE_W, NODE_H),
        branch_words=BRANCH_WORDS,
        inline=lambda text: Markup(markdown_html(text)),  # a plan's text: its inline Markdown
    )
