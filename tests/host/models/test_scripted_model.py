"""The scripted model and the factory that picks a model from ``SKILLHOUSE_MODEL``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillhouse.host.models import (
    PLANS,
    Answer,
    AnthropicMessagesModel,
    Call,
    Calls,
    ModelConfigError,
    OpenAIChatModel,
    ScriptedModel,
    model_from_env,
    model_from_spec,
)

BOOKED = {"status": 201, "headers": {}, "body": json.dumps({"booking_id": "bk_0007"})}


def assistant(answer: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", **answer}


def test_each_step_is_played_by_how_many_assistant_turns_came_before() -> None:
    model = ScriptedModel([
        Calls([Call("hollowbrook_create_booking", {"room_id": 2})], say="Booking."),
        Answer(lambda t: f"Booked {t.response_body('hollowbrook_create_booking')['booking_id']}."),
    ], name="p")
    first = model.complete({"messages": [{"role": "user", "content": "Book."}]})
    assert first == {"content": "Booking.", "tool_calls": [
        {"id": "p_1_1", "name": "hollowbrook_create_booking", "arguments": {"room_id": 2}}]}
    transcript = [{"role": "user", "content": "Book."}, assistant(first),
                  {"role": "tool", "tool_call_id": "p_1_1", "content": json.dumps(BOOKED)}]
    assert model.complete({"messages": transcript}) == {"content": "Booked bk_0007.", "tool_calls": []}
    assert model.complete({"messages": transcript}) == {"content": "Booked bk_0007.", "tool_calls": []}


def test_a_plan_played_out_answers_plan_exhausted() -> None:
    model = ScriptedModel([Answer("done")])
    answer = model.complete({"messages": [{"role": "user", "content": "x"}, assistant({"content": "done"})]})
    assert answer["error"]["code"] == "plan-exhausted"


def test_a_step_whose_arguments_need_a_result_that_never_came_answers_plan_failed() -> None:
    model = ScriptedModel([Calls([Call("hollowbrook_charge", lambda t: {"booking_id": t.last_result("x")})])])
    assert model.complete({"messages": [{"role": "user", "content": "x"}]})["error"]["code"] == "plan-failed"


def test_every_named_plan_starts_with_a_tool_call_and_ends_with_an_answer() -> None:
    for name, plan in PLANS.items():
        steps = plan()
        assert isinstance(steps[0], Calls) and isinstance(steps[-1], Answer), name


@pytest.mark.parametrize(
    ("spec", "env", "kind"),
    [
        ("scripted", {}, ScriptedModel),
        ("scripted:resent-booking", {}, ScriptedModel),
        ("openai:qwen2.5", {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, OpenAIChatModel),
        ("openai:gpt-4.1-mini", {"OPENAI_API_KEY": "sk-x"}, OpenAIChatModel),
        ("anthropic:claude-sonnet-4-5", {"ANTHROPIC_API_KEY": "sk-ant-x"}, AnthropicMessagesModel),
        ("anthropic:claude", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, AnthropicMessagesModel),
    ],
)
def test_the_factory_builds_the_model_the_spec_names(spec: str, env: dict[str, str], kind: type) -> None:
    assert isinstance(model_from_spec(spec, env), kind)


def test_the_factory_reads_the_base_url_and_deferred_loading_from_the_environment() -> None:
    model = model_from_env({"SKILLHOUSE_MODEL": "openai:llama", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"})
    assert isinstance(model, OpenAIChatModel) and model.url == "http://127.0.0.1:8000/v1/chat/completions"
    claude = model_from_env({"SKILLHOUSE_MODEL": "anthropic:c", "ANTHROPIC_API_KEY": "k", "SKILLHOUSE_DEFERRED": "1"})
    assert isinstance(claude, AnthropicMessagesModel) and claude.deferred
    assert isinstance(model_from_env({}), ScriptedModel)


@pytest.mark.parametrize(
    ("spec", "env"),
    [("openai", {}), ("anthropic:claude", {}), ("gemini:pro", {}), ("scripted:nope", {}),
     ("openai:m", {"SKILLHOUSE_MODEL_TIMEOUT": "soon"}), ("openai:m", {"SKILLHOUSE_MODEL_TIMEOUT": "0"})],
)
def test_the_factory_refuses_a_spec_it_cannot_build(spec: str, env: dict[str, str]) -> None:
    with pytest.raises(ModelConfigError):
        model_from_spec(spec, env)
