"""Names for the JSON that crosses skillhouse's layers as JSON, so an annotation says which JSON it means.

Some values are JSON by contract and stay plain dicts: a release document is hashed as its canonical
JSON, a tool definition is sent to a model provider as JSON, a JSON Schema is a JSON document, and the
guest and the host speak JSON across the component boundary (the host reads a ``fetch_url`` request
once into the gateway's typed request, and writes its typed answer once). Everything else that crosses a layer
boundary is a frozen dataclass (a Pydantic model where it meets the HTTP API).

The aliases are plain ``dict[str, Any]``: no copy or check at run time, and the wire formats stay
exactly as they are. The guest keeps its own copies of the ones it uses (:mod:`skillhouse.guest.values`),
as it is built into the WebAssembly component with nothing else of skillhouse.

The modules ``import skillhouse.openapi`` loads import this module (and ``typing``, which it imports)
under ``TYPE_CHECKING`` only: ``typing`` with the ``contextlib`` and ``warnings`` it imports was 16 million
of that import's 115 million instructions (above a bare interpreter), about 1% of importing Jira's spec.
Their annotations are never evaluated (postponed annotations), so nothing reads these names at run time.
"""

from __future__ import annotations

from typing import Any, TypeAlias, TypeVar

Name = TypeVar("Name", bound=str)

JsonObject: TypeAlias = dict[str, Any]
"""A decoded JSON object of no more specific kind (a request body, a report, a row's JSON column)."""

JsonSchema: TypeAlias = dict[str, Any]
"""A JSON Schema object (a tool's parameters, a named type, a node of either)."""

ReleaseDocument: TypeAlias = dict[str, Any]
"""A release document (``skillhouse.release/1``): what is hashed, stored, exported and bound to a turn."""

OperationDocument: TypeAlias = dict[str, Any]
"""One operation of a release document (``OperationDecl.document()``): what the guest translates and the
gateway matches."""

ToolDefinition: TypeAlias = dict[str, Any]
"""A provider-neutral tool definition: ``name``, ``description``, ``parameters`` and optional ``annotations``."""

ProviderTool: TypeAlias = dict[str, Any]
"""A tool definition in one provider's wire format (OpenAI, Anthropic, Gemini, Bedrock, MCP)."""

ProblemDocument: TypeAlias = dict[str, Any]
"""One located problem as JSON: ``path``, ``code`` and ``message``."""

FetchRequestDocument: TypeAlias = dict[str, Any]
"""A ``fetch_url`` request as JSON, as the guest sends it to the host: ``method``, ``url``, ``headers``,
``body``. The host reads it once into a typed request (:mod:`skillhouse.gateway.exchange`)."""

FetchAnswerDocument: TypeAlias = dict[str, Any]
"""The answer to a ``fetch_url`` request as JSON: ``status``, ``headers`` and ``body`` (``replayed`` when
it is a stored answer), or ``{"error": {"code", "message", ...}}``: what the guest reads and what the
gateway stores under an idempotency key (written from, and read back into, a typed answer)."""

ToolAnswer: TypeAlias = dict[str, Any]
"""The guest's answer to one tool call: the ``fetch_url`` answer of the request it sent, or a refusal of
the arguments (``{"error": {"code", "message", "violations"}}``)."""

ChatMessage: TypeAlias = dict[str, Any]
"""One message of a turn's conversation in the neutral form: ``role`` (``user``, ``assistant``, ``tool``),
``content``, and an assistant's ``tool_calls`` or a tool message's ``tool_call_id``."""

ModelRequest: TypeAlias = dict[str, Any]
"""What the guest's agent loop asks the model behind the host's ``complete``: messages and offered tools."""

ModelAnswer: TypeAlias = dict[str, Any]
"""The model's answer in the host contract: an assistant message, or an ``error``."""


def one_of(value: object, names: tuple[Name, ...], what: str) -> Name:
    """``value`` (a string read from JSON or a column) as one of ``names``, a ``Literal``'s values, so a
    state or kind is typed by what it can be; a ``ValueError`` saying what it is not, otherwise."""
    for name in names:
        if value == name:
            return name
    raise ValueError(f"{what} {value!r} is not one of {', '.join(names)}")


__all__ = [
    "ChatMessage",
    "FetchAnswerDocument",
    "FetchRequestDocument",
    "JsonObject",
    "JsonSchema",
    "ModelAnswer",
    "ModelRequest",
    "OperationDocument",
    "ProblemDocument",
    "ProviderTool",
    "ReleaseDocument",
    "ToolAnswer",
    "ToolDefinition",
    "one_of",
]
