"""The Messages API adapter against a fake Anthropic server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.host.models.fake_provider import FakeProvider, fake_provider

from skillhouse.host.models import AnthropicMessagesModel

KEY = "sk-ant-canary-0123456789"
SCHEMA = {"type": "object", "properties": {"room_id": {"type": "integer"}}, "required": ["room_id"]}
BOOK = {"name": "hollowbrook_create_booking", "description": "Book a room.", "parameters": SCHEMA}
LOAD = {"name": "load_tools", "description": "Load tools.", "parameters": {"type": "object", "properties": {}}}
USER = {"role": "user", "content": "Book room 2."}


def message(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": list(blocks), "stop_reason": "end_turn"}


def request(messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"system": "You book rooms.", "messages": messages or [USER], "tools": [LOAD], "deferred": [BOOK]}


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with fake_provider() as fake:
        yield fake


def model_at(provider: FakeProvider, **options: Any) -> AnthropicMessagesModel:
    return AnthropicMessagesModel("claude-test", api_key=KEY, base_url=provider.url, **options)


def test_the_request_has_the_system_prompt_apart_the_tools_with_input_schema_and_the_headers(
    provider: FakeProvider,
) -> None:
    provider.reply(message({"type": "text", "text": "Which dates?"}))
    assert model_at(provider).complete(request()) == {"content": "Which dates?", "tool_calls": []}
    sent = provider.received[0]
    assert sent.path == "/v1/messages"
    assert (sent.headers["x-api-key"], sent.headers["anthropic-version"]) == (KEY, "2023-06-01")
    assert "anthropic-beta" not in sent.headers
    assert sent.body == {
        "model": "claude-test", "max_tokens": 4096, "system": "You book rooms.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Book room 2."}]}],
        "tools": [{"name": "load_tools", "description": "Load tools.", "input_schema": LOAD["parameters"]}],
    }


def test_calls_go_back_as_tool_use_and_their_results_as_one_user_turn_of_tool_results(provider: FakeProvider) -> None:
    provider.reply(message({"type": "text", "text": "Booked."}))
    refusal = json.dumps({"error": {"code": "invalid-arguments", "message": "room_id is required"}})
    messages = [
        USER,
        {"role": "assistant", "content": "Booking twice.", "tool_calls": [
            {"id": "tu_1", "name": "hollowbrook_create_booking", "arguments": {"room_id": 2}},
            {"id": "tu_2", "name": "hollowbrook_create_booking", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "tu_1", "content": '{"status": 201, "body": "{}"}'},
        {"role": "tool", "tool_call_id": "tu_2", "content": refusal},
        {"role": "user", "content": "Thanks."},
    ]
    model_at(provider).complete(request(messages))
    assert provider.received[0].body["messages"][1:] == [
        {"role": "assistant", "content": [
            {"type": "text", "text": "Booking twice."},
            {"type": "tool_use", "id": "tu_1", "name": "hollowbrook_create_booking", "input": {"room_id": 2}},
            {"type": "tool_use", "id": "tu_2", "name": "hollowbrook_create_booking", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_1", "content": '{"status": 201, "body": "{}"}'},
            {"type": "tool_result", "tool_use_id": "tu_2", "content": refusal, "is_error": True},
            {"type": "text", "text": "Thanks."}]},
    ]


def test_tool_use_blocks_in_the_answer_become_neutral_calls(provider: FakeProvider) -> None:
    provider.reply(message(
        {"type": "thinking", "thinking": "room 2", "signature": "s"},
        {"type": "text", "text": "Loading."},
        {"type": "tool_use", "id": "toolu_1", "name": "load_tools", "input": {"names": ["create_booking"]}},
    ))
    assert model_at(provider).complete(request()) == {
        "content": "Loading.",
        "tool_calls": [{"id": "toolu_1", "name": "load_tools", "arguments": {"names": ["create_booking"]}}],
    }


def test_deferred_loading_sends_the_tool_search_tool_and_deferred_tools_with_the_beta_header(
    provider: FakeProvider,
) -> None:
    provider.reply(message({"type": "text", "text": "ok"}))
    model_at(provider, deferred=True).complete(request())
    sent = provider.received[0]
    assert sent.headers["anthropic-beta"] == "advanced-tool-use-2025-11-20"
    search, *tools = sent.body["tools"]
    assert search["type"].startswith("tool_search_tool_") and "defer_loading" not in search
    assert tools == [
        {"name": "load_tools", "description": "Load tools.", "input_schema": LOAD["parameters"]},
        {"name": "hollowbrook_create_booking", "description": "Book a room.", "input_schema": SCHEMA,
         "defer_loading": True},
    ]


def test_the_tool_search_blocks_are_sent_back_before_the_call_they_led_to(provider: FakeProvider) -> None:
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex",
              "input": {"query": "booking"}}
    found = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
             "content": {"type": "tool_search_tool_search_result",
                         "tool_references": [{"type": "tool_reference", "tool_name": "hollowbrook_create_booking"}]}}
    call = {"type": "tool_use", "id": "toolu_9", "name": "hollowbrook_create_booking", "input": {"room_id": 2}}
    provider.reply(message(search, found, call))
    provider.reply(message({"type": "text", "text": "Booked."}))
    model = model_at(provider, deferred=True)
    first = model.complete(request())
    assert first["tool_calls"] == [{"id": "toolu_9", "name": "hollowbrook_create_booking", "arguments": {"room_id": 2}}]
    messages = [USER, {"role": "assistant", **first},
                {"role": "tool", "tool_call_id": "toolu_9", "content": '{"status": 201}'}]
    model.complete(request(messages))
    assert provider.received[1].body["messages"][1] == {"role": "assistant", "content": [search, found, call]}


def test_an_http_error_becomes_a_model_error_and_the_key_never_shows(provider: FakeProvider) -> None:
    provider.reply({"type": "error", "error": {"type": "authentication_error", "message": f"bad key {KEY}"}},
                   status=401)
    answer = model_at(provider).complete(request())
    assert (answer["error"]["code"], answer["error"]["status"]) == ("model-http-error", 401)
    assert KEY not in json.dumps(answer) and KEY not in repr(model_at(provider))


@pytest.mark.parametrize("body", [{"content": "text"}, {"content": [{"type": "tool_use", "input": {}}]}, {"id": 1}])
def test_an_answer_without_usable_content_blocks_is_malformed(provider: FakeProvider, body: dict[str, Any]) -> None:
    provider.reply(body)
    assert model_at(provider).complete(request())["error"]["code"] == "model-malformed-answer"
