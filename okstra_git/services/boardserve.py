"""``git okstra board --serve``: the board over HTTP, read-only, rebuilt as the records change.

One thread serves the page last built (``GET /``) and the id of that build (``GET /version``,
which the page polls to reload itself); nothing else is answered, and no request can change
anything. The main thread owns the repository: each second it lists the refs, and rebuilds
the page when they changed or when a shown lease ran out (a stage whose claim expired changes
colour without any ref moving); with a remote to follow it first fetches okstra's refs and
notes from it every interval — into the tracking namespaces only, as ``git fetch`` after
``init --remote`` does, so the board shows them and this clone's own records stay as they
are. Ctrl-C (or SIGTERM) stops both and returns.

Bound to 127.0.0.1 unless told otherwise; bound to a loopback address, a request naming
another host is refused, so a page on another site cannot reach the board through a DNS name
pointed at 127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import hashlib
import http.server
import ipaddress
import signal
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, OkstraError
from ..core.values import Value
from ..git.process import no_prompts
from ..git.repo import GitRepo
from .context import Context

if TYPE_CHECKING:
    from .board import Board

DEFAULT_ADDRESS = "127.0.0.1:8765"
VERSION_PATH = "/version"
CHECK_EVERY = 1.0
"""Seconds between two looks at the refs."""
LOOPBACK_NAMES = ("localhost",)


class Address(Value):
    """Where the server listens."""

    host: str
    port: int
    """0: any free port (the one taken is printed)."""


def parse_address(text: str) -> Address:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT`` (on 127.0.0.1); BadInput saying
    what was expected."""
    host, _, port = text.rpartition(":")
    if not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise BadInput(
            f"board --serve at {text!r}: expected ADDR:PORT such as 127.0.0.1:8765 "
            "(port 0 takes any free port)"
        )
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = host or "127.0.0.1"
    if any(ch.isspace() or ch in "/[]" for ch in host):
        raise BadInput(f"board --serve at {text!r}: {host!r} is not a host name or address")
    return Address(host, int(port))


def _loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Serving(Value):
    """The server listens and the page is built: what ``say`` is told first."""

    url: str


class Rebuilt(Value):
    """The page was built again (``build``: its number), or could not be (``error``: why;
    the last page stays up)."""

    reason: str
    """What moved: ``refs`` (a ref changed), ``lease`` (a shown lease ran out),
    ``fetch-failed`` or ``fetch-works`` (fetching from the remote failed, or works again)."""
    build: int
    error: str | None = None


class Request(Value):
    """One request answered, as http.server logs it (told ``log``, when given)."""

    client: str
    line: str


class FetchProblem(Value):
    """Fetching from the remote the board follows failed: when (``HH:MM:SS``, local) and why."""

    remote: str
    at: str
    error: str


class Page(Value):
    """The page last built, swapped whole (readers never see half a build)."""

    html: bytes
    version: str
    """What the page's script polls for: the build number and the refs' fingerprint."""
    csp: str
    """Its Content-Security-Policy header."""


class BoardServer:
    """The board of ``keys`` (None: every task) of the repository at ``start``, served.

    ``page(board, version)`` lays the :class:`~.board.Board` out (the views layer's page,
    whose script polls :data:`VERSION_PATH`; ``fetch_problem``, when the last fetch failed, is
    for it to show); ``csp`` is its Content-Security-Policy, sent as a header too. ``say`` is
    told :class:`Serving` once, then each :class:`Rebuilt`; ``log``, each :class:`Request`
    (the command words them: a service never imports a view).
    """

    def __init__(
        self,
        start: str,
        keys: list[str] | None,
        address: Address,
        page: Callable[[Board, str, FetchProblem | None], bytes],
        csp: str,
        say: Callable[[Serving | Rebuilt], None],
        remote: str | None = None,
        interval: timedelta = timedelta(seconds=30),
        log: Callable[[Request], None] | None = None,
    ) -> None:
        self.start, self.keys, self.remote = start, keys, remote
        self.render, self.csp = page, csp
        self.interval = interval.total_seconds()
        self.say, self.log = say, log
        self.builds = 0
        self.fetch_problem: FetchProblem | None = None
        self.page: Page | None = None
        try:
            self.httpd = http.server.ThreadingHTTPServer(
                (address.host, address.port), _handler(self, _loopback(address.host))
            )
        except OSError as exc:
            raise BadInput(
                f"board --serve cannot listen on {address.host}:{address.port}: {exc.strerror}; "
                "give another ADDR:PORT (port 0 takes any free port)"
            ) from None
        self.httpd.daemon_threads = True
        host, port = str(self.httpd.server_address[0]), self.httpd.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}/"

    # -- building ----------------------------------------------------------------------------

    def _repo(self) -> GitRepo:
        return GitRepo.open(self.start)  # afresh: no record or ref read before is kept

    def _fetch(self, repo: GitRepo) -> None:
        from .sync.transport import FetchFailed, fetch

        assert self.remote is not None
        try:
            fetch(repo, self.remote)
            self.fetch_problem = None
        except FetchFailed as exc:  # shown on the board; the next interval tries again
            self.fetch_problem = FetchProblem(self.remote, time.strftime("%H:%M:%S"), str(exc))

    def build(self, fingerprint: str) -> float | None:
        """Build the page from the records now; returns when its first lease runs out."""
        from .board import build_board

        ctx = Context(self._repo())
        board = build_board(ctx, [ctx.key(k) for k in self.keys] if self.keys else None)
        self.builds += 1
        version = f"{self.builds}-{fingerprint[:12]}"
        self.page = Page(self.render(board, version, self.fetch_problem), version, self.csp)
        return _first_expiry(board)

    def serve(self) -> None:
        """Build, serve, and rebuild until Ctrl-C or SIGTERM."""
        previous = _stop_on_sigterm()
        thread = threading.Thread(target=self.httpd.serve_forever, name="board-http")
        try:
            repo = self._repo()
            last_fetch = time.monotonic()
            if self.remote is not None:
                self._fetch(repo)
            fingerprint = _fingerprint(repo)
            expiry = self.build(fingerprint)
            thread.start()
            self.say(Serving(self.url))
            while True:
                time.sleep(CHECK_EVERY)
                repo = self._repo()
                reason = None
                if self.remote is not None and time.monotonic() - last_fetch >= self.interval:
                    last_fetch = time.monotonic()
                    problem = self.fetch_problem
                    with no_prompts():  # unattended: a prompt would stall every refresh
                        self._fetch(repo)
                    if self.fetch_problem != problem:
                        reason = "fetch-failed" if self.fetch_problem else "fetch-works"
                now = _fingerprint(repo)
                if now != fingerprint:
                    reason = "refs"
                elif expiry is not None and time.time() >= expiry:
                    reason = "lease"
                if reason is None:
                    continue
                fingerprint = now
                try:
                    expiry = self.build(now)
                except OkstraError as exc:  # the last page stays up; the next change retries
                    self.say(Rebuilt(reason, self.builds, str(exc)))
                    continue
                self.say(Rebuilt(reason, self.builds))
        except KeyboardInterrupt:
            pass
        finally:
            if thread.is_alive():
                self.httpd.shutdown()
                thread.join()
            self.httpd.server_close()
            signal.signal(signal.SIGTERM, previous)


def _stop_on_sigterm() -> Any:
    """SIGTERM stops the server as Ctrl-C does (the main thread gets KeyboardInterrupt)."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, stop)


def _fingerprint(repo: GitRepo) -> str:
    """Every ref and its value: what the board is built from moves one of them."""
    refs = repo.list_refs("refs/")
    text = "\n".join(f"{name} {value}" for name, value in sorted(refs.items()))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _first_expiry(board: Board) -> float | None:
    """When the first lease of a started claim on the board runs out (a Unix time)."""
    from datetime import datetime

    found = [
        datetime.fromisoformat(stage.claim.lease_expires_at).timestamp()
        for task in board.tasks
        if task.status is not None
        for stage in task.status.stages
        if stage.state == "started" and stage.claim is not None and stage.claim.lease_expires_at
    ]
    return min(found, default=None)


def _handler(server: BoardServer, loopback: bool) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "okstra-board"
        sys_version = ""

        def do_GET(self) -> None:
            self._answer(body=True)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def _refuse_change(self) -> None:
            self._send(405, b"the board is read-only\n", "text/plain", {"Allow": "GET, HEAD"})

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse_change

        def _answer(self, body: bool) -> None:
            page = server.page
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0].strip("[]")
            if loopback and not _loopback(host):
                self._send(421, b"this board answers to a loopback host name only\n", body=body)
                return
            path = self.path.split("?", 1)[0]
            if page is None:
                self._send(503, b"the board is being built\n", body=body)
            elif path in ("/", "/index.html"):
                headers = {"Content-Security-Policy": page.csp}
                self._send(200, page.html, "text/html; charset=utf-8", headers, body)
            elif path == VERSION_PATH:
                self._send(200, page.version.encode("ascii"), body=body)
            else:
                self._send(404, b"not found: the board is at /\n", body=body)

        def _send(
            self,
            code: int,
            data: bytes,
            kind: str = "text/plain; charset=utf-8",
            headers: dict[str, str] | None = None,
            body: bool = True,
        ) -> None:
            self.send_response(code)
            for name, value in {
                "Content-Type": kind,
                "Content-Length": str(len(data)),
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "X-Frame-Options": "DENY",
                **(headers or {}),
            }.items():
                self.send_header(name, value)
            self.end_headers()
            if body:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            if server.log is not None:  # else quiet: the page polls each second
                server.log(Request(self.address_string(), format % args))

    return Handler
