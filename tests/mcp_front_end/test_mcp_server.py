"""``skillhouse mcp`` against the SDK's own client: in memory, over stdio and over streamable HTTP.

Hollowbrook is published into a temporary SQLite store through the registry's use cases, the house
runs on loopback (``SKILLHOUSE_RESOLVE`` sends hollowbrook.local:8084 to it), and every call goes
through the guest and the gateway of a turn bound from that store.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import select
from tests.hollowbrook import running_hollowbrook
from typer.testing import CliRunner

from skillhouse import telemetry
from skillhouse.cli import app
from skillhouse.cli.mcp_command import BindError, BoundTurn, open_turn
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.host.calls import GuestUnavailable
from skillhouse.host.guest_state import Progress
from skillhouse.host.wasm_build import GuestBuildError
from skillhouse.host.wasm_runner import LoadedComponent, loaded_component
from skillhouse.mcp.server import TurnTools, listening_socket, mcp_server, serve_http
from skillhouse.registry.releases import publish_version
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import open_database
from skillhouse.store.gateway_tables import AuditRow, TurnRow

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
TENANT = "acme"
SKILL = "hollowbrook@1.0.0"
BOOKING = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2031-05-01", "departure": "2031-05-03"}
ANNOTATIONS = {
    # tool: (readOnlyHint, destructiveHint, idempotentHint)
    "hollowbrook_list_rooms": (True, False, True),
    "hollowbrook_check_availability": (True, False, True),
    "hollowbrook_create_booking": (False, False, True),
    "hollowbrook_cancel_booking": (False, True, True),
    "hollowbrook_charge": (False, False, True),
    "read_object": (True, False, True),
}


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, house: HollowbrookHTTPServer) -> dict[str, str]:
    """The environment of a ``skillhouse mcp`` whose store holds the published Hollowbrook release."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    database = open_database(url)
    files = {p.name: p.read_text(encoding="utf-8") for p in HOLLOWBROOK.iterdir() if p.is_file()}
    with database.transaction() as session:
        token, _ = create_token(session, TENANT)
        put_version(session, TENANT, "hollowbrook", "1.0.0", files)
        validate_version(session, TENANT, "hollowbrook", "1.0.0")
        publish_version(session, TENANT, "hollowbrook", "1.0.0")
    database.dispose()
    return {
        "SKILLHOUSE_DATA_DIR": str(tmp_path),
        "SKILLHOUSE_DATABASE_URL": url,
        "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{house.port}",
        "SKILLHOUSE_GUEST": "inprocess",
        "SKILLHOUSE_TOKEN": "",
        "TEST_TOKEN": token,
    }


@pytest.fixture
def turn(env: dict[str, str]) -> Iterator[BoundTurn]:
    bound = open_turn(Settings.from_env(env), [SKILL], TENANT)
    yield bound
    bound.close()


@pytest.fixture(params=["inprocess", "wasm"])
def either_turn(request: pytest.FixtureRequest, env: dict[str, str]) -> Iterator[BoundTurn]:
    """A turn whose guest runs in process or as the wasm component (built once into the test cache)."""
    bound = open_turn(Settings.from_env(env), [SKILL], TENANT, guest=str(request.param))
    yield bound
    bound.close()


@asynccontextmanager
async def in_memory(turn: BoundTurn) -> AsyncIterator[Client]:
    server = mcp_server(TurnTools(turn.gateway, turn.turn, turn.guest), "skillhouse", turn.instructions())
    async with Client(server) as client:
        yield client


def answer(result: types.CallToolResult) -> dict[str, Any]:
    """The answer's JSON (a JSON body parsed): always the last text block (a notice may come first)."""
    last = result.content[-1]
    assert isinstance(last, types.TextContent)
    decoded: dict[str, Any] = json.loads(last.text)
    assert result.structured_content == decoded
    return decoded


def hints(tool: types.Tool) -> tuple[bool | None, bool | None, bool | None]:
    assert tool.annotations is not None, tool.name
    return tool.annotations.read_only_hint, tool.annotations.destructive_hint, tool.annotations.idempotent_hint


def test_the_tools_are_the_bound_operations_with_hints_from_their_declarations(turn: BoundTurn) -> None:
    async def listing() -> list[types.Tool]:
        async with in_memory(turn) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(listing)}
    assert {name: hints(tool) for name, tool in tools.items()} == ANNOTATIONS
    booking = tools["hollowbrook_create_booking"]
    assert booking.input_schema["required"] == ["arrival", "departure", "guest_name", "room_id"]
    assert booking.title == "Create booking"
    assert all(t.annotations and t.annotations.open_world_hint for n, t in tools.items() if n != "read_object")


def test_a_booking_is_one_call_a_resend_takes_no_second_room_and_a_charge_waits_for_approval(
    either_turn: BoundTurn, house: HollowbrookHTTPServer
) -> None:
    turn = either_turn
    async def session() -> tuple[types.CallToolResult, ...]:
        async with in_memory(turn) as client:
            booked = await client.call_tool("hollowbrook_create_booking", BOOKING)
            resent = await client.call_tool("hollowbrook_create_booking", BOOKING)
            booking_id = answer(booked)["body"]["booking_id"]
            charge = {"booking_id": booking_id, "amount_cents": 19000, "description": "two nights"}
            held = await client.call_tool("hollowbrook_charge", charge)
            turn.gateway.approvals.decide(TENANT, answer(held)["error"]["approval_id"], approve=True, by="test")
            charged = await client.call_tool("hollowbrook_charge", charge)
            return booked, resent, held, charged

    booked, resent, held, charged = anyio.run(session)
    assert (booked.is_error, answer(booked)["status"]) == (False, 201)
    assert answer(resent)["replayed"] is True and not resent.is_error
    (booking,) = house.house.bookings()
    assert answer(resent)["body"]["booking_id"] == booking["booking_id"]
    # the JSON body is structured content itself, and what the model has no use for is left out
    assert isinstance(booked.structured_content, dict) and booked.structured_content["body"]["booking_id"]
    assert not {"date", "server", "content-length", "content-type"} & {h.lower() for h in answer(booked)["headers"]}

    assert held.is_error and answer(held)["error"]["code"] == "approval-required"
    notice = held.content[0]
    approval_id = answer(held)["error"]["approval_id"]
    assert isinstance(notice, types.TextContent)
    assert f"/v1/approvals/{approval_id}/approve" in notice.text and f"/console/approvals/{approval_id}" in notice.text
    approval = turn.gateway.approvals.get(TENANT, answer(held)["error"]["approval_id"])
    assert (approval.turn_id, approval.operation, approval.state) == (turn.turn_id, "hollowbrook.charge", "used")
    assert (charged.is_error, answer(charged)["status"]) == (False, 201)
    (charge,) = house.house.charges()
    assert charge["booking_id"] == booking["booking_id"]


def test_a_call_the_guest_refuses_is_an_error_result_and_nothing_is_sent(
    turn: BoundTurn, house: HollowbrookHTTPServer
) -> None:
    async def session() -> types.CallToolResult:
        async with in_memory(turn) as client:
            return await client.call_tool("hollowbrook_create_booking", {"room_id": "two", "guest": "Ada"})

    refused = anyio.run(session)
    assert refused.is_error
    error = answer(refused)["error"]
    assert error["code"] == "invalid-arguments"
    assert {v["problem"] for v in error["violations"]} == {"missing", "wrong-type", "unknown-property"}
    assert house.received == []


@pytest.mark.parametrize("booking_id", ["../charges", "a/b", "..\\charges", "..", "b1\x00"])
def test_a_path_parameter_that_would_leave_its_segment_is_refused_and_nothing_is_sent(
    turn: BoundTurn, house: HollowbrookHTTPServer, booking_id: str
) -> None:
    async def session() -> types.CallToolResult:
        async with in_memory(turn) as client:
            return await client.call_tool("hollowbrook_cancel_booking", {"booking_id": booking_id})

    refused = anyio.run(session)
    assert refused.is_error
    assert [(v["path"], v["problem"]) for v in answer(refused)["error"]["violations"]] == [
        ("$.booking_id", "invalid-path-segment")
    ]
    assert house.received == []


def test_read_object_gives_the_skill_documents_and_unknown_tools_are_protocol_errors(turn: BoundTurn) -> None:
    async def session() -> tuple[types.CallToolResult, MCPError]:
        async with in_memory(turn) as client:
            rules = await client.call_tool("read_object", {"path": "skill/hollowbrook/house_rules.md"})
            with pytest.raises(MCPError) as refused:
                await client.call_tool("fetch_url", {"url": "http://hollowbrook.local:8084/rooms"})
            return rules, refused.value

    rules, refused = anyio.run(session)
    assert not rules.is_error and "Dogs are welcome" in answer(rules)["ok"]
    assert refused.code == types.INVALID_PARAMS


def test_a_short_name_calls_the_one_operation_listed_under_it(turn: BoundTurn, house: HollowbrookHTTPServer) -> None:
    async def session() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with in_memory(turn) as client:
            booked = await client.call_tool("create_booking", BOOKING)
            return booked, await client.call_tool("hollowbrook_create_booking", BOOKING)

    booked, resent = anyio.run(session)
    assert (booked.is_error, answer(booked)["status"]) == (False, 201)
    assert answer(resent)["replayed"] is True  # the same operation, whichever name asked for it
    assert len(house.house.bookings()) == 1


def test_a_short_name_two_bound_skills_list_is_a_protocol_error_naming_both(env: dict[str, str]) -> None:
    database = open_database(env["SKILLHOUSE_DATABASE_URL"])
    files = {p.name: p.read_text(encoding="utf-8") for p in HOLLOWBROOK.iterdir() if p.is_file()}
    files["SKILL.md"] = files["SKILL.md"].replace("name: hollowbrook", "name: brookside", 1)
    with database.transaction() as db:
        put_version(db, TENANT, "brookside", "1.0.0", files)
        validate_version(db, TENANT, "brookside", "1.0.0")
        publish_version(db, TENANT, "brookside", "1.0.0")
    database.dispose()
    both = open_turn(Settings.from_env(env), [SKILL, "brookside@1.0.0"], TENANT)

    async def session() -> tuple[MCPError, types.CallToolResult]:
        async with in_memory(both) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("list_rooms", {})
            return refused.value, await client.call_tool("brookside_list_rooms", {})

    try:
        refused, listed = anyio.run(session)
    finally:
        both.close()
    assert refused.code == types.INVALID_PARAMS
    assert "brookside_list_rooms" in refused.message and "hollowbrook_list_rooms" in refused.message
    assert (listed.is_error, answer(listed)["status"]) == (False, 200)


def test_the_turn_is_recorded_and_its_calls_are_audited_under_it(turn: BoundTurn) -> None:
    async def session() -> None:
        async with in_memory(turn) as client:
            await client.call_tool("hollowbrook_list_rooms", {})

    anyio.run(session)
    with turn.database.transaction() as db:
        row = db.get(TurnRow, turn.turn_id)
        audited = list(db.scalars(select(AuditRow).where(AuditRow.turn_id == turn.turn_id)))
    assert row is not None and (row.tenant_id, row.profile) == (TENANT, "mcp")
    assert [(r["skill"], r["version"]) for r in row.releases] == [("hollowbrook", "1.0.0")]
    assert [(a.operation, a.decision, a.status) for a in audited] == [("hollowbrook.list_rooms", "allowed", 200)]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillhouse.cli", "mcp", *args]


def test_over_stdio_the_command_lists_the_tools_and_books_a_room(
    env: dict[str, str], house: HollowbrookHTTPServer
) -> None:
    parameters = StdioServerParameters(command=sys.executable, args=command("--skill", SKILL, "--tenant", TENANT)[1:],
                                       env={**os.environ, **env})

    async def session() -> tuple[list[types.Tool], types.CallToolResult]:
        with anyio.fail_after(30):
            async with Client(parameters) as client:
                tools = (await client.list_tools()).tools
                return tools, await client.call_tool("hollowbrook_create_booking", BOOKING)

    tools, booked = anyio.run(session)
    assert {tool.name: hints(tool) for tool in tools} == ANNOTATIONS
    assert (booked.is_error, answer(booked)["status"]) == (False, 201)
    (booking,) = house.house.bookings()
    assert answer(booked)["body"]["booking_id"] == booking["booking_id"]


def test_over_stdio_a_terminated_server_stops_at_once_with_status_0(env: dict[str, str]) -> None:
    with subprocess.Popen(command("--skill", SKILL, "--tenant", TENANT), env={**os.environ, **env}, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        assert " on stdio" in process.stderr.readline()
        process.terminate()  # stdin stays open: the server must not wait for it
        assert process.wait(timeout=10) == 0


def test_over_http_a_server_terminated_as_soon_as_it_announces_itself_stops_with_status_0(env: dict[str, str]) -> None:
    # a supervisor may stop it at once: the signal comes before uvicorn has put in its own handlers, and
    # raised there as KeyboardInterrupt it was lost, the server serving on (the bench's start-up row hung)
    for _ in range(3):
        with subprocess.Popen(command("--skill", SKILL, "--tenant", TENANT, "--http", "0"), env={**os.environ, **env},
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
            assert process.stderr is not None
            banner = process.stderr.readline()
            assert " at http://127.0.0.1:" in banner
            port = int(banner.rsplit(":", 1)[1].split("/", 1)[0])
            socket.create_connection(("127.0.0.1", port), timeout=5).close()  # as a readiness probe does
            process.terminate()
            try:
                assert process.wait(timeout=15) == 0
            finally:
                process.kill()


@pytest.fixture
def http_server(env: dict[str, str]) -> Iterator[str]:
    """``skillhouse mcp --http 0`` in a process of its own; the URL it announces. It must stop cleanly."""
    lines: queue.Queue[str] = queue.Queue()

    def read(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line)

    with subprocess.Popen(command("--skill", SKILL, "--tenant", TENANT, "--http", "0"), env={**os.environ, **env},
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        threading.Thread(target=read, args=(process.stderr,), daemon=True).start()
        try:
            banner = lines.get(timeout=30)
            assert " at http://127.0.0.1:" in banner, banner
            yield banner.rsplit(" at ", 1)[1].strip()
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 per-request envelopes; the initialize handshake
def test_over_streamable_http_a_booking_and_its_resend_take_one_room(
    http_server: str, house: HollowbrookHTTPServer, mode: str
) -> None:
    async def session() -> tuple[list[types.Tool], types.CallToolResult, types.CallToolResult]:
        with anyio.fail_after(30):
            async with Client(http_server, mode=mode) as client:
                tools = (await client.list_tools()).tools
                booked = await client.call_tool("hollowbrook_create_booking", BOOKING)
                resent = await client.call_tool("hollowbrook_create_booking", BOOKING)
                return tools, booked, resent

    tools, booked, resent = anyio.run(session)
    assert {tool.name: hints(tool) for tool in tools} == ANNOTATIONS
    assert answer(booked)["status"] == 201 and answer(resent)["replayed"] is True
    assert len(house.house.bookings()) == 1
    assert len([r for r in house.received if r["method"] == "POST"]) == 1


def test_connections_accepted_on_the_listening_socket_have_tcp_nodelay() -> None:
    # uvicorn serves a given socket through the event loop's create_server, as here; without
    # TCP_NODELAY a response's body waits under Nagle for the ACK of its headers (~40 ms a call)
    async def accepted_option() -> int:
        options: asyncio.Queue[int] = asyncio.Queue()

        class Accepting(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                options.put_nowait(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        with listening_socket(0) as listening:
            server = await asyncio.get_running_loop().create_server(Accepting, sock=listening)
            async with server:
                _, writer = await asyncio.open_connection(*listening.getsockname())
                option = await asyncio.wait_for(options.get(), timeout=10)
                writer.close()
        return option

    assert asyncio.run(accepted_option()) != 0


def test_over_streamable_http_a_request_is_answered_with_one_json_body(turn: BoundTurn) -> None:
    server = mcp_server(TurnTools(turn.gateway, turn.turn, turn.guest), "skillhouse")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}

    async def post() -> httpx.Response:
        with anyio.fail_after(30), listening_socket(0) as listening:
            stop = anyio.Event()
            async with anyio.create_task_group() as group:
                group.start_soon(serve_http, server, listening, stop)
                async with httpx.AsyncClient() as client:
                    response = await client.post(f"http://127.0.0.1:{listening.getsockname()[1]}/mcp", json=initialize,
                                                 headers={"Accept": "application/json, text/event-stream"})
                stop.set()
        return response

    response = anyio.run(post)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["serverInfo"]["name"] == "skillhouse"


@pytest.mark.parametrize(
    ("args", "codes", "changed"),
    [
        # a turn bind_turn refuses: its code, then each problem's code against the --skill it is about
        (["--skill", "hollowbrook@9.9.9", "--tenant", TENANT], ("invalid-turn", "--skill hollowbrook@9.9.9: unknown-release"), {}),
        (["--skill", "nosuch@1.0.0", "--tenant", TENANT], ("invalid-turn", "--skill nosuch@1.0.0: unknown-release"), {}),
        (["--skill", "hollowbrook@1.0.0", "--tenant", "rival"], ("invalid-turn", "--skill hollowbrook@1.0.0: unknown-release"), {}),
        (["--skill", SKILL, "--skill", "hollowbrook@2.0.0", "--tenant", TENANT],
         ("invalid-turn", "--skill hollowbrook@2.0.0: duplicate-skill"), {}),
        (["--skill", "hollowbrook", "--tenant", TENANT], ("invalid-skill",), {}),
        (["--skill", SKILL], ("no-tenant",), {}),
        (["--skill", SKILL], ("unknown-token",), {"SKILLHOUSE_TOKEN": "skh_" + "x" * 43}),
        (["--skill", SKILL, "--tenant", TENANT, "--guest", "jvm"], ("invalid-guest",), {}),
        (["--skill", SKILL, "--tenant", TENANT], ("invalid-settings",), {"SKILLHOUSE_RESOLVE": "hollowbrook.local"}),
        (["--skill", SKILL, "--tenant", TENANT], ("database-unavailable",), {"SKILLHOUSE_DATABASE_URL": "mysql://nowhere/db"}),
    ],
)
def test_a_turn_that_cannot_be_bound_exits_2_with_its_code_and_no_traceback(
    env: dict[str, str], args: list[str], codes: tuple[str, ...], changed: dict[str, str]
) -> None:
    result = CliRunner().invoke(app, ["mcp", *args], env={**env, **changed})
    assert result.exit_code == 2, result.output
    assert f"error: {codes[0]}:" in result.output
    assert all(f"  {problem}:" in result.output for problem in codes[1:]), result.output
    assert "Traceback" not in result.output


def test_a_port_already_taken_exits_2_with_its_code(env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["mcp", "--skill", SKILL, "--tenant", TENANT, "--http", str(port)], env=env)
    assert result.exit_code == 2, result.output
    assert "error: port-unavailable:" in result.output and "Traceback" not in result.output


def test_without_a_tenant_the_turn_is_the_tokens_tenant_and_a_bad_token_is_refused_by_its_code(
    env: dict[str, str]
) -> None:
    bound = open_turn(Settings.from_env(env), [SKILL], token=env["TEST_TOKEN"])
    bound.close()
    assert bound.tenant == TENANT
    with pytest.raises(BindError) as refused:
        open_turn(Settings.from_env(env), [SKILL], token="not-a-token")
    assert refused.value.code == "malformed-token"


def test_a_turn_bound_for_a_subject_acts_for_them_and_a_bad_subject_is_refused(env: dict[str, str]) -> None:
    bound = open_turn(Settings.from_env(env), [SKILL], TENANT, subject="ada@example.com")
    bound.close()
    assert bound.turn.subject == "ada@example.com"
    with pytest.raises(BindError) as refused:
        open_turn(Settings.from_env(env), [SKILL], TENANT, subject=" padded ")
    assert refused.value.code == "invalid-turn"


BUILD_STEPS = [
    "building the guest component with componentize-py (first run only)",
    "compiling the guest component to native code with wasmtime (first run on this machine)",
]


def first_build(progress: Progress) -> LoadedComponent:
    """A cache without the component: the build announces its steps as the real one does (it takes minutes),
    then the suite's cached component is what it made."""
    for step in BUILD_STEPS:
        progress(step)
    return loaded_component()


def failed_build(progress: Progress) -> LoadedComponent:
    progress(BUILD_STEPS[0])
    raise GuestBuildError("build-failed", "componentize-py failed for agent_app.py:\nno space left on device")


def test_a_wasm_guest_not_built_yet_shows_each_build_step_on_stderr_before_serving(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    bound = open_turn(Settings.from_env(env), [SKILL], TENANT, guest="wasm", load=first_build)
    try:
        tools = TurnTools(bound.gateway, bound.turn, bound.guest)
        assert "hollowbrook_create_booking" in {tool["name"] for tool in tools.definitions}
    finally:
        bound.close()
    shown = capsys.readouterr()
    assert shown.err.splitlines() == [f"skillhouse mcp: {step}" for step in BUILD_STEPS]
    assert shown.out == ""  # stdout is the MCP stdio channel: nothing else may be written there


def test_a_failed_guest_build_is_refused_with_its_code_after_the_step_it_failed_in(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # the command prints it as "error: guest-unavailable: ... (try --guest inprocess)"
    with pytest.raises(GuestUnavailable) as refused:
        open_turn(Settings.from_env(env), [SKILL], TENANT, guest="wasm", load=failed_build)
    assert refused.value.code == "guest-unavailable"
    assert "no space left on device" in refused.value.message
    assert capsys.readouterr().err.splitlines() == [f"skillhouse mcp: {BUILD_STEPS[0]}"]



CALLER_TRACE, CALLER_SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_tracer_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.use_tracer_provider(None)


def test_each_mcp_request_is_a_span_and_a_call_continues_the_clients_trace_down_to_the_upstream(
    turn: BoundTurn, house: HollowbrookHTTPServer, exporter: InMemorySpanExporter
) -> None:
    meta: Any = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}

    async def session() -> None:
        async with in_memory(turn) as client:
            await client.list_tools()
            await client.call_tool("hollowbrook_create_booking", BOOKING, meta=meta)
            await client.call_tool("hollowbrook_create_booking", BOOKING)

    anyio.run(session)
    spans = exporter.get_finished_spans()
    requests = [span for span in spans if span.name == "skillhouse.mcp"]
    assert [(s.attributes or {}).get("mcp.method.name") for s in requests] == ["tools/list", "tools/call", "tools/call"]
    listed, booked, resent = requests
    assert listed.parent is None and resent.parent is None
    assert booked.parent is not None and booked.parent.is_remote
    assert (f"{booked.parent.trace_id:032x}", f"{booked.parent.span_id:016x}") == (CALLER_TRACE, CALLER_SPAN)
    assert dict(booked.attributes or {}) == {"mcp.method.name": "tools/call", "skillhouse.tenant": TENANT,
                                             "skillhouse.turn_id": turn.turn_id, "skillhouse.tool": "hollowbrook_create_booking",
                                             "skillhouse.code": "allowed"}
    assert (resent.attributes or {})["skillhouse.code"] == "replayed"
    # the call's tree under the MCP request: tool call > guest > gateway decision > upstream request
    by_id = {span.context.span_id: span for span in spans}
    (upstream,) = [span for span in spans if span.name == "skillhouse.upstream"]
    line = [upstream]
    while line[0].parent is not None and line[0].parent.span_id in by_id:
        line.insert(0, by_id[line[0].parent.span_id])
    assert [span.name for span in line] == ["skillhouse.mcp", "skillhouse.tool_call", "skillhouse.guest",
                                            "skillhouse.gateway", "skillhouse.upstream"]
    assert {f"{span.context.trace_id:032x}" for span in line} == {CALLER_TRACE}
    shown = repr([dict(span.attributes or {}) for span in spans])
    assert BOOKING["guest_name"] not in shown and BOOKING["arrival"] not in shown
