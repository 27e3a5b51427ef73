"""One tool call, skillhouse against FastMCP's OpenAPI provider, in the same process.

Petstore ``addPet`` (the vendored petstore-v3.yaml, tests/data/openapi), the same arguments, the same
``httpx.MockTransport`` answering. FastMCP's server-side path is ``OpenAPITool.run``: it validates,
builds the request and sends it through its client. Ours is ``build_request`` (validate + translate,
what the guest does before ``fetch_url``); the row with the mock send adds the same transport call.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from targets import CALL_TRANSLATION
from tests.corpus import corpus_spec

from skillhouse.guest import build_request

ROOT = Path(__file__).resolve().parents[1]
PETSTORE = corpus_spec("petstore-v3.yaml")
ARGUMENTS = {
    "id": 10,
    "name": "doggie",
    "category": {"id": 1, "name": "Dogs"},
    "photoUrls": ["https://img.example/1.png"],
    "tags": [{"id": 1, "name": "friendly"}],
    "status": "available",
}
ROUNDS = 5
SIDES = 3
"""Turns each side takes, alternately."""


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": 10, "name": "doggie", "photoUrls": []})


Timing = tuple[float, float]
"""CPU and wall microseconds per call, each the median of the rounds."""


def _median_us(action: Callable[[], Any], number: int) -> Timing:
    cpu, wall = [], []
    for _ in range(ROUNDS):
        start, started = time.process_time(), time.perf_counter()
        for _ in range(number):
            action()
        cpu.append((time.process_time() - start) / number * 1e6)
        wall.append((time.perf_counter() - started) / number * 1e6)
    return statistics.median(cpu), statistics.median(wall)


async def _median_async_us(action: Callable[[], Awaitable[Any]], number: int) -> Timing:
    cpu, wall = [], []
    for _ in range(ROUNDS):
        start, started = time.process_time(), time.perf_counter()
        for _ in range(number):
            await action()
        cpu.append((time.process_time() - start) / number * 1e6)
        wall.append((time.perf_counter() - started) / number * 1e6)
    return statistics.median(cpu), statistics.median(wall)


def _ours() -> tuple[Timing, Timing, Timing]:
    from skillhouse.gateway.exchange import FetchResponse
    from skillhouse.host import InProcessRunner, TurnHost
    from skillhouse.openapi import import_openapi

    result = import_openapi(PETSTORE, include=["POST /pet"])
    assert result.compiled is not None
    operation = result.compiled.document["operations"][0]
    arguments = {k: v for k, v in ARGUMENTS.items() if k in operation["schema"]["properties"]}
    build_request(operation, arguments)
    client = httpx.Client(transport=httpx.MockTransport(_answer))

    def send() -> None:
        request = build_request(operation, arguments)
        client.request(request["method"], request["url"], headers=request["headers"], content=request["body"])

    # The guest's whole tool call as a turn makes it: the model's arguments as JSON text in, validated and
    # translated, handed to the host (which answers at once, as the mock transport does), the answer out.
    answer = json.dumps({"id": 10, "name": "doggie", "photoUrls": []})
    host = TurnHost([result.compiled.document], lambda request: FetchResponse(200, {"content-type": "application/json"}, answer))
    runner = InProcessRunner(host)
    tool, text = str(operation["tool_name"]), json.dumps(arguments)
    runner.call_tool("load_tools", json.dumps({"names": [tool]}))
    assert '"status": 200' in runner.call_tool(tool, text)
    return (_median_us(lambda: build_request(operation, arguments), 5000), _median_us(send, 1000),
            _median_us(lambda: runner.call_tool(tool, text), 2000))


async def _fastmcp() -> tuple[Timing, Timing, Timing]:
    import yaml
    from fastmcp import Client, FastMCP

    spec = yaml.safe_load(PETSTORE.read_text())
    client = httpx.AsyncClient(transport=httpx.MockTransport(_answer), base_url="http://petstore.test/api/v3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = FastMCP.from_openapi(openapi_spec=spec, client=client)
    tool = next(t for t in await server.list_tools() if t.name == "addPet")
    await tool.run(ARGUMENTS)
    server_side = await _median_async_us(lambda: tool.run(ARGUMENTS), 1000)
    bare = await _median_async_us(lambda: client.post("/pet", json=ARGUMENTS), 1000)
    async with Client(server) as mcp_client:
        await mcp_client.call_tool("addPet", ARGUMENTS)
        end_to_end = await _median_async_us(lambda: mcp_client.call_tool("addPet", ARGUMENTS), 300)
    return server_side, bare, end_to_end


def _medians(timings: list[Timing]) -> Timing:
    return statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)


def run() -> str:
    ours: list[tuple[Timing, Timing, Timing]] = []
    theirs: list[tuple[Timing, Timing, Timing]] = []
    for _ in range(SIDES):  # the two sides take turns, so a busy spell of the machine falls on both
        ours.append(_ours())
        try:
            theirs.append(asyncio.run(_fastmcp()))
        except ImportError:
            return "## One call against FastMCP\n\nFastMCP is not installed (`pip install -e '.[bench]'`).\n"
    ours_build, ours_send, ours_call = (_medians([o[i] for o in ours]) for i in range(3))
    fastmcp_server, bare, fastmcp_client = (_medians([t[i] for t in theirs]) for i in range(3))
    ratio = ours_build[0] / fastmcp_server[0]
    call_ratio = ours_call[0] / fastmcp_server[0]
    shortfalls = [CALL_TRANSLATION.shortfall("Petstore `addPet`, validation + translation", ratio),
                  CALL_TRANSLATION.shortfall("Petstore `addPet`, the guest's whole call_tool", call_ratio)]
    missed = "".join(f"\n{line}" for line in shortfalls if line) + ("\n" if any(shortfalls) else "")

    def row(path: str, timing: Timing, shown: str | None = None) -> str:
        cpu_ratio = shown or f"{timing[0] / fastmcp_server[0]:.2f}"
        return f"| {path} | {timing[0]:.1f} | {timing[1]:.1f} | {cpu_ratio} | {timing[1] / fastmcp_server[1]:.2f} |\n"

    return (
        "## One call against FastMCP (Petstore `addPet`, same process, `httpx.MockTransport`)\n\n"
        f"Microseconds per call, CPU and wall time: the median of {SIDES} turns each side takes (ours, then FastMCP's), "
        f"each turn the median of {ROUNDS} runs; ratios to FastMCP's server side "
        "(the target is judged on CPU time: on this shared machine wall time also measures the scheduler).\n\n"
        "| path | CPU µs | wall µs | CPU ratio | wall ratio |\n|---|---:|---:|---:|---:|\n"
        + row("FastMCP `OpenAPITool.run` (validate, build, send through its client)", fastmcp_server)
        + row("FastMCP through its in-memory MCP client", fastmcp_client)
        + row("bare async httpx request through the same mock transport", bare)
        + row("skillhouse `build_request` (validate + translate)", ours_build, f"**{CALL_TRANSLATION.figure(ratio, 3)}**")
        + row("skillhouse in-process guest `call_tool` (arguments as JSON in, validate, translate, the host's answer out)",
              ours_call, f"**{CALL_TRANSLATION.figure(call_ratio, 3)}**")
        + row("skillhouse `build_request` + a sync httpx send through the mock", ours_send)
        + f"\nTargets: validation + translation, and the guest's whole `call_tool`, each ≤ {CALL_TRANSLATION.limit:g} × "
        f"FastMCP's server-side CPU time; measured {CALL_TRANSLATION.figure(ratio, 3)}: {CALL_TRANSLATION.verdict(ratio)}, "
        f"and {CALL_TRANSLATION.figure(call_ratio, 3)}: {CALL_TRANSLATION.verdict(call_ratio)}.\n"
        + missed
    )


if __name__ == "__main__":
    print(run())
