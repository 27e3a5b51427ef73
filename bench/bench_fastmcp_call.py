"""One tool call, skillhouse against FastMCP's OpenAPI provider, in the same process.

Petstore ``addPet`` (the vendored petstore-v3.yaml, tests/data/openapi), the same arguments, the same
``httpx.MockTransport`` answering. FastMCP's server-side path is ``OpenAPITool.run``: it validates,
builds the request and sends it through its client. Ours is ``build_request`` (validate + translate,
what the guest does before ``fetch_url``); the row with the mock send adds the same transport call.
"""

from __future__ import annotations

import asyncio
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


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": 10, "name": "doggie", "photoUrls": []})


def _median_us(action: Callable[[], Any], number: int) -> float:
    runs = []
    for _ in range(ROUNDS):
        start = time.process_time()
        for _ in range(number):
            action()
        runs.append((time.process_time() - start) / number * 1e6)
    return statistics.median(runs)


async def _median_async_us(action: Callable[[], Awaitable[Any]], number: int) -> float:
    runs = []
    for _ in range(ROUNDS):
        start = time.process_time()
        for _ in range(number):
            await action()
        runs.append((time.process_time() - start) / number * 1e6)
    return statistics.median(runs)


def _ours() -> tuple[float, float]:
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

    return _median_us(lambda: build_request(operation, arguments), 5000), _median_us(send, 1000)


async def _fastmcp() -> tuple[float, float, float]:
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


def run() -> str:
    ours_build, ours_send = _ours()
    try:
        fastmcp_server, bare, fastmcp_client = asyncio.run(_fastmcp())
    except ImportError:
        return "## One call against FastMCP\n\nFastMCP is not installed (`pip install -e '.[bench]'`).\n"
    ratio = ours_build / fastmcp_server
    shortfall = CALL_TRANSLATION.shortfall("Petstore `addPet`", ratio)
    return (
        "## One call against FastMCP (Petstore `addPet`, same process, `httpx.MockTransport`)\n\n"
        f"CPU time, median of {ROUNDS} runs, microseconds per call.\n\n"
        "| path | µs | ratio to FastMCP server side |\n|---|---:|---:|\n"
        f"| FastMCP `OpenAPITool.run` (validate, build, send through its client) | {fastmcp_server:.0f} | 1.00 |\n"
        f"| FastMCP through its in-memory MCP client | {fastmcp_client:.0f} | {fastmcp_client / fastmcp_server:.2f} |\n"
        f"| bare async httpx request through the same mock transport | {bare:.0f} | {bare / fastmcp_server:.2f} |\n"
        f"| skillhouse `build_request` (validate + translate) | {ours_build:.1f} | **{CALL_TRANSLATION.figure(ratio, 3)}** |\n"
        f"| skillhouse `build_request` + a sync httpx send through the mock | {ours_send:.0f} | {ours_send / fastmcp_server:.2f} |\n\n"
        f"Target: validation + translation ≤ {CALL_TRANSLATION.limit:g} × FastMCP's server-side time; measured "
        f"{CALL_TRANSLATION.figure(ratio, 3)}: {CALL_TRANSLATION.verdict(ratio)}.\n"
        + (f"\n{shortfall}\n" if shortfall else "")
    )


if __name__ == "__main__":
    print(run())
