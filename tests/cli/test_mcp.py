"""``git okstra mcp`` driven by the SDK's own client over stdio, as an agent host drives it: the
server is ``git okstra mcp`` started as a subprocess (through git, from a folder that is no
repository), and every tool names its repository by path."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import git, make_repo, okstra
from plans import plan_text
from reports_data import verdict_report
from verify_world import KEY as VERIFY_KEY
from verify_world import merged_world

from okstra_git.cli.mcp import TOOLS, tool_call
from okstra_git.services import plans, tasks
from okstra_git.services.context import open_context

mcp = pytest.importorskip("mcp")  # the okstra-git[mcp] extra (in the test extra)

KEY = "p:g:i"
REPORT = ".okstra/tasks/g/i/runs/implementation/reports/stage-1.md"
DRIVEN = {"stage_claim", "stage_renew", "stage_done", "stage_release"}
"""The tools the first test drives; the schema test drives the others."""


def approved_task(repo: Path) -> None:
    ctx = open_context(repo)
    key = ctx.key(KEY)
    tasks.new_task(ctx, key, "implementation-planning", "feature", None)
    # Two free stages of five steps: a batch is one stage.
    (repo / "plan.md").write_text(plan_text([(1, [], ["a.py"]), (2, [], ["b.py"])], steps=5))
    git(repo, "add", "plan.md")
    git(repo, "commit", "-q", "-m", "plan")
    plans.submit_plan(ctx, key, str(repo / "plan.md"))
    plans.approve_plan(ctx, key)


def server_env(tmp: Path) -> dict[str, str]:
    """PATH with a ``git-okstra`` that runs this checkout, so the server is `git okstra mcp`."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "git-okstra"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m okstra_git "$@"\n')
    script.chmod(0o755)
    source = str(Path(__file__).resolve().parents[2])
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH")) if p),
        "OKSTRA_DEBUG": "",
    }


async def session(tmp: Path, body: Any, **env: str) -> Any:
    from mcp import Client, StdioServerParameters

    elsewhere = tmp / "elsewhere"  # the server's own working directory: no repository
    elsewhere.mkdir(exist_ok=True)
    params = StdioServerParameters(
        command="git", args=["okstra", "mcp"], cwd=str(elsewhere), env=server_env(tmp) | env
    )
    async with Client(params) as client:
        return await body(client)


def cli_json(cwd: Path, *args: str) -> dict[str, Any]:
    return json.loads(okstra(cwd, *args, "--json").stdout)


def next_call(text: str) -> tuple[str, dict[str, Any]]:
    """The tool call a tool's text gives for the next step."""
    (line,) = [x for x in text.splitlines() if x.startswith("next, as a tool call: ")]
    name, _, arguments = line.removeprefix("next, as a tool call: ").partition(" ")
    return name, json.loads(arguments)


def test_a_client_lists_the_tools_and_drives_a_stage_by_repository_path(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    approved_task(repo)
    seen: dict[str, Any] = {}

    async def drive(client: Any) -> None:
        listed = (await client.list_tools()).tools
        seen["tools"] = {t.name: t for t in listed}
        claim = await client.call_tool(
            "stage_claim", {"repository": str(repo), "key": KEY, "lease": "1h"}
        )
        assert not claim.is_error, claim.content
        seen["claim"] = claim.structured_content
        worktree = Path(claim.structured_content["placements"][0]["worktreePath"])
        (worktree / "a.py").write_text("A = 1\n")
        git(worktree, "add", "a.py")
        git(worktree, "commit", "-q", "-m", "stage 1")
        (repo / REPORT).parent.mkdir(parents=True, exist_ok=True)
        (repo / REPORT).write_text("# Stage 1\n\nDone.\n")
        renew = await client.call_tool(
            "stage_renew", {"repository": str(worktree), "key": KEY, "stage": 1}
        )
        assert not renew.is_error, renew.content
        seen["renew"] = renew.structured_content
        # A relative path is taken from the repository named, not from the server's folder.
        done = await client.call_tool(
            "stage_done", {"repository": str(repo), "key": KEY, "stage": 1, "report": REPORT}
        )
        assert not done.is_error, done.content
        seen["done"] = done.structured_content
        # Any worktree of the clone names the clone.
        status = await client.call_tool("task_status", {"repository": str(worktree), "key": KEY})
        seen["status"] = status.structured_content
        seen["refused"] = await client.call_tool(
            "stage_done", {"repository": str(repo), "key": KEY, "stage": 2}
        )
        seen["refused by the cli"] = cli_json(repo, "stage", "done", KEY, "--stage", "2")
        # The next step, made as the tool call the status's text gives it.
        name, arguments = next_call(status.content[0].text)
        assert (name, arguments) == ("stage_claim", {"repository": str(repo), "key": KEY})
        second = await client.call_tool(name, arguments)
        assert not second.is_error and second.structured_content["stages"] == [2]
        released = await client.call_tool(
            "stage_release",
            {"repository": str(repo), "key": KEY, "stage": 2, "reason": "not today"},
        )
        assert not released.is_error, released.content
        seen["released"] = released.structured_content
        final = await client.call_tool("task_status", {"repository": str(repo), "key": KEY})
        seen["final"] = final.structured_content
        seen["relative"] = await client.call_tool("task_status", {"repository": "repo", "key": KEY})
        seen["bad stage"] = await client.call_tool(
            "stage_claim", {"repository": str(repo), "key": KEY, "stage": "two"}
        )
        seen["not a number"] = await client.call_tool(
            "stage_claim", {"repository": str(repo), "key": KEY, "stage": [2]}
        )

    anyio.run(session, tmp_path, drive)

    tools = seen["tools"]
    assert set(tools) == set(TOOLS)
    for name, tool in tools.items():
        schema = tool.input_schema
        assert schema["required"][0] == "repository" and not schema["additionalProperties"]
        assert tool.output_schema["type"] == "object", name
        assert tool.output_schema["properties"]["ok"] == {"const": True}, name
        assert f"git okstra {TOOLS[name]} --json" in tool.description
    claim_args = tools["stage_claim"].input_schema["properties"]
    assert claim_args["take_over_expired"]["type"] == "boolean"
    assert {"const": "auto"} in claim_args["stage"]["anyOf"]

    assert seen["claim"]["runId"] == "implementation-001" and seen["claim"]["stages"] == [1]
    assert seen["renew"]["renewed"][0]["stage"] == 1
    assert seen["done"]["claim"]["status"] == "done"
    assert seen["done"]["claim"]["reportPath"] == REPORT
    assert seen["status"]["stages"][0]["state"] == "done"
    # The same object the command prints with --json.
    assert seen["final"] == cli_json(repo, "task", "status", KEY)
    assert seen["released"]["claim"]["releaseReason"] == "not today"

    refused = seen["refused"]
    cli = seen["refused by the cli"]
    assert refused.is_error and cli["ok"] is False
    assert {k: refused.structured_content[k] for k in ("error", "exitCode", "hint")} == {
        k: cli[k] for k in ("error", "exitCode", "hint")
    }
    # The refusal's next step too, as the CLI's --json gives it, and as a tool call.
    assert refused.structured_content["next"] == cli["next"]
    assert cli["next"]["argv"][2:4] == ["stage", "claim"]
    text = refused.content[0].text
    assert text.startswith(f"git okstra: {cli['error']}")
    assert f"hint: {cli['hint']}" in text
    assert "\nexit status 1\nnext, as a tool call: stage_claim " in text
    assert next_call(text) == ("stage_claim", {"repository": str(repo), "key": KEY})

    relative = seen["relative"]
    assert relative.is_error and relative.structured_content["exitCode"] == 2
    assert "not an absolute path" in relative.content[0].text
    bad = seen["bad stage"]  # the command's own converter, in the command's words
    cli = cli_json(repo, "stage", "claim", KEY, "--stage", "two")
    assert bad.is_error and bad.structured_content["error"] == cli["error"]
    assert bad.structured_content["exitCode"] == cli["exitCode"] == 2
    wrong = seen["not a number"]
    assert wrong.is_error and wrong.structured_content["exitCode"] == 2
    assert "`stage` must be a stage number, not [2]" in wrong.content[0].text


def test_every_tool_answers_as_its_output_schema_says(tmp_path: Path):
    """Each tool the first test does not drive, on a task ready for its verdict and a clone
    with a remote: the client checks every answer against the tool's output schema."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = make_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", str(remote))
    assert okstra(repo, "init", "--remote", "origin").returncode == 0
    world = merged_world(repo)
    data = verdict_report(world.ctx, world.key, tmp_path / "data.json")
    where = {"repository": str(repo), "key": VERIFY_KEY}
    calls = [
        ("task_status", where),
        ("stage_ready", where),
        ("plan_show", {**where, "stage": 1}),
        ("verify_target", where),
        ("report_validate", {"repository": str(repo), "data": str(data)}),
        ("verify_record", {**where, "verdict": "accepted", "report": str(data)}),
        ("report_init", {**where, "out": "starter.data.json"}),
        ("integrate", where),
        ("sync", {"repository": str(repo), "remote": "origin"}),
    ]
    assert {name for name, _ in calls} | DRIVEN == set(TOOLS)

    async def drive(client: Any) -> list[Any]:
        return [await client.call_tool(name, args) for name, args in calls]

    # The host started the server with another repository in its environment (from a hook or
    # an alias): no git a call starts works there.
    decoy = make_repo(tmp_path / "decoy")
    decoy_remote = tmp_path / "decoy.git"
    git(tmp_path, "init", "-q", "--bare", str(decoy_remote))
    git(decoy, "remote", "add", "origin", str(decoy_remote))
    before = git(decoy, "for-each-ref")
    env = {"GIT_DIR": str(decoy / ".git"), "GIT_WORK_TREE": str(decoy)}
    answers = anyio.run(partial(session, tmp_path, drive, **env))
    assert git(decoy, "for-each-ref") == before
    assert git(decoy_remote, "for-each-ref") == ""
    for (name, _), answer in zip(calls, answers, strict=True):
        assert not answer.is_error, (name, answer.content)
    # plan_show is `plan show --json`: the stage's steps and Stage Exit Contract.
    shown = answers[2].structured_content
    assert shown == cli_json(repo, "plan", "show", VERIFY_KEY, "--stage", "1")
    (brief,) = shown["stages"]
    assert brief["stage"] == 1 and brief["steps"] and "Stage Exit Contract" in brief["exitContract"]
    recorded = answers[5].structured_content
    assert recorded["verdict"]["verdict"] == "accepted" and recorded["added"]
    assert (repo / "starter.data.json").is_file()  # relative to the repository
    assert answers[7].structured_content["taskBranch"] == "okstra/grp/feat/task"
    assert "refs/notes/okstra/verdicts" in answers[8].structured_content["pushed"]


def test_stdout_carries_nothing_but_the_protocol(tmp_path: Path):
    """Raw JSON-RPC over the server's pipes, one request at a time: every line it writes on
    stdout is the reply to the request just sent; whatever else is said goes to stderr."""
    repo = make_repo(tmp_path / "repo")
    approved_task(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server = subprocess.Popen(
        ["git", "okstra", "mcp"],
        cwd=elsewhere,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(tmp_path),
    )
    assert server.stdin is not None and server.stdout is not None
    sent = 0

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        nonlocal sent
        sent += 1
        message = {"jsonrpc": "2.0", "id": sent, "method": method, "params": params}
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        reply = json.loads(server.stdout.readline())
        assert reply["jsonrpc"] == "2.0" and reply["id"] == sent, reply
        return reply["result"]

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return ask("tools/call", {"name": name, "arguments": arguments})

    hello = {"name": "raw", "version": "1"}
    ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": hello})
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    server.stdin.write("\n")
    assert len(ask("tools/list", {})["tools"]) == len(TOOLS)
    where = {"repository": str(repo), "key": KEY}
    assert not call("task_status", **where).get("isError")
    claimed = call("stage_claim", **where, lease="none")
    assert not claimed.get("isError")
    assert claimed["structuredContent"]["placements"][0]["leaseExpiresAt"] is None
    again = call("stage_claim", **where, stage=1)  # held now
    assert again["isError"] and again["structuredContent"]["exitCode"] == 1
    assert not call("report_init", **where).get("isError")
    unknown = call("no_such_tool")
    assert unknown["isError"] and "no tool 'no_such_tool'" in unknown["content"][0]["text"]
    server.stdin.close()
    assert server.stdout.read() == ""  # nothing after the last reply
    assert server.wait(timeout=60) == 0
    assert server.stderr is not None
    server.stderr.close()


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    """A git server that wants a password for everything."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="okstra test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


# A session of its own whose controlling terminal is the pty named first (where git asks for a
# password, as in a host run on a terminal), stdin and stdout left to the protocol.
_ON_TERMINAL = (
    "import os, sys; os.setsid(); os.open(sys.argv[1], os.O_RDWR); "
    "os.execv(sys.executable, [sys.executable, '-m', 'okstra_git', 'mcp'])"
)


def test_a_call_that_needs_a_password_fails_at_once_instead_of_asking_the_hosts_terminal(
    tmp_path: Path,
):
    import pty
    import select

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    repo = make_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", f"http://127.0.0.1:{server.server_address[1]}/r.git")
    assert okstra(repo, "init", "--remote", "origin").returncode == 0
    drop = ("GIT_TERMINAL_PROMPT", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH_COMMAND", "GIT_SSH")
    env = {k: v for k, v in server_env(tmp_path).items() if k not in drop}
    main, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _ON_TERMINAL, os.ttyname(side)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    sync = {"name": "sync", "arguments": {"repository": str(repo), "remote": "origin"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": sync},
    ]
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    on_terminal, out = b"", b""
    try:
        for _ in range(600):  # a guard against a hang that says nothing: two minutes
            ready, _, _ = select.select([main, proc.stdout], [], [], 0.2)
            if main in ready:
                on_terminal += os.read(main, 4096)
            if proc.stdout in ready:
                out += os.read(proc.stdout.fileno(), 65536)
            if b"Username for" in on_terminal or out.count(b"\n") >= 2:
                break
    finally:
        proc.kill()
        proc.communicate()
        os.close(side)
        os.close(main)
        server.shutdown()
        server.server_close()
    assert b"Username for" not in on_terminal, on_terminal
    reply = json.loads(out.splitlines()[1])["result"]
    assert reply["isError"], reply
    assert "terminal prompts disabled" in reply["content"][0]["text"]


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_print_config_writes_the_snippet_of_each_host(host: str, tmp_path: Path):
    proc = okstra(tmp_path, "mcp", "--print-config", host)
    assert proc.returncode == 0, proc.stderr
    if host == "codex":
        import tomllib

        server = tomllib.loads(proc.stdout)["mcp_servers"]["okstra"]
    else:
        server = json.loads(proc.stdout)["mcpServers"]["okstra"]
    assert [server["command"], *server["args"]] == ["git", "okstra", "mcp"]
    shown = cli_json(tmp_path, "mcp", "--print-config", host)
    assert shown["snippet"] == proc.stdout and shown["host"] == host


def test_a_next_step_is_the_call_of_the_tool_that_runs_it():
    def step(*words: str) -> dict[str, Any]:
        return {"argv": ["git", "okstra", *words], "cwd": "/w/clone"}

    here = {"repository": "/w/clone", "key": KEY}
    assert tool_call(step("stage", "claim", KEY, "--take-over-expired", "--remote", "o")) == (
        "stage_claim",
        {**here, "take_over_expired": True, "remote": "o"},
    )
    report = "/w/clone/.okstra/r 1.md"
    assert tool_call(step("stage", "done", KEY, "--stage", "2", "--report", report)) == (
        "stage_done",
        {**here, "stage": 2, "report": report},
    )
    assert tool_call(step("stage", "renew", KEY, "--stage", "3")) == (
        "stage_renew",
        {**here, "stage": 3},
    )
    assert tool_call(step("sync", "origin")) == (
        "sync",
        {"repository": "/w/clone", "remote": "origin"},
    )
    # No tool runs it: a person's approval, git itself, a command outside the tool set.
    assert tool_call(step("plan", "approve", KEY)) is None
    assert tool_call({"argv": ["git", "merge", "x"], "cwd": "/w"}) is None
    assert tool_call(step("run", "start", KEY, "--type", "final-verification")) is None
    assert tool_call(None) is None


def test_report_init_takes_type_as_the_command_line_does(tmp_path: Path):
    """Trial T17: report_init's argument was `task_type` where the CLI says `--type`. It is
    `type`, in the schema and in a call; `task_type`, already published, still works."""
    repo = make_repo(tmp_path / "repo")
    approved_task(repo)
    where = {"repository": str(repo), "key": KEY}

    async def drive(client: Any) -> list[Any]:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        schema = listed["report_init"].input_schema["properties"]
        return [
            schema,
            await client.call_tool("report_init", {**where, "type": "requirements-discovery",
                                                   "out": "a.data.json"}),
            await client.call_tool("report_init", {**where, "task_type": "error-analysis",
                                                   "out": "b.data.json"}),
            await client.call_tool("report_init", {**where, "type": "error-analysis",
                                                   "task_type": "implementation"}),
        ]  # fmt: skip

    schema, new, old, both = anyio.run(partial(session, tmp_path, drive))
    assert "type" in schema and schema["task_type"].get("deprecated") is True
    assert not new.is_error and new.structured_content["taskType"] == "requirements-discovery"
    assert not old.is_error and old.structured_content["taskType"] == "error-analysis"
    assert both.is_error and "the old name of `type`" in both.content[0].text
