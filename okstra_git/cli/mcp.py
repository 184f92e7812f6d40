"""``git okstra mcp``: okstra's commands as MCP tools for agent hosts (docs/agents.md).

Each tool is one declared command. Its input schema is made from the command's declaration,
its arguments go through the command's own converters, and it runs the command's own handler
in this process — the service and view code of ``git okstra … --json`` — so a tool returns
exactly the object ``--json`` prints. The repository is the call's ``repository`` argument
(``services.context.working_in``), never this server's working directory: a host starts one
server for all its projects and worktrees. A refusal is a tool error carrying the CLI's
message, exit code and hint.

The ``mcp`` SDK (the ``okstra-git[mcp]`` extra) is imported only by :func:`serve`: ``--help``
imports this module with every other group.
"""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command

TYPE_CHECKING = False  # typing is for the type checker: it costs every command ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..views.mcp import ToolCall, ToolResult
    from .declare import Command

TOOLS = {
    "task_status": "task status",
    "plan_show": "plan show",
    "stage_ready": "stage ready",
    "stage_claim": "stage claim",
    "stage_renew": "stage renew",
    "stage_done": "stage done",
    "stage_release": "stage release",
    "integrate": "integrate",
    "verify_target": "verify target",
    "verify_record": "verify record",
    "report_init": "report init",
    "report_validate": "report validate",
    "sync": "sync",
}
"""Tool name → the command it runs. Few on purpose: a host puts every tool's schema in the
agent's context, and these are the steps of the loop an agent works in."""

HOSTS = ("claude", "codex", "cursor")
SERVER_NAME = "okstra"
REPOSITORY = "repository"
"""The argument every tool takes: where the command runs."""
INSTRUCTIONS = (
    "okstra keeps tasks, stage claims, approvals and verdicts in git. Every tool takes "
    "`repository`: the absolute path of your clone or of the stage worktree you work in. Start "
    "with task_status: its `next` is the step to take. A claim's lease must be renewed "
    "(stage_renew) while you work, or another agent may take the stage over."
)


@command(
    "mcp",
    "Serve okstra's tools to an agent host over MCP on stdin/stdout (the host starts it).",
    Arg(
        "--print-config",
        "Print the snippet that registers this server with HOST, and exit.",
        metavar="HOST",
        choices=HOSTS,
    ),
    about="Tools: " + ", ".join(TOOLS) + ". Each runs the command of its name (task_status "
    "runs `task status`) in the repository given by its `repository` argument — an absolute "
    "path; the server's own working directory is never used — and returns the object that "
    "command prints with --json, described by the tool's output schema; a refusal is a tool "
    "error with the command's message, exit code, hint and the task's next step. A next step "
    "a tool runs is also given as that tool's call. Stdout carries nothing but the protocol. "
    "Needs the mcp extra: pip install 'okstra-git[mcp]'. Registering it with Claude Code, "
    "Codex and Cursor: docs/agents.md.",
)
def mcp(print_config: str | None) -> Output:
    if print_config is not None:
        from ..views.mcp import host_config

        return host_config(print_config, SERVER_NAME)
    serve()
    return Output({})


# -- the tools ---------------------------------------------------------------------------------


def tool_command(name: str) -> Command | None:
    """The declared command tool ``name`` runs (None: no such tool)."""
    from .declare import COMMANDS, load

    words = tuple(TOOLS.get(name, "").split())
    if not words or not load(words[0]):
        return None
    return COMMANDS.get(words)


def tool_list() -> list[dict[str, Any]]:
    """Every tool: name, description, input and output schema."""
    found = []
    for name in TOOLS:
        cmd = tool_command(name)
        assert cmd is not None, name  # tests/cli/test_mcp.py holds every tool to a command
        found.append(
            {
                "name": name,
                "description": f"{cmd.help} (`git okstra {cmd.name} --json`)",
                "inputSchema": input_schema(cmd),
                "outputSchema": output_schema(name),
            }
        )
    return found


def input_schema(cmd: Command) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments: ``repository``, then the command's arguments as
    the command line spells them (``take_over_expired`` for ``--take-over-expired``, ``type``
    for ``--type``); an argument once named by its handler's name (``task_type``) takes that
    name too (:data:`OLD_NAMES`)."""
    properties: dict[str, Any] = {
        REPOSITORY: {
            "type": "string",
            "description": "The absolute path of the clone, or of any worktree of it (a stage "
            "worktree too): the command runs there, as `git -C PATH okstra …` would.",
        }
    }
    required = [REPOSITORY]
    for arg in cmd.args:
        properties[arg.word] = _arg_schema(arg)
        if arg.needed:
            required.append(arg.word)
        if arg.key in OLD_NAMES.get(cmd.name, ()):
            properties[arg.key] = {
                **_arg_schema(arg),
                "description": f"The old name of `{arg.word}` (the same argument).",
                "deprecated": True,
            }
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


OLD_NAMES = {"report init": ("task_type",)}
"""Arguments a tool named by the handler's name before it took the command line's, kept
working for hosts configured then: ``report_init``'s ``task_type`` is ``type``."""


def _arg_schema(arg: Arg) -> dict[str, Any]:
    from .declare import auto_or_number, number

    if arg.flag:
        return {"type": "boolean", "default": False, "description": arg.full_help()}
    one: dict[str, Any]
    if arg.choices:
        one = {"enum": list(arg.choices)}
    elif arg.convert is number:
        one = {"type": "integer", "minimum": 1}
    elif arg.convert is auto_or_number:
        one = {"anyOf": [{"const": "auto"}, {"type": "integer", "minimum": 1}]}
    else:
        one = {"type": "string"}
    schema = {"type": "array", "items": one} if arg.repeat else dict(one)
    said = arg.full_help()
    if arg.complete in ("file", "dir"):
        said += f" A relative path is taken from `{REPOSITORY}`."
    schema["description"] = said
    if arg.default is not None:
        schema["default"] = arg.default
    return schema


def output_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of what tool ``name`` returns: the command's ``--json`` object on success
    (``schemas/output/<name>.schema.json``)."""
    import json

    from ..core.resources import data_dir

    path = data_dir("schemas") / "output" / f"{name}.schema.json"
    schema: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return schema


def call_tool(name: str, arguments: dict[str, Any]) -> ToolResult:
    """Run tool ``name`` as its command would run with ``--json``; never raises for a refusal
    or a bad argument (those are tool errors, as the CLI's exit codes are)."""
    from ..core.errors import BadInput, OkstraError
    from ..git.process import no_prompts
    from ..services.context import working_in
    from ..views.mcp import tool_done
    from .dispatch import describe_failure, json_data, run_handler

    cmd = tool_command(name)
    try:
        if cmd is None:
            raise BadInput(f"no tool {name!r}; the tools are {', '.join(TOOLS)}")
        where = _repository(name, arguments.get(REPOSITORY))
        kwargs = _kwargs(name, cmd, arguments, where)
        # No git this call starts asks for a credential: the server's stdin is the protocol,
        # and a prompt on the host's terminal would wait for an answer nobody knows is wanted.
        with working_in(where), no_prompts():
            out = run_handler(cmd, kwargs)
    except OkstraError as exc:
        return _failure(str(exc), exc.exit_code, exc.hint, {"next": exc.next} if exc.next else {})
    except Exception as exc:  # the CLI's words for what no command named (entry.main)
        import os

        if os.environ.get("OKSTRA_DEBUG") == "1":  # the host's log has the server's stderr
            import traceback

            traceback.print_exc()
        message, code = describe_failure(exc)
        return _failure(message, code, None, {})
    data = json_data(out)
    if out.code:
        return _failure(data["error"], out.code, data["hint"], data, out.err)
    return tool_done(data, out.err, tool_call(data.get("next")))


def _failure(
    message: str, code: int, hint: str | None, data: dict[str, Any], err: str = ""
) -> ToolResult:
    """A tool error, with the tool call of the task's next step (``data``'s ``next``)."""
    from ..views.mcp import tool_failed

    return tool_failed(message, code, hint, data, err, tool_call(data.get("next")))


def tool_call(step: object) -> ToolCall | None:
    """``(tool, arguments)`` running the ``argv`` of ``step`` (a ``next`` object: the command
    ``task status`` and refusals name) in its ``cwd``, when that command is one of the tools
    and its line is plain (see :func:`~.dispatch.quick_parse`)."""
    from .declare import COMMANDS, auto_or_number, load, number
    from .dispatch import quick_parse

    if not isinstance(step, dict):
        return None
    argv, cwd = step.get("argv"), step.get("cwd")
    if not isinstance(argv, list) or argv[:2] != ["git", "okstra"] or not isinstance(cwd, str):
        return None
    words = argv[2:]
    for name, said in TOOLS.items():
        path = tuple(said.split())
        if tuple(words[: len(path)]) != path or not load(path[0]):
            continue
        cmd = COMMANDS[path]
        given = quick_parse(cmd, words[len(path) :])
        if given is None:
            return None
        arguments: dict[str, Any] = {REPOSITORY: cwd}
        for arg in cmd.args:
            value = given.get(arg.key)
            if value is None or value is False or value == [] or value == arg.default:
                continue
            if arg.convert in (number, auto_or_number) and str(value).isdigit():
                value = int(value)
            arguments[arg.word] = value
        return name, arguments
    return None


def _repository(tool: str, value: object) -> str:
    from pathlib import Path

    from ..core.errors import BadInput

    if not isinstance(value, str) or not value:
        raise BadInput(
            f"{tool}: `{REPOSITORY}` is required: the absolute path of the clone or worktree "
            "to work in"
        )
    path = Path(value)
    if not path.is_absolute():
        raise BadInput(
            f"{tool}: `{REPOSITORY}` {value!r} is not an absolute path; this server never uses "
            "its own working directory, so give the clone's or worktree's full path"
        )
    if not path.is_dir():
        raise BadInput(f"{tool}: `{REPOSITORY}` {value}: no such folder")
    return value


def _kwargs(tool: str, cmd: Command, arguments: dict[str, Any], where: str) -> dict[str, Any]:
    """The handler's keyword arguments from a tool call's, through the command's own checks and
    converters (so a bad value is refused with the CLI's words)."""
    import os

    from ..core.errors import BadInput
    from .dispatch import checked_value

    args = {arg.word: arg for arg in cmd.args}
    old = {arg.key: arg.word for arg in cmd.args if arg.key in OLD_NAMES.get(cmd.name, ())}
    unknown = sorted(set(arguments) - set(args) - set(old) - {REPOSITORY})
    if unknown:
        raise BadInput(
            f"{tool}: no argument {', '.join(map(repr, unknown))}; it takes "
            f"{', '.join([REPOSITORY, *args])}"
        )
    arguments = dict(arguments)
    for was, now in old.items():
        if was in arguments:
            value = arguments.pop(was)
            if arguments.get(now, value) != value:
                raise BadInput(f"{tool}: `{was}` is the old name of `{now}`; give one of them")
            arguments[now] = value
    kwargs = {}
    for key, arg in args.items():
        value = arguments.get(key)
        if value is None:
            if arg.needed:
                raise BadInput(f"{tool}: `{key}` is required ({arg.help})")
            kwargs[arg.key] = [] if arg.repeat else (False if arg.flag else arg.default)
        elif arg.flag:
            if not isinstance(value, bool):
                raise BadInput(f"{tool}: `{key}` must be true or false, not {value!r}")
            kwargs[arg.key] = value
            continue
        else:
            texts = [_text(tool, arg, one) for one in (value if arg.repeat else [value])]
            if arg.complete in ("file", "dir"):
                texts = [os.path.join(where, text) for text in texts]
            kwargs[arg.key] = texts if arg.repeat else texts[0]
        kwargs[arg.key] = checked_value(cmd, arg, kwargs[arg.key])
    return kwargs


def _text(tool: str, arg: Arg, value: object) -> str:
    """A JSON value as the word the command line would carry."""
    from ..core.errors import BadInput
    from .declare import auto_or_number, number

    takes_number = arg.convert in (number, auto_or_number)
    if isinstance(value, int) and not isinstance(value, bool) and takes_number:
        return str(value)
    if isinstance(value, str):
        return value
    wanted = "a stage number" if takes_number else "a string"
    if arg.repeat:
        wanted = f"a list of {wanted}s"
    raise BadInput(f"{tool}: `{arg.word}` must be {wanted}, not {value!r}")


# -- the server --------------------------------------------------------------------------------


def serve() -> None:
    """Serve the tools over stdio until the host closes stdin.

    Calls run one at a time, each in a worker thread: the commands block on git and on the
    network, and the event loop keeps answering the host (pings, cancellations) meanwhile. One
    at a time because a command is written for a process of its own (one repository opened,
    one claim taken at a time); the host's agent waits for each answer anyway.
    """
    import contextlib
    import gc
    import os
    import sys

    from ..git.process import REPOSITORY_ENV

    try:
        import anyio
        import mcp_types as types
        from mcp.server.lowlevel.server import Server
        from mcp.server.stdio import stdio_server
    except ImportError as exc:
        from ..core.errors import BadInput

        raise BadInput(
            f"git okstra mcp needs the MCP SDK ({exc}); install it with: "
            "pip install 'okstra-git[mcp]'"
        ) from None
    from .dispatch import version

    one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t["name"],
                    description=t["description"],
                    input_schema=t["inputSchema"],
                    output_schema=t["outputSchema"],
                )
                for t in tool_list()
            ]
        )

    async def call(ctx: Any, params: Any) -> Any:
        arguments = dict(params.arguments or {})
        done = await anyio.to_thread.run_sync(
            call_tool, params.name, arguments, limiter=one_at_a_time
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=done.text)],
            structured_content=done.data,
            is_error=done.is_error,
        )

    server = Server(
        SERVER_NAME,
        version=version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call,
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    # Each call names its repository: variables naming another one (a host started from a
    # hook or an alias) would steer every git a call starts there instead.
    for name in REPOSITORY_ENV:
        os.environ.pop(name, None)
    gc.enable()  # entry.main pauses the collector for a short command; a server lives long
    # With --json the command framework points sys.stdout at stderr; the transport takes the
    # real stdout (and keeps fd 1 pointed at stderr while it serves, so no handler, git child
    # or hook can write into the protocol).
    with contextlib.redirect_stdout(sys.__stdout__):
        anyio.run(run)
