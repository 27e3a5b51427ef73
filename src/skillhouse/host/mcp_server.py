"""One turn's tools offered over the Model Context Protocol (the official ``mcp`` SDK's low-level server).

:class:`TurnTools` is what the server offers and does: every bound operation as an MCP tool (the
``mcp`` provider profile's definition, hints from the declaration) plus ``read_object`` for the
skills' documents; a call goes to the turn's guest, which validates and translates it, and its
request leaves through the host's ``fetch_url`` (the gateway, for a real turn). :func:`mcp_server`
wraps it in an SDK :class:`~mcp.server.lowlevel.Server`; :func:`serve_stdio` and :func:`serve_http`
run that server over stdio or streamable HTTP on loopback.

No deferred loading: MCP has none, so every bound operation is listed and ``load_tools`` is not
offered. ``fetch_url`` is not offered either: an MCP client reaches the skill's operations and
nothing else.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from skillhouse.compiler import neutral_tool
from skillhouse.compiler.profiles import provider_tools
from skillhouse.host.runner import GuestRunner

OFFERED_EAGER = ("read_object",)
"""The guest's own tools an MCP client gets besides the operations."""

# reading a bound skill's documents changes nothing and stays inside the turn
_READ_ONLY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@dataclass(frozen=True)
class Outcome:
    """How one call ended, as the person running the client should hear it."""

    answer: dict[str, Any]
    is_error: bool
    notice: str | None


def outcome_of(answer: dict[str, Any]) -> Outcome:
    """Classify the guest's JSON answer: refusals, held requests and upstream failures are errors.

    A held request is an error to MCP on purpose: nothing happened yet, and a client that shows
    ``isError`` never tells its user a charge went through when it is waiting for a person.
    """
    problem = answer.get("error")
    if isinstance(problem, dict):
        code = str(problem.get("code", "error"))
        if code == "approval-required":
            approval = problem.get("approval_id")
            return Outcome(answer, True, (
                f"Held for a person's approval (approval id {approval}). Nothing was sent. A person approves "
                f"it in the console (/console/approvals/{approval}) or through the API; then call this tool "
                "again with the same arguments and the approved request runs once."
            ))
        return Outcome(answer, True, f"Refused ({code}): {problem.get('message', '')}".rstrip(": "))
    status = answer.get("status")
    if answer.get("replayed") is True:
        return Outcome(answer, isinstance(status, int) and status >= 400, (
            "Replayed: the same request ran before, so this is its first answer; nothing was sent again."
        ))
    if isinstance(status, int) and status >= 400:
        return Outcome(answer, True, f"The API answered HTTP {status}.")
    return Outcome(answer, False, None)


class TurnTools:
    """The MCP tools of one turn's guest; calls are synchronous (the guest and gateway block)."""

    def __init__(self, runner: GuestRunner, releases: Sequence[Mapping[str, Any]]) -> None:
        self.runner = runner
        operations = [neutral_tool(op) for release in releases for op in release.get("operations", [])]
        offered = json.loads(runner.list_tools())["tools"]
        eager = [
            {"name": t["name"], "description": t["description"], "inputSchema": t["parameters"],
             "annotations": dict(_READ_ONLY_HINTS)}
            for t in offered if t["name"] in OFFERED_EAGER
        ]
        self.definitions: list[dict[str, Any]] = [*provider_tools(operations, "mcp"), *eager]
        """The tools as MCP lists them (wire form); operations a profile refuses are left out."""
        self._schemas = {d["name"]: d["inputSchema"] for d in self.definitions}

    def tools(self) -> list[types.Tool]:
        return [types.Tool.model_validate(definition) for definition in self.definitions]

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        return self._schemas.get(name)

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run tool ``name`` through the guest; an unknown name is a protocol error (invalid params)."""
        if name not in self._schemas:
            # a tool whose name holds the asked one first: `create_booking` finds `hollowbrook_create_booking`
            nearest = sorted(self._schemas, key=lambda offered: (name not in offered, offered))[:3]
            raise MCPError(types.INVALID_PARAMS, f"no tool {name!r} in this turn; nearest: {', '.join(nearest)}")
        answer = json.loads(self.runner.call_tool(name, json.dumps(dict(arguments or {}), ensure_ascii=False)))
        return call_result(outcome_of(answer))


def call_result(outcome: Outcome) -> types.CallToolResult:
    """The notice (if any), then the exact JSON the guest answered; the same JSON as structured content."""
    blocks = [types.TextContent(text=outcome.notice)] if outcome.notice else []
    blocks.append(types.TextContent(text=json.dumps(outcome.answer, ensure_ascii=False)))
    return types.CallToolResult(content=list(blocks), structured_content=outcome.answer, is_error=outcome.is_error)


def mcp_server(tools: TurnTools, name: str, instructions: str | None = None) -> Server[Any]:
    """An SDK server offering ``tools``; calls run one at a time in a worker thread.

    One at a time because a turn has one guest (its loaded tools and the wasm store are not shared
    between threads); in a worker thread so a slow upstream never stalls the protocol's event loop.
    """
    one_at_a_time = anyio.CapacityLimiter(1)

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools.tools())

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(tools.call, params.name, params.arguments, limiter=one_at_a_time)

    return Server(
        name,
        version=_version(),
        instructions=instructions,
        get_tool_input_schema=tools.input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin and stdout until it closes them."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server[Any], listening: socket.socket, stop: anyio.Event | None = None) -> None:
    """Serve streamable HTTP at ``/mcp`` on the bound, listening ``listening`` socket.

    Until SIGINT or SIGTERM, or until ``stop`` is set (then it shuts down gracefully). The caller
    binds the socket (:func:`listening_socket`) so it knows the port, and can say so, before a
    request arrives; connections made meanwhile wait in the backlog. DNS-rebinding protection is on.
    """
    import uvicorn

    host = listening.getsockname()[0]
    app = server.streamable_http_app(host=host)
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def stop_when_told(event: anyio.Event) -> None:
        await event.wait()
        http.should_exit = True

    if stop is None:
        # no task group around it: the signal uvicorn re-raises after shutting down must reach the
        # caller as itself (Ctrl-C), not wrapped in an exception group
        await http.serve(sockets=[listening])
        return
    async with anyio.create_task_group() as group:
        group.start_soon(stop_when_told, stop)
        await http.serve(sockets=[listening])
        group.cancel_scope.cancel()


def listening_socket(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A TCP socket bound to ``host:port`` (0: any free port) and listening."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
        listening.listen(128)
    except OSError:
        listening.close()
        raise
    return listening


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skillhouse")
    except PackageNotFoundError:
        return "0"
