"""The model adapters report the provider's token counts as ``usage``, which ``skillhouse eval`` sums."""

from __future__ import annotations

from tests.host.models.fake_provider import fake_provider

from skillhouse.host.models import AnthropicMessagesModel, OpenAIChatModel

REQUEST = {"system": "You book rooms.", "messages": [{"role": "user", "content": "Book room 2."}], "tools": []}


def test_chat_completions_usage_is_reported_as_input_and_output_tokens() -> None:
    with fake_provider() as provider:
        provider.reply({"choices": [{"message": {"role": "assistant", "content": "Done."}}],
                        "usage": {"prompt_tokens": 812, "completion_tokens": 31, "total_tokens": 843}})
        provider.reply({"choices": [{"message": {"role": "assistant", "content": "Done."}}]})
        model = OpenAIChatModel("small", base_url=provider.url)
        assert model.complete(REQUEST) == {"content": "Done.", "tool_calls": [],
                                           "usage": {"input_tokens": 812, "output_tokens": 31}}
        # a server that counts nothing: no usage, rather than zeros it did not say
        assert "usage" not in model.complete(REQUEST)


def test_messages_api_usage_is_reported_and_a_count_that_is_not_a_whole_number_is_zero() -> None:
    with fake_provider() as provider:
        provider.reply({"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "Done."}],
                        "usage": {"input_tokens": 1200, "output_tokens": "many"}})
        model = AnthropicMessagesModel("claude-test", api_key="sk-ant-test", base_url=provider.url)
        assert model.complete(REQUEST)["usage"] == {"input_tokens": 1200, "output_tokens": 0}
