"""What every model adapter is, and the one way an adapter talks to a provider over HTTP.

A model adapter answers ``complete`` (contract in :mod:`skillhouse.guest.host`): a neutral request
``{"system", "messages", "tools", "deferred"}`` in, ``{"content", "tool_calls"}`` out (with ``usage``,
``{"input_tokens", "output_tokens"}``, when the provider counted them; the loop reads no more). It never
raises: a provider that answers with an HTTP error, times out, cannot be reached or answers
something that is not a completion becomes ``{"error": {"code", "message", ...}}``, which the agent
loop stops on. Codes: ``model-http-error`` (with ``status``), ``model-timeout``,
``model-unreachable``, ``model-malformed-answer``, ``model-bad-request`` (the neutral request itself
was unusable). An API key travels only in the request headers; it is never part of an error,
a log line or the adapter's ``repr``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

import httpx

from skillhouse.errors import ExternalFailure
from skillhouse.json_types import ChatMessage, JsonObject, ModelAnswer, ModelRequest, ToolDefinition

DEFAULT_TIMEOUT = 120.0
ERROR_BODY_CHARS = 500


class ChatModel(Protocol):
    """A model behind the host's ``complete``: neutral request in, neutral answer out."""

    def complete(self, request: ModelRequest) -> ModelAnswer:
        """The model's next turn for ``request``, or ``{"error": {...}}``; never raises."""
        ...

    def close(self) -> None:
        """Let go of what the model holds (a provider's connections); it is not used afterwards."""
        ...


def model_error(code: str, message: str, **extra: Any) -> ModelAnswer:
    return {"error": {"code": code, "message": message, **extra}}


class ProviderFailure(ExternalFailure):
    """A model provider call that failed (``model-*`` codes); adapters turn it into their ``complete`` answer,
    never raise it past it. The provider may have done the work (and billed it) when it failed late."""

    code = "model-failed"

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message, code=code)
        self.extra = extra

    def document(self) -> ModelAnswer:
        return model_error(self.code, self.message, **self.extra)


class MalformedAnswer(ProviderFailure):
    """A provider answered 2xx with something that is not a completion in its wire format."""

    code = "model-malformed-answer"

    def __init__(self, provider: str, problem: str) -> None:
        super().__init__("model-malformed-answer", f"{provider} answered something that is not a completion: {problem}")


def redacted(text: str, secrets: tuple[str | None, ...]) -> str:
    """``text`` with every secret replaced, for providers that echo a key back in an error."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


class ProviderClient:
    """POSTs JSON to one provider and maps every failure to a model error, keys redacted."""

    def __init__(
        self,
        provider: str,
        headers: Mapping[str, str],
        secrets: tuple[str | None, ...] = (),
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.provider = provider
        self._secrets = secrets
        self._client = httpx.Client(headers=dict(headers), timeout=timeout, transport=transport)

    def __repr__(self) -> str:
        return f"ProviderClient({self.provider!r})"

    def post(self, url: str, body: JsonObject) -> JsonObject:
        """The decoded JSON object the provider answered; a :class:`ProviderFailure` otherwise."""
        try:
            response = self._client.post(url, json=body)
        except httpx.TimeoutException:
            raise ProviderFailure("model-timeout", f"{self.provider} did not answer in time ({url})") from None
        except httpx.HTTPError as exc:
            problem = redacted(f"{type(exc).__name__}: {exc}", self._secrets)
            raise ProviderFailure("model-unreachable", f"could not reach {self.provider} at {url}: {problem}") from None
        if response.status_code >= 400:
            detail = redacted(response.text[:ERROR_BODY_CHARS], self._secrets)
            raise ProviderFailure(
                "model-http-error", f"{self.provider} answered {response.status_code}: {detail}",
                status=response.status_code,
            )
        try:
            answer = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise MalformedAnswer(self.provider, "the body is not JSON") from None
        if not isinstance(answer, dict):
            raise MalformedAnswer(self.provider, "the body is JSON but not an object")
        if "error" in answer:
            # some local servers answer 200 with an error object
            detail = redacted(json.dumps(answer["error"])[:ERROR_BODY_CHARS], self._secrets)
            raise ProviderFailure("model-http-error", f"{self.provider} answered an error: {detail}",
                                  status=response.status_code)
        return answer

    def close(self) -> None:
        self._client.close()


def tool_arguments(raw: Any) -> Any:
    """A tool call's arguments as the guest takes them: a dict when they decode to one, else the text.

    Text that is not a JSON object goes to the guest as it is, so the model hears exactly what was
    wrong with its arguments (``invalid-arguments``) instead of the whole turn failing.
    """
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
        return decoded if isinstance(decoded, dict) else raw
    if raw is None:
        return {}
    return json.dumps(raw)


def token_usage(input_tokens: Any, output_tokens: Any) -> JsonObject:
    """A provider's token counts as ``{"input_tokens", "output_tokens"}``: what an answer's ``usage`` holds.

    Chat Completions says ``prompt_tokens`` and ``completion_tokens``, the Messages API ``input_tokens``
    and ``output_tokens``; a count the provider left out (or sent as something not a whole number) is 0.
    """

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    return {"input_tokens": count(input_tokens), "output_tokens": count(output_tokens)}


def neutral_messages(request: Mapping[str, Any]) -> list[ChatMessage]:
    """The request's messages, checked enough to translate: a list of objects with a known role."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        raise ValueError("messages must be a list")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "tool"):
            raise ValueError(f"messages[{index}] must be an object with role user, assistant or tool")
    return messages


def neutral_tools(request: Mapping[str, Any], key: str) -> list[ToolDefinition]:
    tools = request.get(key) or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) and "name" in t for t in tools):
        raise ValueError(f"{key} must be a list of tool definitions with a name")
    return tools
