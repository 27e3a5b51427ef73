"""Neutral tool definitions in each provider's wire shape: the one place adapters get their tool lists.

The compiler's provider profiles (:func:`skillhouse.compiler.profiles.provider_tools`) own adapting a
schema to what a provider accepts and its native deferred-loading form; this module only says which
profile and shape each adapter speaks. A tool a profile refuses is left out of the list it sends.
"""

from __future__ import annotations

from skillhouse.compiler.profiles import provider_tools
from skillhouse.json_types import ProviderTool, ToolDefinition

ANTHROPIC_TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"


def openai_chat_tools(tools: list[ToolDefinition]) -> list[ProviderTool]:
    """Chat Completions ``tools``: ``{"type": "function", "function": {name, description, parameters}}``."""
    return provider_tools(tools, "openai", shape="chat")


def anthropic_tools(
    tools: list[ToolDefinition], deferred: list[ToolDefinition] | None = None
) -> list[ProviderTool]:
    """Messages API ``tools``: ``{name, description, input_schema}``.

    With ``deferred`` tools, they are sent with ``defer_loading: true`` beside Anthropic's tool search
    tool, so the model finds them itself instead of every definition filling the context.
    """
    if not deferred:
        return provider_tools(tools, "anthropic")
    return provider_tools(deferred, "anthropic", deferred=True, eager=tools)
