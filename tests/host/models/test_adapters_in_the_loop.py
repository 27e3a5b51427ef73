"""Each provider adapter driving the guest's agent loop: a fake provider on loopback decides the
calls in its own wire format, the guest runs them against the Hollowbrook house, and the results go
back to the provider in that format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.gateway.wire import json_upstream
from tests.hollowbrook import running_hollowbrook
from tests.host.models.fake_provider import FakeProvider, fake_provider

from skillhouse.compiler import compile_dir
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.host import TurnHost, make_runner
from skillhouse.host.models import AnthropicMessagesModel, ChatModel, OpenAIChatModel

HOLLOWBROOK = Path(__file__).resolve().parents[3] / "examples" / "hollowbrook"
STAY = {"room_id": 3, "guest_name": "Grace Hopper", "arrival": "2031-07-01", "departure": "2031-07-04"}


@pytest.fixture
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with fake_provider() as fake:
        yield fake


def run_turn(model: ChatModel, house: HollowbrookHTTPServer) -> dict[str, Any]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors

    def fetch(request: dict[str, Any]) -> dict[str, Any]:
        url = str(request["url"]).replace("http://hollowbrook.local:8084", house.url, 1)
        response = httpx.request(request["method"], url, headers=request["headers"], content=request["body"])
        return {"status": response.status_code, "headers": {}, "body": response.text}

    host = TurnHost([compiled.document], json_upstream(fetch), model.complete)
    answer: dict[str, Any] = json.loads(make_runner(host, "inprocess").run_turn(json.dumps({"prompt": "Book it."})))
    return answer


def openai_turn(content: str | None, calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in calls]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def test_a_chat_completions_model_books_a_room_with_load_tools_and_one_call(
    provider: FakeProvider, house: HollowbrookHTTPServer
) -> None:
    provider.reply(openai_turn(None, [("c1", "load_tools", {"names": ["create_booking"]})]))
    provider.reply(openai_turn(None, [("c2", "hollowbrook_create_booking", STAY)]))
    provider.reply(openai_turn("Booked.", []))
    turn = run_turn(OpenAIChatModel("small", base_url=provider.url), house)
    assert (turn["stopped"], turn["final"]) == ("answer", "Booked.")
    (booking,) = house.house.bookings()
    first, second, third = provider.bodies()
    assert "hollowbrook_create_booking" not in [t["function"]["name"] for t in first["tools"]]
    assert "hollowbrook_create_booking" in [t["function"]["name"] for t in second["tools"]]
    result = third["messages"][-1]
    assert (result["role"], result["tool_call_id"]) == ("tool", "c2")
    assert json.loads(result["content"])["body"]["booking_id"] == booking["booking_id"]


def test_an_anthropic_model_with_deferred_loading_calls_a_deferred_operation_directly(
    provider: FakeProvider, house: HollowbrookHTTPServer
) -> None:
    provider.reply({"content": [{"type": "tool_use", "id": "tu1", "name": "hollowbrook_create_booking", "input": STAY}]})
    provider.reply({"content": [{"type": "text", "text": "Booked."}]})
    model = AnthropicMessagesModel("claude", api_key="k", base_url=provider.url, deferred=True)
    turn = run_turn(model, house)
    assert (turn["stopped"], turn["final"]) == ("answer", "Booked.")
    (booking,) = house.house.bookings()
    first, second = provider.bodies()
    deferred = {t["name"] for t in first["tools"] if t.get("defer_loading")}
    assert "hollowbrook_create_booking" in deferred
    (result,) = second["messages"][-1]["content"]
    assert (result["type"], result["tool_use_id"]) == ("tool_result", "tu1")
    assert booking["booking_id"] in result["content"]


def test_a_provider_error_stops_the_turn_with_the_model_error(provider: FakeProvider, house: HollowbrookHTTPServer) -> None:
    provider.reply({"error": {"message": "overloaded"}}, status=529)
    turn = run_turn(AnthropicMessagesModel("claude", api_key="k", base_url=provider.url), house)
    assert turn["stopped"] == "model-error"
    assert (turn["error"]["code"], turn["error"]["status"]) == ("model-http-error", 529)
