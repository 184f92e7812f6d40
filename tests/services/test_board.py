"""``git okstra board``: the data it gathers, the page it writes, the address it serves on.

The graph's layout is tests/views/test_board_view.py; the page in a real browser (and the
served board) tests/views/test_board_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from board_world import DEPENDS, HOSTILE_TITLE, MARKUP, PLAIN, STATES, USER, WORK, in_flight
from conftest import git, isolate_git, okstra

from okstra_git.core.errors import BadInput
from okstra_git.services.board import build_board
from okstra_git.services.boardserve import parse_address
from okstra_git.services.context import open_context
from okstra_git.services.tasks import task_log
from okstra_git.views.board import data as board_data
from okstra_git.views.board import render, stage_state

# On one worker of a parallel run: one board world (module-scoped), built once.
pytestmark = pytest.mark.xdist_group("test_board")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(tmp_path_factory.mktemp("home"), mp)
        yield in_flight(tmp_path_factory.mktemp("board"))


def board_of(repo: Path) -> dict:
    return board_data(build_board(open_context(repo)))


def test_every_task_and_stage_with_its_state_holder_and_lease(world: Path):
    data = board_of(world)
    assert [t["taskKey"] for t in data["tasks"]] == sorted([PLAIN, WORK, MARKUP])
    work = next(t for t in data["tasks"] if t["taskKey"] == WORK)
    stages = {s["stage"]: s for s in work["stages"]}
    assert {n: stage_state(s) for n, s in stages.items()} == STATES
    assert {n: s["dependsOn"] for n, s in stages.items()} == DEPENDS
    assert stages[2]["state"] == "expired"  # shown as started, its lease as expired
    holders = [(stages[n]["holder"]["user"], stages[n]["holder"]["runId"]) for n in (1, 2)]
    assert holders == [(USER, "implementation-001"), (USER, "implementation-002")]
    assert stages[3]["holder"] is None and stages[4]["holder"] is None
    assert stages[1]["merged"] is True
    assert work["plan"]["approved"] is True
    # This clone holds the expired claim of stage 2, so next renews it (docs/workflow.md).
    assert work["next"]["argv"][:6] == ["git", "okstra", "stage", "renew", WORK, "--stage"]
    log = git(world, "log", "--first-parent", "--format=%H %s", "refs/okstra/tasks/g/work")
    assert [f"{e['commit']} {e['summary']}" for e in work["events"]] == log.splitlines()[:5]
    newest = task_log(open_context(world), open_context(world).key(WORK), 2)
    assert [f"{e.commit} {e.summary}" for e in newest] == log.splitlines()[:2]
    task_worktree = world.parent / "wt" / "p" / "g" / "work" / "task"
    assert work["taskWorktree"]["head"] == git(task_worktree, "rev-parse", "HEAD")
    plain = next(t for t in data["tasks"] if t["taskKey"] == PLAIN)
    assert plain["plan"] is None and plain["stages"] == []


def test_the_page_draws_each_depends_on_as_an_edge_and_keeps_values_inert(world: Path):
    page = render(board_of(world))
    work = page[page.index(f'<article class="task" id="t3" data-key="{WORK}"') :]
    work = work[: work.index("</article>")]
    edges = set(re.findall(r'class="edge" data-from="(\d+)" data-to="(\d+)"', work))
    assert edges == {(str(d), str(n)) for n, deps in DEPENDS.items() for d in deps}
    nodes = re.findall(r'<g class="node [^"]*" data-stage="(\d+)" data-state="(\w+)"', work)
    assert nodes == [(str(n), state) for n, state in STATES.items()]
    rows = re.findall(r'<tr data-stage="(\d+)" data-state="(\w+)"', work)
    assert rows == nodes
    assert HOSTILE_TITLE not in page and "&lt;img src=x" in page
    assert "<b>x</b>" not in page and "p:g:&lt;b&gt;x&lt;/b&gt;" in page
    assert page.count("<script>") == 1


def test_the_content_security_policy_names_the_page_s_own_script_and_style(world: Path):
    page = render(board_of(world))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    script = re.search(r"<script>(.*)</script>", page, re.S).group(1)
    style = re.search(r"<style>(.*)</style>", page, re.S).group(1)

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(script)}'" in policy
    assert f"style-src 'sha256-{digest(style)}'" in policy
    assert "default-src 'none'" in policy and "connect-src" not in policy
    assert "connect-src 'self'" in render(board_of(world), version="1-x", live="/version")
    assert ' style="' not in page  # an inline style attribute would need 'unsafe-inline'


def test_the_cli_writes_the_page_and_names_what_it_wrote(world: Path, tmp_path: Path):
    proc = okstra(world, "board", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["tasks"] == 3
    assert Path(out["out"]) == world / ".okstra" / "board.html"
    assert Path(out["out"]).stat().st_size == out["bytes"]
    page = tmp_path / "one.html"
    proc = okstra(world, "board", "--task", WORK, "--out", str(page))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote the board of 1 task to {page}\n"
    assert page.read_text().count('<article class="task"') == 1


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("--task", "p:g:nope"), 1, "no task p:g:nope"),
        (("127.0.0.1:9",), 2, "ADDRESS is where --serve listens"),
        (("--serve", "--out", "x.html"), 2, "give one of them"),
        (("--serve", "localhost:http"), 2, "expected ADDR:PORT"),
        (("--fetch", "nowhere"), 2, "nowhere"),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(
    world: Path, args: tuple[str, ...], code: int, said: str
):
    proc = okstra(world, "board", *args)
    assert proc.returncode == code and said in proc.stderr, proc.stderr


def test_a_forged_fetched_claim_is_never_shown(world: Path):
    """A remote's claim ref whose record is not one okstra wrote (here: another stage's) is left
    out, as sync would refuse to adopt it; the board still builds."""
    commit = git(world, "rev-parse", "refs/okstra/claims/g/work/stage-1")
    git(world, "update-ref", "refs/okstra-remotes/origin/claims/g/work/stage-3", commit)
    git(world, "remote", "add", "origin", str(world))
    try:
        work = next(t for t in board_of(world)["tasks"] if t["taskKey"] == WORK)
        stage_3 = next(s for s in work["stages"] if s["stage"] == 3)
        assert stage_3["holder"] is None and "fetchedFrom" not in stage_3
        assert work["next"]["argv"] == ["git", "okstra", "sync", "origin"]  # the lag is said
    finally:
        git(world, "update-ref", "-d", "refs/okstra-remotes/origin/claims/g/work/stage-3")
        git(world, "remote", "remove", "origin")


def test_a_task_only_a_fetch_brought_is_listed_apart_with_the_sync_that_brings_it(world: Path):
    assert okstra(world, "task", "new", "p:g:elsewhere", "--type", "error-analysis").returncode == 0
    commit = git(world, "rev-parse", "refs/okstra/tasks/g/elsewhere")
    git(world, "update-ref", "refs/okstra-remotes/origin/tasks/g/elsewhere", commit)
    git(world, "update-ref", "-d", "refs/okstra/tasks/g/elsewhere")
    git(world, "update-ref", "refs/okstra-remotes/origin/tasks/g/forged", commit)  # not its key
    git(world, "remote", "add", "origin", str(world))
    try:
        data = board_of(world)
        assert [t["taskKey"] for t in data["tasks"]] == sorted([PLAIN, WORK, MARKUP])
        assert data["fetchedOnly"] == [
            {
                "remote": "origin",
                "ref": "refs/okstra/tasks/g/elsewhere",
                "taskKey": "p:g:elsewhere",
            },
            {"remote": "origin", "ref": "refs/okstra/tasks/g/forged", "taskKey": None},
        ]
        page = render(data)
        assert "<code>p:g:elsewhere</code> <code>refs/okstra/tasks/g/elsewhere</code>" in page
        assert page.count("<code>git okstra sync origin</code></li>") == 2
    finally:
        for name in ("elsewhere", "forged"):
            git(world, "update-ref", "-d", f"refs/okstra-remotes/origin/tasks/g/{name}")
        git(world, "remote", "remove", "origin")


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [("127.0.0.1:8765", "127.0.0.1", 8765), (":0", "127.0.0.1", 0), ("9000", "127.0.0.1", 9000),
     ("[::1]:80", "::1", 80), ("0.0.0.0:8080", "0.0.0.0", 8080)],
)  # fmt: skip
def test_addresses(text: str, host: str, port: int):
    found = parse_address(text)
    assert (found.host, found.port) == (host, port)


@pytest.mark.parametrize(
    "text", ["", "host:", "host:99999", "host:８０", "a b:8", "[::1]", "x/y:1"]
)
def test_bad_addresses_say_what_was_expected(text: str):
    with pytest.raises(BadInput, match="board --serve at"):
        parse_address(text)


def test_a_served_board_says_where_it_listens_why_it_rebuilt_and_what_fetching_failed(
    world: Path, tmp_path: Path
):
    """``board --serve``'s lines as it goes (the service tells typed steps, views/board.py
    words them) and the problem a failed fetch adds to the page, served in this process: a ref
    moved after the first build rebuilds the page for that reason."""
    from okstra_git.services.boardserve import Address, BoardServer, Serving
    from okstra_git.views.board import serving

    said: list[str] = []
    shown: list[list[str]] = []

    def say(event: object) -> None:
        said.append(serving(event))  # type: ignore[arg-type]
        if isinstance(event, Serving):
            git(world, "update-ref", "refs/test/board-moved", "HEAD")
        else:
            raise KeyboardInterrupt  # what Ctrl-C raises: the server stops

    def page(board: object, version: str, fetching: object) -> bytes:
        shown.append(board_data(board, fetching)["problems"])  # type: ignore[arg-type]
        return version.encode()

    nowhere = str(tmp_path / "no-such-remote")
    server = BoardServer(
        str(world), None, Address("127.0.0.1", 0), page, "", say, remote=nowhere
    )  # fmt: skip
    try:
        server.serve()
    finally:
        git(world, "update-ref", "-d", "refs/test/board-moved")
    assert said == [
        f"serving the board at {server.url} (read-only; Ctrl-C stops it)",
        "rebuilt the board (the refs changed): build 2",
    ]
    assert len(shown) == 2
    for problems in shown:
        assert re.fullmatch(
            rf"fetching from {re.escape(nowhere)} failed at \d\d:\d\d:\d\d: .+", problems[-1]
        ), problems


def test_each_reason_a_served_board_rebuilds_for_has_its_words():
    from okstra_git.services.boardserve import Rebuilt
    from okstra_git.views.board import REBUILT_BECAUSE, serving

    assert serving(Rebuilt("lease", 3)) == "rebuilt the board (a lease ran out): build 3"
    assert serving(Rebuilt("fetch-failed", 4)) == "rebuilt the board (fetching failed): build 4"
    assert serving(Rebuilt("fetch-works", 4, "boom")) == (
        "could not rebuild the board (fetching works again): boom"
    )
    assert set(REBUILT_BECAUSE) == {"refs", "lease", "fetch-failed", "fetch-works"}


def test_a_clone_without_the_task_branch_shows_stages_merged_on_the_published_one(
    tmp_path: Path,
):
    """A board read in a clone that has not taken the task branch in (a planner's, a person's)
    showed every integrated stage 'not merged', in red, and counted none merged: it judged the
    task worktree this clone does not have. The published task branch holds them."""
    from plans import plan_text
    from team_world import KEY, Team, approve_here, run_json, stage_report, work_on

    team = Team.make(tmp_path)
    ann = team.clone("ann", "Ann")
    approve_here(ann, plan_text([(1, [], ["src/one.py"])]))
    run_json(ann, "sync", "origin")
    claimed = run_json(ann, "stage", "claim", KEY, "--remote", "origin")
    work_on(Path(claimed["placements"][0]["worktreePath"]), 1, "Ann")
    report = stage_report(ann, 1, "Ann")
    run_json(ann, "stage", "done", KEY, "--stage", "1", "--report", report, "--remote", "origin")
    run_json(ann, "integrate", KEY, "--remote", "origin")
    ben = team.clone("ben", "Ben")
    run_json(ben, "sync", "origin")
    (stage,) = next(t for t in board_of(ben)["tasks"] if t["taskKey"] == KEY)["stages"]
    assert stage["merged"] is False and stage["integrated"] is True
    assert stage_state(stage) == "merged"
    page = render(board_of(ben))
    assert 'merged <span class="k">(published task branch)</span>' in page
    assert "not merged" not in page


def test_a_gate_config_that_cannot_be_read_is_the_board_s_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The service hands the config's error (Board.protect_unknown); views/board.py words it
    among the board's problems, as the service did."""
    (tmp_path / "home").mkdir()
    isolate_git(tmp_path / "home", monkeypatch)
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    git(repo, "config", "okstra.protect", "main.")
    board = build_board(open_context(repo))
    assert board.protected == [] and board.protect_unknown is not None
    assert board_data(board)["problems"] == [
        f"the protected branches are not known: {board.protect_unknown}"
    ]
    assert "would protect nothing" in board.protect_unknown
