"""The Chat Completions adapter against a fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from tests.host.models.fake_provider import FakeProvider, Reply, fake_provider

from skillhouse.host.models import OpenAIChatModel

KEY = "sk-test-canary-0123456789"
BOOK = {"name": "hollowbrook_create_booking", "description": "Book a room.",
        "parameters": {"type": "object", "properties": {"room_id": {"type": "integer"}},
                       "required": ["room_id"], "additionalProperties": False}}
LOAD = {"name": "load_tools", "description": "Load tools.",
        "parameters": {"type": "object", "properties": {"names": {"type": "array"}}}}


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}]}


def request(messages: list[dict[str, Any]] | None = None, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"system": "You book rooms.", "messages": messages or [{"role": "user", "content": "Book room 2."}],
            "tools": [LOAD] if tools is None else tools, "deferred": [BOOK]}


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with fake_provider() as fake:
        yield fake


def model_at(provider: FakeProvider, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel("small-model", base_url=f"{provider.url}/v1", api_key=KEY, **options)


def test_the_request_carries_the_system_prompt_the_tools_in_function_shape_and_the_key(provider: FakeProvider) -> None:
    provider.reply(completion({"content": "Which dates?"}))
    answer = model_at(provider).complete(request())
    assert answer == {"content": "Which dates?", "tool_calls": []}
    sent = provider.received[0]
    assert (sent.path, sent.headers["authorization"]) == ("/v1/chat/completions", f"Bearer {KEY}")
    assert sent.body == {
        "model": "small-model",
        "messages": [{"role": "system", "content": "You book rooms."}, {"role": "user", "content": "Book room 2."}],
        "tools": [{"type": "function", "function": LOAD}],
    }


def test_calls_and_their_results_go_back_as_tool_calls_and_tool_messages(provider: FakeProvider) -> None:
    provider.reply(completion({"content": "Booked."}))
    messages = [
        {"role": "user", "content": "Book room 2."},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "name": "hollowbrook_create_booking", "arguments": {"room_id": 2}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": 201, "body": "{}"}'},
    ]
    model_at(provider).complete(request(messages, tools=[LOAD, BOOK]))
    sent = provider.received[0].body
    assert sent["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "hollowbrook_create_booking", "arguments": '{"room_id": 2}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": 201, "body": "{}"}'},
    ]
    assert [t["function"]["name"] for t in sent["tools"]] == ["load_tools", "hollowbrook_create_booking"]


def test_tool_calls_in_the_answer_become_neutral_calls_with_decoded_arguments(provider: FakeProvider) -> None:
    provider.reply(completion({"content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "load_tools", "arguments": '{"names": ["create_booking"]}'}},
        {"type": "function", "function": {"name": "hollowbrook_create_booking", "arguments": {"room_id": 2}}},
        {"id": "call_c", "type": "function", "function": {"name": "hollowbrook_create_booking", "arguments": "{room"}},
    ]}))
    answer = model_at(provider).complete(request())
    assert answer == {"content": None, "tool_calls": [
        {"id": "call_a", "name": "load_tools", "arguments": {"names": ["create_booking"]}},
        {"id": "call_1", "name": "hollowbrook_create_booking", "arguments": {"room_id": 2}},
        # text that is not JSON goes to the guest as it is, which tells the model what is wrong
        {"id": "call_c", "name": "hollowbrook_create_booking", "arguments": "{room"},
    ]}


def test_no_tools_means_no_tools_field_and_no_key_means_no_authorization(provider: FakeProvider) -> None:
    provider.reply(completion({"content": "Hello."}))
    OpenAIChatModel("llama", base_url=provider.url).complete(request(tools=[]))
    sent = provider.received[0]
    assert sent.path == "/chat/completions"
    assert "tools" not in sent.body and "authorization" not in sent.headers


def test_an_http_error_becomes_a_model_error_with_the_status_and_no_key(provider: FakeProvider) -> None:
    provider.reply({"error": {"message": f"Incorrect API key provided: {KEY}"}}, status=401)
    answer = model_at(provider).complete(request())
    assert (answer["error"]["code"], answer["error"]["status"]) == ("model-http-error", 401)
    assert KEY not in json.dumps(answer)


@pytest.mark.parametrize(
    "reply",
    [Reply(raw=b"<html>gateway</html>"), Reply(body={"choices": []}), Reply(body=[1, 2]),
     Reply(body=completion({"content": None, "tool_calls": [{"id": "x", "function": {}}]})),
     Reply(body=completion({"content": {"text": "hi"}}))],
)
def test_an_answer_that_is_not_a_completion_is_a_malformed_answer(provider: FakeProvider, reply: Reply) -> None:
    provider.replies.append(reply)
    assert model_at(provider).complete(request())["error"]["code"] == "model-malformed-answer"


def test_an_error_object_in_a_200_answer_is_a_model_error(provider: FakeProvider) -> None:
    provider.reply({"error": "model 'llama' not found, try pulling it first"})
    assert model_at(provider).complete(request())["error"]["code"] == "model-http-error"


def test_a_provider_that_does_not_answer_in_time_is_a_timeout(provider: FakeProvider) -> None:
    provider.replies.append(Reply(body=completion({"content": "late"}), hold=threading.Event()))
    assert model_at(provider, timeout=0.2).complete(request())["error"]["code"] == "model-timeout"


def test_a_provider_that_cannot_be_reached_is_unreachable() -> None:
    with fake_provider() as gone:
        url = gone.url
    answer = OpenAIChatModel("m", base_url=url, api_key=KEY).complete(request())
    assert answer["error"]["code"] == "model-unreachable"
    assert KEY not in json.dumps(answer)


def test_a_request_that_is_not_neutral_is_refused_without_sending(provider: FakeProvider) -> None:
    answer = model_at(provider).complete({"messages": [{"role": "robot"}], "tools": []})
    assert answer["error"]["code"] == "model-bad-request"
    assert provider.received == []


def test_the_key_is_not_in_the_adapters_repr(provider: FakeProvider) -> None:
    assert KEY not in repr(model_at(provider))
