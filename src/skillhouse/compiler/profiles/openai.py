"""OpenAI function tools: Chat Completions and Responses shapes, plain and strict, and tool search.

Limits relied on (OpenAI API reference, "Function calling" and "Tool search" guides,
developers.openai.com/api/docs/guides/function-calling and /tools-tool-search):

- name: a-z, A-Z, 0-9, underscores and dashes, at most 64 characters;
- description: at most 1,024 characters (the API answers ``string_above_max_length`` beyond);
- ``parameters``: a JSON Schema object; strict mode's subset is in :mod:`.strict`;
- Chat Completions: ``{"type": "function", "function": {name, description, parameters, strict?}}``;
  Responses: ``{"type": "function", name, description, parameters, strict}`` where ``strict``
  defaults to true, so the plain profile says ``false`` explicitly;
- at most 128 tools in one request (``tools``: "A max of 128 functions are supported"); a longer
  listing is flagged in the compatibility report (:func:`listing_problem`), and the deferred form
  (tool search) is the way to offer more;
- tool search (Responses API, gpt-5.4 and later): a ``{"type": "tool_search"}`` tool plus
  ``defer_loading: true`` on the functions to defer; the model still sees a deferred function's name
  and description, its parameters load when searched.
"""

from __future__ import annotations

import re

from skillhouse.compiler.profiles.adaptation import (
    Adaptation,
    ToolRules,
    adapt_with,
    unchanged,
    verdict_with,
)
from skillhouse.compiler.profiles.strict import strict_report, strict_schema

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.compiler.profiles.adaptation import SchemaRewrite
    from skillhouse.json_types import JsonObject, ProviderTool, ToolDefinition

RULES = ToolRules(name_pattern=re.compile(r"[A-Za-z0-9_-]+"), name_max=64, description_max=1024)
MAX_TOOLS = 128
SHAPES = ("chat", "responses")
TOOL_SEARCH: ProviderTool = {"type": "tool_search"}


def adapt(tool: ToolDefinition, *, strict: bool, shape: str) -> Adaptation:
    """``tool`` for OpenAI in the Chat Completions (``chat``) or Responses (``responses``) shape."""
    profile = "openai-strict" if strict else "openai"

    def wire(name: str, description: str, parameters: Any, neutral: ToolDefinition) -> ProviderTool:
        function: JsonObject = {"name": name, "description": description, "parameters": parameters}
        if shape == "responses":
            return {"type": "function", **function, "strict": strict}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    return adapt_with(profile, tool, RULES, strict_schema if strict else unchanged, wire)


REPORT: tuple[ToolRules, SchemaRewrite] = (RULES, unchanged)
STRICT_REPORT: tuple[ToolRules, SchemaRewrite] = (RULES, strict_report)
"""The rules and the schema walk of each profile's compatibility report entry (:func:`verdict`)."""


def verdict(tool: ToolDefinition, *, strict: bool) -> JsonObject:
    """``adapt(tool, strict=strict, shape=...).report()`` (the same in either shape), without the wire form."""
    return verdict_with(tool, *(STRICT_REPORT if strict else REPORT))


def deferred(eager: list[ProviderTool], operations: list[ProviderTool]) -> list[ProviderTool]:
    """The Responses tool list with native tool search: eager tools loaded, operations deferred."""
    return [dict(TOOL_SEARCH), *eager, *({**tool, "defer_loading": True} for tool in operations)]


def listing_problem(count: int) -> str | None:
    """Why a listing of ``count`` tools cannot be sent to OpenAI as it is, or ``None`` when it can."""
    if count <= MAX_TOOLS:
        return None
    return (
        f"{count} tools in one listing; OpenAI accepts at most {MAX_TOOLS} per request. Offer them in the "
        "deferred form (tool search, Responses API: skillhouse tools --provider openai --deferred), or "
        "bind fewer skills to a turn"
    )
