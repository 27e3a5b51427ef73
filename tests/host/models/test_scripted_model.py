"""The scripted model and the factory that picks the model ``Settings.model`` (``SKILLHOUSE_MODEL``) names."""

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
    ModelNotConfigured,
    OpenAIChatModel,
    ScriptedModel,
    model_from_settings,
)
from skillhouse.settings import Settings

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
    assert isinstance(model_from_settings(Settings.from_env({"SKILLHOUSE_MODEL": spec, **env})), kind)


def test_the_factory_takes_the_base_url_timeout_and_deferred_loading_from_the_settings() -> None:
    model = model_from_settings(Settings.from_env({"SKILLHOUSE_MODEL": "openai:llama", "SKILLHOUSE_MODEL_TIMEOUT": "7",
                                                   "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"}))
    assert isinstance(model, OpenAIChatModel) and model.url == "http://127.0.0.1:8000/v1/chat/completions"
    claude = model_from_settings(Settings.from_env({"SKILLHOUSE_MODEL": "anthropic:c", "ANTHROPIC_API_KEY": "k",
                                                    "SKILLHOUSE_DEFERRED": "1"}))
    assert isinstance(claude, AnthropicMessagesModel) and claude.deferred


def test_no_model_is_configured_unless_one_is_named() -> None:
    with pytest.raises(ModelNotConfigured) as refused:
        model_from_settings(Settings.from_env({}))
    assert refused.value.code == "model-not-configured"
    assert "SKILLHOUSE_MODEL" in str(refused.value) and "openai:MODEL" in str(refused.value)
    with pytest.raises(ModelNotConfigured):
        model_from_settings(Settings())


@pytest.mark.parametrize("spec", ["openai", "anthropic:claude", "gemini:pro", "scripted:nope"])
def test_the_factory_refuses_a_spec_it_cannot_build(spec: str) -> None:
    with pytest.raises(ModelConfigError) as refused:
        model_from_settings(Settings.from_env({"SKILLHOUSE_MODEL": spec}))
    assert refused.value.code == "model-unavailable"


@pytest.mark.parametrize("timeout", ["soon", "0", "-1"])
def test_a_model_timeout_that_is_no_positive_number_of_seconds_is_refused_naming_its_variable(timeout: str) -> None:
    with pytest.raises(ValueError, match="SKILLHOUSE_MODEL_TIMEOUT"):
        Settings.from_env({"SKILLHOUSE_MODEL": "openai:m", "SKILLHOUSE_MODEL_TIMEOUT": timeout})
