"""Hollowbrook end to end: scripted plans run by the guest's agent loop against the real house.

Each of the source document's three failures is played by a scripted model, in both guest runners,
against the Hollowbrook server on loopback: directly (httpx) where the gateway plays no part, and
through the gateway where it does (idempotency, approvals).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet
from tests.gateway.wire import json_upstream
from tests.hollowbrook import running_hollowbrook

from skillhouse.compiler import compile_dir
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.gateway.exchange import FetchAnswer, FetchRefusal, FetchRequest, UnreadRequest, read_request
from skillhouse.host import RUNNER_KINDS, TurnHost, make_runner
from skillhouse.host.models import PROMPT, scripted_model
from skillhouse.store.database import open_database

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
DECLARED = "http://hollowbrook.local:8084"
TENANT = "tenant-demo"
Fetch = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, [str(e) for e in errors]
    return compiled.document


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture(params=["inprocess", "wasm"])
def runner_kind(request: pytest.FixtureRequest) -> str:
    assert request.param in RUNNER_KINDS
    return str(request.param)


@pytest.fixture
def direct(house: HollowbrookHTTPServer) -> Iterator[Fetch]:
    """Requests sent straight to the house with httpx: no egress rule, no idempotency, no approval."""
    with httpx.Client(timeout=10) as client:

        def fetch(request: dict[str, Any]) -> dict[str, Any]:
            url = str(request["url"]).replace(DECLARED, house.url, 1)
            response = client.request(request["method"], url, headers=request["headers"], content=request["body"])
            return {"status": response.status_code, "headers": dict(response.headers), "body": response.text}

        yield json_upstream(fetch)


@pytest.fixture
def gateway(house: HollowbrookHTTPServer, tmp_path: Path) -> Iterator[Gateway]:
    database = open_database(f"sqlite:///{tmp_path / 'gateway.db'}")
    resolve = {("hollowbrook.local", 8084): f"127.0.0.1:{house.port}"}
    gw = Gateway(database, GatewayConfig(resolve=resolve), secret_key=Fernet.generate_key().decode())
    yield gw
    gw.close()
    database.dispose()


def through(gateway: Gateway, release: dict[str, Any]) -> Fetch:
    turn = TurnContext(TENANT, "turn-1", BoundReleases([release]))
    return lambda request: gateway.fetch(turn, request)


def losing_first_booking_answer(fetch: Fetch) -> Fetch:
    """``fetch``, except the answer to the first booking is lost on its way back to the guest."""
    lost: list[bool] = []

    def send(request: FetchRequest | UnreadRequest) -> FetchAnswer:
        answer = fetch(request)
        if isinstance(request, FetchRequest) and request.method == "POST" and request.url.endswith("/bookings") and not lost:
            lost.append(True)
            return FetchRefusal("connection-lost", "the connection closed before the answer came")
        return answer

    return send


def run_plan(plan: str, release: dict[str, Any], fetch: Fetch, kind: str) -> tuple[dict[str, Any], TurnHost]:
    host = TurnHost([release], fetch, scripted_model(plan).complete)
    turn = json.loads(make_runner(host, kind).run_turn(json.dumps({"prompt": PROMPT, "max_steps": 12})))
    return turn, host


def results(turn: dict[str, Any], tool: str) -> list[Any]:
    names = {c["id"]: c["name"] for m in turn["messages"] if m["role"] == "assistant" for c in m["tool_calls"]}
    return [json.loads(m["content"]) for m in turn["messages"]
            if m["role"] == "tool" and names.get(m["tool_call_id"]) == tool]


def posts(house: HollowbrookHTTPServer, path: str) -> list[dict[str, Any]]:
    return [r for r in house.received if r["method"] == "POST" and r["path"] == path]


def test_load_tools_for_two_operation_names_loads_them_and_the_booking_is_one_call(
    release: dict[str, Any], house: HollowbrookHTTPServer, direct: Fetch, runner_kind: str
) -> None:
    turn, _ = run_plan("load-operations", release, direct, runner_kind)
    assert turn["stopped"] == "answer", turn.get("error")
    (loaded,) = results(turn, "load_tools")
    assert [t["name"] for t in loaded["loaded"]] == ["hollowbrook_check_availability", "hollowbrook_create_booking"]
    assert "not_loaded" not in loaded
    (availability,) = results(turn, "hollowbrook_check_availability")
    assert availability["body"]["available"] is True  # the loop hands the model the body parsed
    (booking,) = house.house.bookings()
    assert booking["booking_id"] in turn["final"]
    # the request the declaration describes, Content-Type and all: no 415 this time
    assert posts(house, "/bookings")[0]["content_type"] == "application/json"


def test_a_fetch_of_a_skill_file_on_an_invented_host_is_refused_with_a_pointer_to_read_object(
    release: dict[str, Any], house: HollowbrookHTTPServer, direct: Fetch, runner_kind: str
) -> None:
    turn, host = run_plan("fetch-skill-file", release, direct, runner_kind)
    assert turn["stopped"] == "answer", turn.get("error")
    (refusal,) = results(turn, "fetch_url")
    assert refusal["error"]["code"] == "use-read-object"
    assert refusal["error"]["path"] == "skill/hollowbrook/list_rooms.md"
    (document,) = results(turn, "read_object")
    assert "List the guesthouse's rooms" in document["ok"]
    assert host.requests == [] and house.received == []


def test_a_booking_resent_twice_after_a_lost_answer_takes_one_room_through_the_gateway(
    release: dict[str, Any], house: HollowbrookHTTPServer, gateway: Gateway, runner_kind: str
) -> None:
    fetch = losing_first_booking_answer(through(gateway, release))
    turn, _ = run_plan("resent-booking", release, fetch, runner_kind)
    assert turn["stopped"] == "answer", turn.get("error")
    lost, first_resend, second_resend = results(turn, "hollowbrook_create_booking")
    assert lost["error"]["code"] == "connection-lost"
    assert (first_resend["replayed"], second_resend["replayed"]) == (True, True)
    (booking,) = house.house.bookings()
    assert first_resend["body"]["booking_id"] == booking["booking_id"]
    assert second_resend["body"]["booking_id"] == booking["booking_id"]
    assert len(posts(house, "/bookings")) == 1
    assert booking["idempotency_key"]


def test_without_the_gateway_the_same_resends_take_three_rooms(
    release: dict[str, Any], house: HollowbrookHTTPServer, direct: Fetch
) -> None:
    turn, _ = run_plan("resent-booking", release, losing_first_booking_answer(direct), "inprocess")
    assert turn["stopped"] == "answer", turn.get("error")
    assert len(house.house.bookings()) == 3  # why the gateway's idempotency exists


def test_the_demo_books_once_and_its_charge_is_held_then_runs_once_when_approved(
    release: dict[str, Any], house: HollowbrookHTTPServer, gateway: Gateway, runner_kind: str
) -> None:
    fetch = through(gateway, release)
    turn, host = run_plan("demo", release, fetch, runner_kind)
    assert turn["stopped"] == "answer", turn.get("error")
    rooms = results(turn, "hollowbrook_list_rooms")[0]["body"]["rooms"]
    assert all(room["sleeps"] >= 2 for room in rooms)
    first, resent = results(turn, "hollowbrook_create_booking")
    assert first["status"] == 201 and resent["replayed"] is True
    (booking,) = house.house.bookings()
    (held,) = results(turn, "hollowbrook_charge")
    assert held["error"]["code"] == "approval-required"
    assert house.house.charges() == []
    assert booking["booking_id"] in turn["final"] and held["error"]["approval_id"] in turn["final"]

    gateway.approvals.decide(TENANT, held["error"]["approval_id"], approve=True, by="test")
    charge_request = next(r for r in host.requests if r["url"].endswith("/charges"))
    charged, again = (fetch(read_request(charge_request)).document() for _ in range(2))
    assert charged["status"] == 201 and again.get("replayed") is True
    (charge,) = house.house.charges()
    assert (charge["booking_id"], charge["amount_cents"]) == (booking["booking_id"], booking["total_cents"])
