"""Anthropic Messages API tools: ``{name, description, input_schema}`` and the tool search tool.

Limits relied on (Claude docs, "Define tools" and "Tool search tool",
platform.claude.com/docs/en/agents-and-tools/tool-use/):

- name: ``^[a-zA-Z0-9_-]{1,64}$``;
- ``input_schema``: a JSON Schema of type ``object``, without ``oneOf``/``allOf``/``anyOf`` at the
  top level; property keys must match ``^[a-zA-Z0-9_.-]{1,64}$`` (the API answers
  "Property keys should match pattern ..."); no published description limit;
- tool search: a server tool ``{"type": "tool_search_tool_bm25_20251119", "name":
  "tool_search_tool_bm25"}`` (natural-language queries; a regex variant exists) and
  ``defer_loading: true`` on the tools to defer; the search tool itself is never deferred. Up to
  10,000 tools in the catalogue; the Bedrock Converse API does not offer it.
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

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.compiler.profiles.adaptation import SchemaRewrite
    from skillhouse.json_types import JsonObject, ProviderTool, ToolDefinition

PROPERTY_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
RULES = ToolRules(name_pattern=re.compile(r"[A-Za-z0-9_-]+"), name_max=64, property_name=PROPERTY_NAME)
TOOL_SEARCH: ProviderTool = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def adapt(tool: ToolDefinition) -> Adaptation:
    def wire(name: str, description: str, schema: Any, neutral: ToolDefinition) -> ProviderTool:
        return {"name": name, "description": description, "input_schema": schema}

    return adapt_with("anthropic", tool, RULES, unchanged, wire)


REPORT: tuple[ToolRules, SchemaRewrite] = (RULES, unchanged)
"""The rules and the schema walk of this profile's compatibility report entry (:func:`verdict`)."""


def verdict(tool: ToolDefinition) -> JsonObject:
    """``adapt(tool).report()``, without building the wire form."""
    return verdict_with(tool, *REPORT)


def deferred(eager: list[ProviderTool], operations: list[ProviderTool]) -> list[ProviderTool]:
    """The tool list with Anthropic's tool search: eager tools loaded, operations deferred."""
    return [dict(TOOL_SEARCH), *eager, *({**tool, "defer_loading": True} for tool in operations)]
