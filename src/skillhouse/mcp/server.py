"""One turn's tools offered over the Model Context Protocol (the official ``mcp`` SDK's low-level server).

:class:`TurnTools` is what the server offers and does for a turn bound by
:func:`skillhouse.registry.turns.bind_turn` (profile ``mcp``): every bound operation as an MCP tool
(the profile's definition, hints from the declaration) plus ``read_object`` for the skills'
documents. Each ``tools/list`` and ``tools/call`` request is a ``skillhouse.mcp`` span (continuing the
client's trace when its ``_meta`` carries a ``traceparent``). A call runs through :func:`skillhouse.host.calls.run_call`, the path of
``POST /v1/turns/{id}/calls``: a fresh guest validates and translates it and its request leaves
through the gateway. :func:`mcp_server` wraps it in an SDK :class:`~mcp.server.lowlevel.Server`;
:func:`serve_stdio` and :func:`serve_http` run that server over stdio or streamable HTTP on loopback.

No deferred loading: MCP has none, so every bound operation is listed and ``load_tools`` is not
offered; a call may still name an operation by the short name its skill lists it under
(``create_booking``) where exactly one bound operation has it. ``fetch_url`` is not offered: an MCP
client reaches the skill's operations and nothing else.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from skillhouse.gateway import Gateway
from skillhouse.host.calls import GuestUnavailable, model_result, run_call
from skillhouse.json_types import JsonSchema, ProviderTool, ToolAnswer
from skillhouse.registry.turns import OFFERED_EAGER, Turn
from skillhouse.telemetry import annotate, continuing, span

PROFILE = "mcp"
# reading a bound skill's documents changes nothing and stays inside the turn
_READ_ONLY_HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@dataclass(frozen=True)
class Outcome:
    """How one call ended, as the person running the client should hear it."""

    answer: ToolAnswer
    is_error: bool
    notice: str | None


def outcome_of(answer: ToolAnswer) -> Outcome:
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
                f"it with POST /v1/approvals/{approval}/approve or on the console page /console/approvals/{approval}; "
                "then call this tool again with the same arguments and the approved request runs once."
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
    """The MCP tools of one bound turn; each call runs as the API runs it (a fresh guest, the gateway)."""

    def __init__(self, gateway: Gateway, turn: Turn, guest: str = "inprocess") -> None:
        if turn.profile != PROFILE:
            raise ValueError(f"turn {turn.id} is bound for profile {turn.profile!r}, not {PROFILE!r}")
        self.gateway = gateway
        self.turn = turn
        self.guest = guest
        self.definitions: list[ProviderTool] = [
            {**tool, "annotations": dict(_READ_ONLY_HINTS)} if tool["name"] in OFFERED_EAGER else tool
            for tool in turn.tools()
        ]
        """The tools as MCP lists them (wire form); operations the profile refuses are left out."""
        self._schemas = {d["name"]: d["inputSchema"] for d in self.definitions}
        self._by_short: dict[str, list[str]] = {}
        for release in turn.releases:
            for op in release.get("operations", []):
                if op["tool_name"] in self._schemas:
                    self._by_short.setdefault(str(op["name"]), []).append(str(op["tool_name"]))

    def tools(self) -> list[types.Tool]:
        return [types.Tool.model_validate(definition) for definition in self.definitions]

    def resolve(self, name: str) -> str | None:
        """The offered tool ``name`` means: itself, or the one operation listed under that short name."""
        if name in self._schemas:
            return name
        owners = self._by_short.get(name, [])
        return owners[0] if len(owners) == 1 else None

    def input_schema(self, name: str) -> JsonSchema | None:
        tool = self.resolve(name)
        return self._schemas[tool] if tool is not None else None

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run tool ``name`` through :func:`run_call`; a name that offers nothing is a protocol error."""
        tool = self.resolve(name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, self._no_tool(name))
        try:
            answer = run_call(self.gateway, self.turn.tenant, self.turn.id, self.turn.releases, tool,
                              dict(arguments or {}), guest=self.guest, subject=self.turn.subject)
        except GuestUnavailable as exc:  # the server's failure, not the call's: the API answers 503
            raise MCPError(types.INTERNAL_ERROR, f"{exc.code}: {exc.message}") from None
        # what the model reads: the JSON body as structured content, without transport headers
        return call_result(outcome_of(model_result(answer)))

    def _no_tool(self, name: str) -> str:
        owners = self._by_short.get(name, [])
        if owners:
            return f"{name!r} names {len(owners)} tools in this turn; call one of: {', '.join(sorted(owners))}"
        # a tool whose name holds the asked one first: `booking` finds `hollowbrook_create_booking`
        nearest = sorted(self._schemas, key=lambda offered: (name not in offered, offered))[:3]
        return f"no tool {name!r} in this turn; nearest: {', '.join(nearest)}"


def _trace_context(params: types.PaginatedRequestParams | types.CallToolRequestParams | None) -> dict[str, str]:
    """The caller's W3C trace context in the request's ``_meta`` (``traceparent``, ``tracestate``), as MCP
    clients that trace send it."""
    meta: Mapping[str, Any] = (params.meta if params is not None else None) or {}
    return {name: value for name in ("traceparent", "tracestate") if isinstance(value := meta.get(name), str)}


def _code_of(result: types.CallToolResult) -> str:
    """How the call ended, as the gateway's decision codes say it: ``allowed`` (the upstream answered), ``replayed``,
    or the refusal's or signal's code (``rate-limited``, ``approval-required``...)."""
    answer = result.structured_content if isinstance(result.structured_content, dict) else {}
    problem = answer.get("error")
    if isinstance(problem, dict):
        return str(problem.get("code", "error"))
    return "replayed" if answer.get("replayed") is True else "allowed"


def call_result(outcome: Outcome) -> types.CallToolResult:
    """The notice (if any), then the answer's JSON text; the same answer as structured content (a
    response's JSON body is part of it, parsed: ``structuredContent.body`` is the document itself)."""
    blocks = [types.TextContent(text=outcome.notice)] if outcome.notice else []
    blocks.append(types.TextContent(text=json.dumps(outcome.answer, ensure_ascii=False)))
    return types.CallToolResult(content=list(blocks), structured_content=outcome.answer, is_error=outcome.is_error)


def mcp_server(tools: TurnTools, name: str, instructions: str | None = None) -> Server[Any]:
    """An SDK server offering ``tools``; each call runs in a worker thread.

    In a worker thread so a slow upstream never stalls the protocol's event loop. Calls may overlap:
    each has a guest of its own, and what concurrent calls must agree on (idempotency keys,
    approvals) is the gateway's, in the store.
    """

    turn = tools.turn

    async def list_tools(_ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        with continuing(_trace_context(params)), span("skillhouse.mcp", mcp__method__name="tools/list",
                                                      tenant=turn.tenant, turn_id=turn.id):
            return types.ListToolsResult(tools=tools.tools())

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # the worker thread runs in a copy of this context, so the tool call's spans are this span's children
        with continuing(_trace_context(params)), span("skillhouse.mcp", mcp__method__name="tools/call",
                                                      tenant=turn.tenant, turn_id=turn.id, tool=params.name) as current:
            result = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
            annotate(current, code=_code_of(result))
            return result

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


async def serve_http(
    server: Server[Any],
    listening: socket.socket,
    stop: anyio.Event | None = None,
    on_server: Callable[[Any], None] | None = None,
) -> None:
    """Serve streamable HTTP at ``/mcp`` on the bound, listening ``listening`` socket.

    Until SIGINT or SIGTERM, or until ``stop`` is set (then it shuts down gracefully). ``on_server`` is
    handed the uvicorn server before it starts, so a signal that came before uvicorn listens for them
    can still stop it (setting its ``should_exit``; see ``skillhouse mcp``). The caller
    binds the socket (:func:`listening_socket`) so it knows the port, and can say so, before a
    request arrives; connections made meanwhile wait in the backlog. DNS-rebinding protection is on.

    Each request is answered with one JSON body, not an SSE stream (the spec lets the server choose;
    clients must take both). A call here answers once and sends nothing before its answer, so the
    stream would carry nothing more; and the SDK's client drops an SSE response's connection after
    its one event, so over SSE every legacy-era call would open a new TCP connection.
    """
    # imported here: uvicorn loads only when serving over HTTP, not for stdio
    import uvicorn

    host = listening.getsockname()[0]
    app = server.streamable_http_app(host=host, json_response=True)
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    if on_server is not None:
        on_server(http)

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
    """A TCP socket bound to ``host:port`` (0: any free port) and listening; its connections have TCP_NODELAY.

    The protocol is named, not left 0: asyncio sets TCP_NODELAY only on sockets whose ``proto`` is
    ``IPPROTO_TCP``, and an accepted socket takes the listener's. Without it, uvicorn's second write
    of a response (the body, after the headers) waited under Nagle for the client's delayed ACK of
    the first: 40 ms or more on every call of the 2026-07-28 era. (Linux also copies TCP_NODELAY from
    the listener to what it accepts, which holds whatever event loop serves it.)
    """
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listening.bind((host, port))
        listening.listen(128)
    except OSError:
        listening.close()
        raise
    return listening


def _version() -> str:
    try:
        return version("skillhouse")
    except PackageNotFoundError:
        return "0"
