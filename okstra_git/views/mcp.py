"""What ``git okstra mcp`` gives: a tool call's result (the command's ``--json`` object, and
the text the agent reads), and ``--print-config``'s snippet for each host."""

from __future__ import annotations

from ..core.values import Value
from . import Output

TYPE_CHECKING = False  # typing is for the type checker: it costs every command ~3 ms
if TYPE_CHECKING:
    from typing import Any

ToolCall = tuple[str, "dict[str, Any]"]
"""A tool's name and its arguments."""


class ToolResult(Value):
    """What a tool call returns: the ``--json`` object, and whether it is a tool error."""

    data: dict[str, Any]
    """The object ``--json`` prints (``ok`` and, on failure, ``error``, ``exitCode``,
    ``hint``)."""
    is_error: bool
    text: str
    """For the agent to read: the JSON itself, or the CLI's refusal as stderr shows it."""


def tool_done(data: dict[str, Any], err: str, call: ToolCall | None) -> ToolResult:
    """A call whose command did its work: its ``--json`` object (``data``), then what it said
    on stderr and its next step as a tool call (``call``), when there is one."""
    from . import dump

    notes = f"\n{err.rstrip()}" if err.strip() else ""
    return ToolResult(data, False, dump(data) + notes + _next_call(call))


def tool_failed(
    message: str,
    code: int,
    hint: str | None,
    data: dict[str, Any],
    err: str,
    call: ToolCall | None,
) -> ToolResult:
    """A tool error worded as the CLI words it on stderr (``err``, when the command said it),
    with its ``--json`` object."""
    data = {**data, "ok": False, "error": message, "exitCode": code, "hint": hint}
    text = err or f"git okstra: {message}\n" + (f"hint: {hint}\n" if hint else "")
    said = f"{text.rstrip()}\nexit status {code}" + _next_call(call)
    return ToolResult(data, True, said)


def _next_call(call: ToolCall | None) -> str:
    """The line that gives a ``next`` step as the call of the tool that runs it, for the agent
    to make as it is; nothing when the step is no tool's (a ``git merge``, a person's
    approval)."""
    if call is None:
        return ""
    import json

    name, arguments = call
    return f"\nnext, as a tool call: {name} {json.dumps(arguments, ensure_ascii=False)}"


def host_config(host: str, server: str) -> Output:
    """``mcp --print-config HOST``: where ``host`` reads its MCP servers, and the snippet that
    registers this one (``server``) there."""
    import json

    argv = ["okstra", "mcp"]  # run as `git okstra mcp`: whatever git-okstra is on PATH
    if host == "codex":
        words = ", ".join(json.dumps(word) for word in argv)
        snippet = f'[mcp_servers.{server}]\ncommand = "git"\nargs = [{words}]\n'
        where = "~/.codex/config.toml (or .codex/config.toml in a trusted project)"
    else:
        entry: dict[str, Any] = {"command": "git", "args": argv}
        if host == "claude":
            entry = {"type": "stdio", **entry, "env": {}}
            where = ".mcp.json in the project (what `claude mcp add --scope project` writes)"
        else:
            where = ".cursor/mcp.json in the project (or ~/.cursor/mcp.json)"
        snippet = json.dumps({"mcpServers": {server: entry}}, indent=2) + "\n"
    return Output({"host": host, "file": where, "snippet": snippet}, snippet)
