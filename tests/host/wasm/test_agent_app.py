"""The component's app module run as ordinary Python over a turn host standing in for ``wit_world``.

What it adds to the guest is the component's side of two contracts of ``host/wit/agent.wit``: a tool
call whose answer is ``fetch-url``'s comes out as its request after ``SEND``, and a listing is made
again only once a tool was loaded. Both must answer what the in-process guest answers.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.gateway.wire import json_upstream

from skillhouse.guest import Guest
from skillhouse.guest.host import SEND, read_sent
from skillhouse.host import InProcessRunner, TurnHost
from skillhouse.host.wasm_build import BuiltComponent
from skillhouse.host.wasm_runner import WasmRunner
from skillhouse.json_types import FetchRequestDocument

BOOKING = json.dumps({"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-03"})


@json_upstream
def created(request: dict[str, Any]) -> dict[str, Any]:
    return {"status": 201, "headers": {}, "body": json.dumps(request)}


AppOf = Callable[[TurnHost], Any]


@pytest.fixture
def app_of(monkeypatch: pytest.MonkeyPatch) -> AppOf:
    """``app_of(host)``: the app module's exports, imported afresh over ``host`` as its ``wit_world`` host."""

    def load(host: TurnHost) -> Any:
        monkeypatch.setitem(sys.modules, "wit_world.imports.host", host)
        monkeypatch.delitem(sys.modules, "skillhouse.host.wasm_app.agent_app", raising=False)
        module: ModuleType = importlib.import_module("skillhouse.host.wasm_app.agent_app")
        return module.WitWorld()

    return load


def test_a_call_whose_answer_is_fetch_urls_hands_back_its_request_after_send(
    hollowbrook: dict[str, Any], app_of: AppOf
) -> None:
    host = TurnHost([hollowbrook], created)
    world = app_of(host)
    inprocess = TurnHost([hollowbrook], created)
    answer = Guest(inprocess).call_tool("hollowbrook_create_booking", BOOKING)

    for sent in range(2):  # the first call binds the exports; the second goes straight to them
        handed = world.call_tool("hollowbrook_create_booking", BOOKING)
        assert handed.startswith(SEND)
        assert len(host.requests) == sent  # the guest sent nothing itself
        assert host.fetch_request(read_sent(handed)) == answer
    assert host.requests == inprocess.requests * 2


def test_a_call_that_sends_nothing_answers_as_the_guest_does(hollowbrook: dict[str, Any], app_of: AppOf) -> None:
    world = app_of(TurnHost([hollowbrook], created))
    guest = Guest(TurnHost([hollowbrook], created))
    for name, arguments in [("hollowbrook_create_booking", '{"room_id": "x"}'), ("load_tools", '{"names": ["x"]}')]:
        assert world.call_tool(name, arguments) == guest.call_tool(name, arguments)


def test_the_listing_is_made_again_only_after_a_tool_was_loaded(hollowbrook: dict[str, Any], app_of: AppOf) -> None:
    world = app_of(TurnHost([hollowbrook], created))
    guest = Guest(TurnHost([hollowbrook], created))
    first = world.list_tools()
    assert first == guest.list_tools()
    assert world.list_tools() is first  # kept, not put together again
    world.call_tool("hollowbrook_create_booking", '{"room_id": "x"}')  # refused, but loads the tool
    guest.call_tool("hollowbrook_create_booking", '{"room_id": "x"}')
    loaded = world.list_tools()
    assert loaded == guest.list_tools() != first
    world.call_tool("load_tools", '{"names": ["list_rooms"]}')
    guest.call_tool("load_tools", '{"names": ["list_rooms"]}')
    assert world.list_tools() == guest.list_tools() != loaded


def test_the_component_crosses_into_the_host_once_per_sent_call_the_runner_sending_it(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> None:
    inside: list[bool] = []

    class Host(TurnHost):
        def fetch_request(self, request: FetchRequestDocument) -> str:
            # every send reaches this (fetch_url reads its text into it); wasm_calls' callback is on the
            # stack when the guest itself called a host function
            inside.append(any(frame.name == "host_function" for frame in traceback.extract_stack()))
            return super().fetch_request(request)

    wasm = WasmRunner(Host([hollowbrook], created), cache_dir=cache_dir)
    inprocess = InProcessRunner(TurnHost([hollowbrook], created))
    assert wasm.call_tool("hollowbrook_create_booking", BOOKING) == inprocess.call_tool("hollowbrook_create_booking", BOOKING)
    fetch = json.dumps({"url": "https://weather.example/today"})
    assert wasm.call_tool("fetch_url", fetch) == inprocess.call_tool("fetch_url", fetch)
    assert inside == [False, False]
    wasm.close()


def test_a_host_without_fetch_request_gets_the_text_the_guests_fetch_url_would_have(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> None:
    texts: list[str] = []

    class TextOnly(TurnHost):
        fetch_request = None  # type: ignore[assignment]  # the WIT contract's host: fetch_url alone

        def fetch_url(self, request: str) -> str:
            texts.append(request)
            return TurnHost.fetch_request(self, json.loads(request))

    wasm = WasmRunner(TextOnly([hollowbrook], created), cache_dir=cache_dir)
    inprocess = TurnHost([hollowbrook], created)
    assert wasm.call_tool("hollowbrook_create_booking", BOOKING) == Guest(inprocess).call_tool(
        "hollowbrook_create_booking", BOOKING
    )
    assert [json.loads(text) for text in texts] == inprocess.requests
    assert texts == [json.dumps(request, ensure_ascii=False) for request in inprocess.requests]
    wasm.close()
