"""An Anthropic Messages model: ``tool_use`` and ``tool_result`` blocks, and native deferred loading.

``POST {base_url}/v1/messages`` with the system prompt beside the messages, an assistant turn's
calls as ``tool_use`` blocks and the tool results that follow it as ``tool_result`` blocks in one
user message (results the guest marks ``{"error": ...}`` carry ``is_error``). With ``deferred=True``
the turn's unloaded operations go along with ``defer_loading: true`` and the tool search tool, and
the model may find and call them itself; the search's own blocks (``server_tool_use``,
``tool_search_tool_result``) are kept and sent back before the calls they led to, because the
neutral transcript has no place for provider blocks and the provider needs them to keep the tools
it found.
"""

from __future__ import annotations

import json

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
from skillhouse.host.models.tool_formats import ANTHROPIC_TOOL_SEARCH_BETA, anthropic_tools
from skillhouse.json_types import ChatMessage, JsonObject, ModelAnswer, ModelRequest

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
SERVER_BLOCKS = ("server_tool_use", "tool_search_tool_result")

Blocks = list[JsonObject]


def _is_error_result(content: str) -> bool:
    try:
        decoded = json.loads(content)
    except json.JSONDecodeError:
        return False
    return isinstance(decoded, dict) and "error" in decoded


def messages_body(messages: list[ChatMessage], server_blocks: dict[str, Blocks]) -> list[ChatMessage]:
    """Neutral messages as Messages API messages, consecutive user content merged into one turn."""
    out: list[JsonObject] = []

    def add(role: str, blocks: Blocks) -> None:
        if out and out[-1]["role"] == role == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "user":
            add("user", [{"type": "text", "text": content or ""}])
        elif role == "tool":
            text = content or ""
            block: JsonObject = {"type": "tool_result", "tool_use_id": str(message.get("tool_call_id") or ""),
                                     "content": text}
            if _is_error_result(text):
                block["is_error"] = True
            add("user", [block])
        else:
            blocks: Blocks = []
            calls = message.get("tool_calls") or []
            for call in calls:
                blocks.extend(server_blocks.get(str(call.get("id")), []))
            if content:
                blocks.insert(0, {"type": "text", "text": content})
            for call in calls:
                arguments = call.get("arguments")
                blocks.append({"type": "tool_use", "id": str(call.get("id") or ""), "name": call["name"],
                               "input": arguments if isinstance(arguments, dict) else tool_arguments(arguments)})
            add("assistant", blocks or [{"type": "text", "text": ""}])
    return out


def neutral_answer(answer: JsonObject) -> tuple[ModelAnswer, Blocks]:
    """The answer as ``{"content", "tool_calls"}``, and the server blocks it carried."""
    content = answer.get("content")
    if not isinstance(content, list):
        raise MalformedAnswer("anthropic", "the answer has no content blocks")
    texts: list[str] = []
    calls: list[JsonObject] = []
    server: Blocks = []
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            if not isinstance(block.get("name"), str) or not block.get("id"):
                raise MalformedAnswer("anthropic", f"content[{index}] is a tool_use without a name or id")
            calls.append({"id": str(block["id"]), "name": block["name"], "arguments": tool_arguments(block.get("input"))})
        elif kind in SERVER_BLOCKS:
            server.append(block)
        elif kind is None:
            raise MalformedAnswer("anthropic", f"content[{index}] is not a block")
        # thinking and other block kinds say nothing the loop acts on
    out: ModelAnswer = {"content": "".join(texts) if texts else None, "tool_calls": calls}
    usage = answer.get("usage")
    if isinstance(usage, dict):
        out["usage"] = token_usage(usage.get("input_tokens"), usage.get("output_tokens"))
    return out, server


class AnthropicMessagesModel:
    """A Messages API model; ``deferred=True`` sends unloaded operations for the tool search tool."""

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        deferred: bool = False,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/v1/messages"
        self.deferred = deferred
        self.max_tokens = max_tokens
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        if deferred:
            headers["anthropic-beta"] = ANTHROPIC_TOOL_SEARCH_BETA
        self._client = ProviderClient("anthropic", headers, (api_key,), timeout, transport)
        # server blocks from answers, by the id of the first call that followed them
        self._server_blocks: dict[str, Blocks] = {}

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"AnthropicMessagesModel(model={self.model!r}, url={self.url!r}, deferred={self.deferred})"

    def body(self, request: ModelRequest) -> JsonObject:
        """The Messages API request body for a neutral ``complete`` request."""
        body: JsonObject = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages_body(neutral_messages(request), self._server_blocks),
        }
        if request.get("system"):
            body["system"] = str(request["system"])
        deferred = neutral_tools(request, "deferred") if self.deferred else []
        tools = anthropic_tools(neutral_tools(request, "tools"), deferred)
        if tools:
            body["tools"] = tools
        return body

    def complete(self, request: ModelRequest) -> ModelAnswer:
        try:
            body = self.body(request)
        except (ValueError, KeyError, TypeError) as exc:
            return model_error("model-bad-request", f"the completion request cannot be sent: {exc}")
        try:
            answer, server = neutral_answer(self._client.post(self.url, body))
        except ProviderFailure as failure:
            return failure.document()
        if server and answer["tool_calls"]:
            self._server_blocks[answer["tool_calls"][0]["id"]] = server
        return answer
