"""The pool of warm guests behind run_call: one call per runner, rebound per call, discarded when broken."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.gateway.wire import json_upstream

from skillhouse.compiler import compile_dir
from skillhouse.host import TurnHost, make_runner
from skillhouse.host.runner import GuestRunner
from skillhouse.host.runner_pool import RunnerPool
from skillhouse.host.turn import Fetch
from skillhouse.host.wasm_build import GuestApp
from skillhouse.host.wasm_runner import WasmRunner

ROOT = Path(__file__).resolve().parents[2]
PROBE_APP = GuestApp(ROOT / "tests" / "host" / "wasm" / "probe_app.py")
PROBE_REQUEST = json.dumps({"method": "GET", "url": "http://probe.example/", "headers": {}, "body": None})
"""What the probe's ``echo`` tool hands ``fetch_url``: a request the host reads as one."""
BOOKING = {"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-03"}


@pytest.fixture(scope="module")
def hollowbrook() -> dict[str, Any]:
    compiled, errors = compile_dir(ROOT / "examples" / "hollowbrook")
    assert compiled is not None, [str(e) for e in errors]
    return compiled.document


def answering(marker: str) -> Fetch:
    """A fetch that answers every request with ``marker`` in its body."""
    return json_upstream(lambda request: {"status": 200, "headers": {}, "body": marker})


def probe_runner(host: TurnHost, kind: str) -> GuestRunner:
    return WasmRunner(host, app=PROBE_APP, timeout=5.0)


def book(pool: RunnerPool, kind: str, tenant: str, release: dict[str, Any], marker: str) -> dict[str, Any]:
    with pool.checkout(kind, tenant, [release], answering(marker)) as runner:
        answer: dict[str, Any] = json.loads(runner.call_tool("hollowbrook_create_booking", json.dumps(BOOKING)))
    return answer


@pytest.mark.parametrize("kind", ["inprocess", "wasm"])
def test_concurrent_calls_each_get_a_runner_of_their_own_bound_to_their_own_fetch(
    hollowbrook: dict[str, Any], kind: str
) -> None:
    pool = RunnerPool(make_runner, per_key=3)
    threads, rounds = 6, 8
    start = threading.Barrier(threads, timeout=30)
    answers: dict[int, list[str]] = {n: [] for n in range(threads)}

    def caller(number: int) -> None:
        start.wait()
        for round_ in range(rounds):
            answers[number].append(book(pool, kind, "acme", hollowbrook, f"{number}/{round_}")["body"])

    workers = [threading.Thread(target=caller, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)

    assert answers == {n: [f"{n}/{r}" for r in range(rounds)] for n in range(threads)}
    assert pool.created <= threads
    assert pool.idle((kind, "acme", (hollowbrook["digest"],))) <= 3
    assert pool.discarded == 0


def test_a_runner_given_back_serves_the_next_call_of_the_same_tenant_and_skills(hollowbrook: dict[str, Any]) -> None:
    pool = RunnerPool(make_runner)

    assert book(pool, "wasm", "acme", hollowbrook, "first")["body"] == "first"
    assert book(pool, "wasm", "acme", hollowbrook, "second")["body"] == "second"

    assert pool.created == 1


def test_another_tenant_never_gets_a_runner_that_served_a_tenant(hollowbrook: dict[str, Any]) -> None:
    pool = RunnerPool(make_runner)
    with pool.checkout("inprocess", "acme", [hollowbrook], answering("acme")) as acme_runner:
        acme_runner.call_tool("load_tools", json.dumps({"names": ["create_booking"]}))

    with pool.checkout("inprocess", "globex", [hollowbrook], answering("globex")) as globex_runner:
        offered = json.loads(globex_runner.list_tools())

    assert globex_runner is not acme_runner
    assert [tool["name"] for tool in offered["tools"]] == ["load_tools", "read_object", "fetch_url"]
    assert pool.created == 2
    assert pool.idle(("inprocess", "acme", (hollowbrook["digest"],))) == 1


def test_an_idle_runner_reaches_no_gateway() -> None:
    pool = RunnerPool(probe_runner)
    calls: list[dict[str, Any]] = []

    def fetch(request: dict[str, Any]) -> dict[str, Any]:
        calls.append(request)
        return {"status": 200, "headers": {}, "body": "sent"}

    with pool.checkout("probe", "acme", [], json_upstream(fetch)) as runner:
        assert json.loads(runner.call_tool("echo", PROBE_REQUEST))["body"] == "sent"
    # the runner is idle in the pool now: its guest, were it entered, would reach no one's fetch
    assert isinstance(runner, WasmRunner)
    assert json.loads(runner.call_tool("echo", PROBE_REQUEST))["error"]["code"] == "no-turn"
    assert len(calls) == 1


def test_a_runner_whose_guest_trapped_is_discarded_and_the_next_call_gets_a_fresh_one() -> None:
    pool = RunnerPool(probe_runner)
    key = ("probe", "acme", ())

    with pool.checkout("probe", "acme", [], answering("x")) as runner:
        assert json.loads(runner.call_tool("count", "{}")) == {"calls": 1}
    with pool.checkout("probe", "acme", [], answering("x")) as runner:
        assert json.loads(runner.call_tool("raise", "{}"))["error"]["code"] == "guest-trap"

    assert pool.discarded == 1
    assert pool.idle(key) == 0
    with pool.checkout("probe", "acme", [], answering("after")) as fresh:
        assert fresh is not runner
        assert json.loads(fresh.call_tool("echo", PROBE_REQUEST))["body"] == "after"
    assert pool.created == 2


def test_a_call_that_raised_discards_its_runner() -> None:
    pool = RunnerPool(probe_runner)

    def failing(request: dict[str, Any]) -> dict[str, Any]:
        raise ConnectionError("the gateway is gone")

    with pytest.raises(ConnectionError), pool.checkout("probe", "acme", [], failing) as runner:
        runner.call_tool("echo", PROBE_REQUEST)

    assert pool.discarded == 1
    assert pool.idle(("probe", "acme", ())) == 0


def test_the_pool_keeps_at_most_per_key_idle_runners_and_keys_keys(hollowbrook: dict[str, Any]) -> None:
    pool = RunnerPool(make_runner, per_key=2, keys=2)
    digest = (hollowbrook["digest"],)
    with (
        pool.checkout("inprocess", "a", [hollowbrook], answering("1")),
        pool.checkout("inprocess", "a", [hollowbrook], answering("2")),
        pool.checkout("inprocess", "a", [hollowbrook], answering("3")),
    ):
        pass
    assert pool.idle(("inprocess", "a", digest)) == 2

    for tenant in ("b", "c"):
        with pool.checkout("inprocess", tenant, [hollowbrook], answering(tenant)):
            pass

    assert pool.idle(("inprocess", "a", digest)) == 0  # the least recently used key went first
    assert pool.idle(("inprocess", "b", digest)) == 1
    assert pool.idle(("inprocess", "c", digest)) == 1
