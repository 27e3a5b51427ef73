"""An OpenAI-compatible Chat Completions model: OpenAI itself, vLLM, Ollama, llama.cpp's server.

``POST {base_url}/chat/completions`` with the neutral messages in Chat Completions form: the system
prompt as the first message, an assistant turn's calls as ``tool_calls`` with JSON-text
``arguments``, each tool result as a ``role: tool`` message. Chat Completions has no deferred
loading, so only the tools offered now are sent; the rest are reached through ``load_tools``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from skillhouse.host.models.base import (
    DEFAULT_TIMEOUT,
    MalformedAnswer,
    ProviderClient,
    ProviderFailure,
    model_error,
    neutral_messages,
    neutral_tools,
    token_usage,
    tool_arguments,
)
from skillhouse.host.models.tool_formats import openai_chat_tools
from skillhouse.json_types import ChatMessage, JsonObject, ModelAnswer, ModelRequest

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def chat_messages(system: str, messages: list[ChatMessage]) -> list[ChatMessage]:
    """Neutral messages as Chat Completions messages."""
    out: list[ChatMessage] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role = message["role"]
        if role == "user":
            out.append({"role": "user", "content": message.get("content") or ""})
        elif role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": str(message.get("tool_call_id") or ""),
                 "content": message.get("content") or ""}
            )
        else:
            turn: JsonObject = {"role": "assistant", "content": message.get("content")}
            calls = message.get("tool_calls") or []
            if calls:
                turn["tool_calls"] = [
                    {
                        "id": str(call.get("id") or ""),
                        "type": "function",
                        "function": {"name": call["name"], "arguments": _arguments_text(call.get("arguments"))},
                    }
                    for call in calls
                ]
            out.append(turn)
    return out


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False)


def neutral_answer(answer: JsonObject) -> ModelAnswer:
    """The first choice of a Chat Completions answer as ``{"content", "tool_calls"}``."""
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedAnswer("openai", "the answer has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedAnswer("openai", "choices[0] has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedAnswer("openai", "choices[0].message.content is not text")
    calls: list[JsonObject] = []
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise MalformedAnswer("openai", f"tool_calls[{index}] has no function name")
        calls.append(
            {
                # some local servers leave the id out; the loop needs one to pair the result
                "id": str(call.get("id") or f"call_{index}"),
                "name": function["name"],
                "arguments": tool_arguments(function.get("arguments")),
            }
        )
    out: ModelAnswer = {"content": content, "tool_calls": calls}
    usage = answer.get("usage")
    if isinstance(usage, dict):
        out["usage"] = token_usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return out


class OpenAIChatModel:
    """A Chat Completions model at ``base_url``; ``api_key`` is sent as a bearer token when given."""

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = ProviderClient("openai", headers, (api_key,), timeout, transport)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, url={self.url!r})"

    def body(self, request: JsonObject) -> JsonObject:
        """The Chat Completions request body for a neutral ``complete`` request."""
        body: JsonObject = {
            "model": self.model,
            "messages": chat_messages(str(request.get("system") or ""), neutral_messages(request)),
        }
        tools = neutral_tools(request, "tools")
        if tools:
            body["tools"] = openai_chat_tools(tools)
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def complete(self, request: ModelRequest) -> ModelAnswer:
        try:
            body = self.body(request)
        except (ValueError, KeyError, TypeError) as exc:
            return model_error("model-bad-request", f"the completion request cannot be sent: {exc}")
        try:
            return neutral_answer(self._client.post(self.url, body))
        except ProviderFailure as failure:
            return failure.document()
