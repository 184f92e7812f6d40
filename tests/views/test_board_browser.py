"""The board in a real headless browser: Debian's chromium driven by Playwright (as
tests/views/test_report_browser.py drives the report view).

The demo's board (``git okstra demo`` writes it last) shows every stage with the state and the
holder the demo gave it, the graph's edges are the Stage Maps' depends-on, filtering works, no
console error, no request leaves the page; it reads without JavaScript too. A served board
changes within seconds of a claim another clone makes through the remote, after the fetch the
server makes; it answers reads only and stops on Ctrl-C. Set ``OKSTRA_UPDATE_SCREENSHOT=1`` to
refresh ``docs/board.png``.
"""

from __future__ import annotations

import http.client
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from board_world import HOSTILE_TITLE, MARKUP, PLAIN, WORK, in_flight
from conftest import isolate_git, okstra
from pagewords import SPLIT_WORDS
from team_world import FOUR_STAGES, KEY, Team

from okstra_git.logic.stagemap import parse_plan
from okstra_git.services.demo.incremental import STAGES as DIV_STAGES
from okstra_git.services.demo.plans import PLAN as ADD_MUL_PLAN

# On one worker of a parallel run: one chromium and one board world (module-scoped), started once.
pytestmark = pytest.mark.xdist_group("test_board_browser")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ADD_MUL, DIV = "demo:calc:add-mul", "demo:calc:div"
USER, AGENT = "Demo User <demo@example.invalid>", "Demo Agent <agent@example.invalid>"
# What the demo does: add-mul's four stages are done and merged (stage 4 by the agent's
# clone); div's stage 1 is claimed here, stage 2 by the agent through the remote.
DEMO_STAGES = {
    ADD_MUL: {1: ("merged", USER), 2: ("merged", USER), 3: ("merged", USER), 4: ("merged", AGENT)},
    DIV: {1: ("started", USER), 2: ("started", AGENT), 3: ("blocked", ""), 4: ("blocked", "")},
}

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
if not Path(CHROMIUM).is_file():
    pytest.skip(
        f"no chromium at {CHROMIUM}: install it with `apt-get install -y chromium` "
        "(.ci/run does); Playwright's own browser download is not reachable",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The board the demo wrote."""
    root = tmp_path_factory.mktemp("demo") / "world"
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(tmp_path_factory.mktemp("home"), mp)
        proc = okstra(root.parent, "demo", "--dir", str(root))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        yield root / "calc" / ".okstra" / "board.html"


class Page:
    """An opened page and everything it did that it must not: console errors, uncaught
    exceptions and requests anywhere but ``allowed``."""

    def __init__(self, browser: Any, url: str, allowed: str = "file:", **options: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
        self.view = self.context.new_page()
        self.errors: list[str] = []
        self.view.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.view.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.view.on(
            "request", lambda r: None if r.url.startswith(allowed) else self.errors.append(r.url)
        )
        self.view.goto(url)

    def article(self, key: str) -> Any:
        return self.view.locator(f'article.task[data-key="{key}"]')


@pytest.fixture
def demo_page(browser: Any, demo: Path) -> Iterator[Page]:
    page = Page(browser, demo.as_uri())
    yield page
    page.context.close()


def test_the_demo_board_shows_every_stage_with_its_state_and_holder(demo_page: Page):
    for key, stages in DEMO_STAGES.items():
        article = demo_page.article(key)
        for n, (state, holder) in stages.items():
            row = article.locator(f'table.stages tr[data-stage="{n}"]')
            node = article.locator(f'svg.map g.node[data-stage="{n}"]')
            assert row.get_attribute("data-state") == node.get_attribute("data-state") == state
            assert node.is_visible() and state in node.text_content()
            who = row.locator("td.holder").inner_text()
            assert who.startswith(f"{holder} on ") if holder else who == "-"
    # The agent's claim on div was only fetched: the board says so, and that a sync is next.
    div = demo_page.article(DIV)
    assert "(fetched from origin)" in div.locator('tr[data-stage="2"] td.holder').inner_text()
    assert " okstra sync origin" in div.locator(".next").inner_text()  # git -C <clone> okstra
    add_mul = demo_page.article(ADD_MUL)
    assert "carried by main, origin/main" in add_mul.locator(".facts").inner_text()
    assert demo_page.view.locator("#totals").inner_text().split("\n") == [
        "2 blocked", "0 ready", "2 started", "0 done", "4 merged"
    ]  # fmt: skip
    assert demo_page.errors == []
    if os.environ.get("OKSTRA_UPDATE_SCREENSHOT") == "1":
        shot = Path(__file__).parent.parent / "docs" / "board.png"
        demo_page.view.screenshot(path=str(shot), full_page=True)


def _demo_maps() -> dict[str, set[tuple[int, int]]]:
    add_mul = parse_plan(ADD_MUL_PLAN, "plan.md").stages
    return {
        ADD_MUL: {(d, s.number) for s in add_mul for d in s.depends_on},
        DIV: {(d, n) for n, _, deps, _, _ in DIV_STAGES for d in deps},
    }


def test_the_graph_edges_are_the_stage_map_and_join_the_boxes_they_name(demo_page: Page):
    for key, edges in _demo_maps().items():
        article = demo_page.article(key)
        drawn = article.locator("svg.map path.edge").evaluate_all(
            """paths => paths.map(p => {
                const box = n => p.ownerSVGElement.querySelector(`g[data-stage="${n}"] rect`)
                    .getBoundingClientRect();
                const from = box(p.dataset.from), to = box(p.dataset.to);
                const length = p.getTotalLength(), svg = p.ownerSVGElement.getBoundingClientRect();
                const start = p.getPointAtLength(0), end = p.getPointAtLength(length);
                return [+p.dataset.from, +p.dataset.to,
                        Math.abs(svg.left + start.x - from.right) < 2 &&
                        svg.top + start.y > from.top && svg.top + start.y < from.bottom,
                        to.left - (svg.left + end.x) < 12 && to.left >= svg.left + end.x &&
                        svg.top + end.y > to.top && svg.top + end.y < to.bottom];
            })"""
        )
        assert {(d, n) for d, n, _, _ in drawn} == edges and len(drawn) == len(edges)
        assert all(starts and ends for _, _, starts, ends in drawn), drawn
    assert demo_page.errors == []


def _shown(page: Page) -> list[str]:
    return page.view.locator("article.task:visible").evaluate_all(
        "els => els.map(e => e.dataset.key)"
    )


def test_filters_by_phase_holder_and_key(demo_page: Page):
    view = demo_page.view
    assert view.locator("#filters").is_visible()
    assert _shown(demo_page) == [ADD_MUL, DIV]
    view.select_option("#f-phase", "implementation")
    assert _shown(demo_page) == [DIV]
    assert view.locator("#f-count").inner_text() == "1 of 2 tasks"
    assert view.locator("#index tbody tr:visible").count() == 1
    view.select_option("#f-phase", "")
    view.fill("#f-key", "ADD")
    assert _shown(demo_page) == [ADD_MUL]
    view.fill("#f-key", "")
    # The holder is named with its clone (one host holds several clones).
    labels = view.locator("#f-holder option").all_inner_texts()
    (agent,) = [t for t in labels if t.startswith(f"{AGENT} on {_host()} (clone ")]
    view.select_option("#f-holder", label=agent)
    assert _shown(demo_page) == [ADD_MUL, DIV]  # the agent holds a stage of each
    picked = view.locator("svg.map g.node.picked").evaluate_all(
        "els => els.map(e => [e.closest('article').dataset.key, +e.dataset.stage])"
    )
    assert picked == [[ADD_MUL, 4], [DIV, 2]]
    view.reload()  # the filters survive a reload (a served board reloads itself)
    assert view.locator("svg.map g.node.picked").count() == 2
    assert view.locator("#f-holder").input_value() != ""
    assert demo_page.errors == []


def _host() -> str:
    import socket

    return socket.gethostname()


@pytest.mark.parametrize("width", [1280, 900])
def test_no_word_on_the_board_is_split_across_lines(browser: Any, demo: Path, width: int):
    context = browser.new_context(viewport={"width": width, "height": 900})
    view = context.new_page()
    view.goto(demo.as_uri())
    words = view.evaluate(SPLIT_WORDS)
    context.close()
    assert len(words["seen"]) > 200
    assert words["split"] == []


def test_the_demo_board_reads_without_javascript(browser: Any, demo: Path):
    page = Page(browser, demo.as_uri(), java_script_enabled=False)
    try:
        assert not page.view.locator("#filters").is_visible()
        assert page.view.locator("noscript").count() == 1
        for key, stages in DEMO_STAGES.items():
            rows = page.article(key).locator("table.stages tbody tr")
            assert rows.count() == len(stages) and rows.first.is_visible()
            assert page.article(key).locator("svg.map g.node").count() == len(stages)
        assert page.errors == []
    finally:
        page.context.close()


@pytest.fixture(scope="module")
def in_flight_board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(tmp_path_factory.mktemp("home"), mp)
        repo = in_flight(tmp_path_factory.mktemp("board"))
        proc = okstra(repo, "board")
        assert proc.returncode == 0, proc.stderr
        yield repo / ".okstra" / "board.html"


def test_values_stay_inert_an_expired_lease_says_so_and_a_holder_filter_hides(
    browser: Any, in_flight_board: Path
):
    page = Page(browser, in_flight_board.as_uri())
    try:
        view = page.view
        assert view.evaluate("window.__pwned") is None
        assert view.locator("script").count() == 1
        assert page.article(MARKUP).locator("h2").inner_text().startswith(MARKUP)
        work = page.article(WORK)
        assert "expired" in work.locator('tr[data-stage="2"]').inner_text()
        assert work.locator('g.node[data-stage="2"]').get_attribute("class").endswith("expired")
        assert HOSTILE_TITLE in work.locator('tr[data-stage="3"]').inner_text()
        titled = page.article(MARKUP).locator('table.stages tr[data-stage="1"] td').nth(1)
        assert titled.locator("code").all_inner_texts() == ["approval_state"]
        assert "`" not in titled.inner_text() and "**" not in titled.inner_text()
        node = page.article(MARKUP).locator('g.node[data-stage="1"]')
        assert node.locator("title").text_content() == "Keep the approval_state row open"
        assert node.locator("text").first.text_content() == "1 · Keep the approval_…"
        assert _shown(page) == [MARKUP, PLAIN, WORK]
        view.select_option("#f-holder", index=1)  # the one holder: only the task it holds
        assert _shown(page) == [WORK]
        assert page.errors == []
    finally:
        page.context.close()


# -- served ------------------------------------------------------------------------------


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Team:
    world = Team.make(tmp_path / "team")
    planner = world.clone("planner", "Pat")
    for step in (
        ("task", "new", KEY, "--type", "implementation-planning"),
        ("plan", "submit", KEY, "plans/i.md"),
        ("plan", "approve", KEY),
        ("sync", "origin"),
    ):
        if step[1] == "submit":
            (planner / "plans").mkdir()
            (planner / "plans" / "i.md").write_text(FOUR_STAGES)
        proc = okstra(planner, *step)
        assert proc.returncode == 0, proc.stderr
    world.facts["planner"] = planner
    return world


def _serve(cwd: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "okstra_git", "board", "--serve", "127.0.0.1:0", *args],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OKSTRA_DEBUG": ""},
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline() if ready else ""
    assert line.startswith("serving the board at http://127.0.0.1:"), line + proc.stderr.read()
    return proc, line.split(" at ", 1)[1].split(" ", 1)[0]


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=15)
    return proc.returncode, out


def test_a_served_board_follows_a_claim_made_in_another_clone(browser: Any, team: Team):
    planner = team.facts["planner"]
    server, url = _serve(planner, "--fetch", "origin", "--interval", "1s")
    try:
        page = Page(browser, url, allowed=url)
        stage_1 = page.article(KEY).locator('table.stages tr[data-stage="1"]')
        assert stage_1.get_attribute("data-state") == "ready"
        alice = team.clone("alice", "Alice")
        claimed = okstra(alice, "stage", "claim", KEY, "--stage", "1", "--remote", "origin")
        assert claimed.returncode == 0, claimed.stderr
        started = time.monotonic()
        sync_api.expect(stage_1).to_have_attribute("data-state", "started", timeout=15_000)
        took = time.monotonic() - started
        holder = stage_1.locator("td.holder").inner_text()
        assert holder.startswith("Alice <alice@example.invalid> on ") and "fetched" in holder
        print(f"the served board showed the claim {took:.1f} s after it was made")
        assert page.errors == []
        page.context.close()
    finally:
        code, out = _stop(server)
    assert code == 0 and f"stopped serving the board at {url}" in out


def test_a_served_board_answers_reads_on_its_own_host_name_only(team: Team):
    server, url = _serve(team.facts["planner"])
    try:
        port = int(url.rsplit(":", 1)[1].strip("/"))

        def ask(method: str, path: str = "/", host: str | None = None) -> tuple[int, str]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            headers = {"Host": host} if host else {}
            connection.request(method, path, headers=headers)
            response = connection.getresponse()
            body = response.read().decode()
            connection.close()
            return response.status, body

        status, page = ask("GET")
        assert status == 200 and KEY in page and "connect-src 'self'" in page
        status, version = ask("GET", "/version")
        assert status == 200 and f'data-version="{version}"' in page
        assert ask("POST")[0] == ask("PUT")[0] == ask("DELETE")[0] == 405
        assert ask("GET", "/.git/config")[0] == 404
        assert ask("GET", host=f"localhost:{port}")[0] == 200
        assert ask("GET", host="board.attacker.example")[0] == 421
    finally:
        code, out = _stop(server)
    assert code == 0, out
