"""``skillhouse mcp``: what the MCP layer adds to a call, and how long the command takes to start.

One turn bound from a temporary SQLite store holding Hollowbrook, the house on loopback, the
in-process guest. The same read-only call (``hollowbrook_list_rooms``) is made straight through the
shared call path (:func:`~skillhouse.host.calls.run_call`: a fresh guest, the gateway, the house), through the SDK client over the in-memory transport, and over
streamable HTTP on loopback in both protocol eras (2026-07-28 per-request envelopes, and the
``initialize`` handshake with a session); the differences are the MCP layer's cost. Start: a new
``skillhouse mcp --http 0`` process until it announces its URL.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client
from tests.hollowbrook import running_hollowbrook

from skillhouse.cli.mcp_command import BoundTurn, open_turn
from skillhouse.host.calls import run_call
from skillhouse.mcp.server import TurnTools, listening_socket, mcp_server, serve_http
from skillhouse.registry.releases import publish_version
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import open_database

ROOT = Path(__file__).resolve().parents[1]
TOOL, ARGUMENTS = "hollowbrook_list_rooms", {"min_guests": 2}


def _store(directory: Path, house_port: int) -> dict[str, str]:
    url = f"sqlite:///{directory / 'store.db'}"
    database = open_database(url)
    files = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "examples" / "hollowbrook").iterdir() if p.is_file()}
    with database.transaction() as session:
        create_token(session, "bench")
        put_version(session, "bench", "hollowbrook", "1.0.0", files)
        validate_version(session, "bench", "hollowbrook", "1.0.0")
        publish_version(session, "bench", "hollowbrook", "1.0.0")
    database.dispose()
    return {"SKILLHOUSE_DATA_DIR": str(directory), "SKILLHOUSE_DATABASE_URL": url, "SKILLHOUSE_GUEST": "inprocess",
            "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{house_port}"}


async def _per_call(call: Callable[[], Awaitable[object]], seconds: float = 1.0) -> float:
    """Median seconds per call over rounds of ten, filling about ``seconds``."""
    await call()
    rounds: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(rounds) < 5:
        started = time.process_time()
        for _ in range(10):
            await call()
        rounds.append((time.process_time() - started) / 10)
    return statistics.median(rounds)


async def _measure(turn: BoundTurn) -> dict[str, float]:
    async def direct() -> object:
        return run_call(turn.gateway, turn.tenant, turn.turn_id, turn.turn.releases, TOOL, ARGUMENTS, guest=turn.guest)

    server = mcp_server(TurnTools(turn.gateway, turn.turn, turn.guest), "skillhouse")
    # a first second of calls runs about twice as slow as the rest (warm-up): not the path's cost
    await _per_call(direct)
    times = {"guest and gateway, no MCP": await _per_call(direct)}
    async with Client(server) as client:
        times["MCP, in-memory transport"] = await _per_call(lambda: client.call_tool(TOOL, ARGUMENTS))
    listening = listening_socket(0)
    url = f"http://127.0.0.1:{listening.getsockname()[1]}/mcp"
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(serve_http, server, listening, stop)
        async with Client(url) as client:
            times["MCP, streamable HTTP on loopback"] = await _per_call(lambda: client.call_tool(TOOL, ARGUMENTS))
        async with Client(url, mode="legacy") as client:
            times["MCP, streamable HTTP on loopback, 2025 era (session)"] = await _per_call(
                lambda: client.call_tool(TOOL, ARGUMENTS))
        stop.set()
    listening.close()
    return times


def _start_seconds(env: dict[str, str]) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        with subprocess.Popen([sys.executable, "-m", "skillhouse.cli", "mcp", "--skill", "hollowbrook@1.0.0",
                               "--tenant", "bench", "--http", "0"], env={**os.environ, **env},
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
            assert process.stderr is not None
            banner = process.stderr.readline()
            times.append(time.perf_counter() - started)
            host, port = banner.rsplit("http://", 1)[1].split("/", 1)[0].split(":")
            socket.create_connection((host, int(port)), timeout=5).close()
            process.terminate()
            process.wait(timeout=10)
    return statistics.median(times)


def run() -> str:
    with tempfile.TemporaryDirectory() as scratch, running_hollowbrook() as house:
        env = _store(Path(scratch), house.port)
        turn = open_turn(Settings.from_env(env), ["hollowbrook@1.0.0"], "bench")
        try:
            times = anyio.run(_measure, turn)
        finally:
            turn.close()
        start = _start_seconds(env)
    base = times["guest and gateway, no MCP"]
    rows = "\n".join(f"| {name} | {seconds * 1000:.2f} | {(seconds - base) * 1000:+.2f} |" for name, seconds in times.items())
    return (
        "## MCP server (`skillhouse mcp`)\n\n"
        f"CPU time of this process, median per call of `{TOOL}` (in-process guest, gateway on SQLite, Hollowbrook on "
        "loopback in this process, so its CPU is counted too):\n\n"
        "| path | ms per call | added by MCP (ms) |\n|---|---:|---:|\n"
        f"{rows}\n\n"
        f"Start: `skillhouse mcp --http 0` to its announced URL in a new process: {start:.2f} s wall time (median of 3).\n"
    )


if __name__ == "__main__":
    print(run())
