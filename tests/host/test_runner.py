"""Runners and the turn host: the interface, the factory, and a booking over loopback HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.conftest import HOLLOWBROOK
from tests.gateway.wire import json_upstream
from tests.hollowbrook import running_hollowbrook

from skillhouse.compiler import compile_dir
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.guest import Catalogue
from skillhouse.host import InProcessRunner, TurnHost, UnknownRunner, make_runner

DECLARED_ORIGIN = "http://hollowbrook.local:8084"


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors
    return compiled.document


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


def loopback_fetch(house: HollowbrookHTTPServer) -> Any:
    """Sends the guest's request to the house on loopback (the gateway's place, for this test)."""

    def fetch(request: dict[str, Any]) -> dict[str, Any]:
        url = request["url"].replace(DECLARED_ORIGIN, house.url)
        response = httpx.request(request["method"], url, headers=request["headers"], content=request["body"], timeout=5)
        return {"status": response.status_code, "headers": dict(response.headers), "body": response.text}

    return json_upstream(fetch)


def test_make_runner_gives_the_in_process_runner(release: dict[str, Any]) -> None:
    runner = make_runner(TurnHost([release], fetch=lambda request: {}), "inprocess")
    assert isinstance(runner, InProcessRunner)
    assert len(json.loads(runner.list_tools())["deferred"]) == 5


def test_make_runner_refuses_a_kind_it_does_not_know(release: dict[str, Any]) -> None:
    with pytest.raises(UnknownRunner):
        make_runner(TurnHost([release], fetch=lambda request: {}), "jvm")


def test_the_turn_host_hands_over_only_what_a_turn_needs(release: dict[str, Any]) -> None:
    host = TurnHost([release], fetch=lambda request: {})
    line = host.skill_operations().partition("\n")[0]
    (bound,) = json.loads(line)
    assert sorted(bound) == ["description", "documents", "instructions", "operations", "skill", "version"]
    catalogue = Catalogue.from_text(host.skill_operations(), [])
    (skill,) = catalogue.skills.values()
    assert list(skill.operations) == release["operations"]
    assert [catalogue.operations[op["tool_name"]] for op in release["operations"]] == release["operations"]
    assert [t["name"] for t in json.loads(host.eager_tools())] == ["load_tools", "read_object", "fetch_url"]


def test_a_turn_without_a_model_stops_with_the_hosts_error(release: dict[str, Any]) -> None:
    runner = make_runner(TurnHost([release], fetch=lambda request: {}))
    turn = json.loads(runner.run_turn(json.dumps({"prompt": "hello"})))
    assert turn["stopped"] == "model-error"
    assert turn["error"]["code"] == "no-model"


def test_a_booking_through_the_guest_reaches_the_house_as_a_json_post(
    release: dict[str, Any], house: HollowbrookHTTPServer
) -> None:
    host = TurnHost([release], fetch=loopback_fetch(house))
    runner = make_runner(host)
    runner.call_tool("load_tools", json.dumps({"names": ["create_booking"]}))
    stay = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2031-06-01", "departure": "2031-06-03"}
    answer = json.loads(runner.call_tool("hollowbrook_create_booking", json.dumps(stay)))
    assert answer["status"] == 201, answer
    booking = json.loads(answer["body"])
    cancelled = json.loads(runner.call_tool("cancel_booking", json.dumps({"booking_id": booking["booking_id"]})))
    assert cancelled["status"] == 200, cancelled
    assert [(r["method"], r["headers"].get("Content-Type")) for r in host.requests] == [
        ("POST", "application/json"),
        ("DELETE", None),
    ]
