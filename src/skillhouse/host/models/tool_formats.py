"""Neutral tool definitions in each provider's wire shape: the one place adapters get their tool lists.

The compiler's provider profiles (:mod:`skillhouse.compiler.profiles`) own adapting a schema to
what a provider accepts (``openai``, ``anthropic``, ...). When they offer
``provider_tools(tools, profile)`` this module hands the work to them; until then it does the
plain shape change each wire format needs, and nothing else, so swapping is one edit here.
"""

from __future__ import annotations

from typing import Any

ANTHROPIC_TOOL_SEARCH = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
ANTHROPIC_TOOL_SEARCH_BETA = "advanced-tool-use-2025-11-20"


def _profile_tools(tools: list[dict[str, Any]], profile: str) -> list[dict[str, Any]] | None:
    """The compiler profile's tool list, when the profiles offer one."""
    try:
        from skillhouse.compiler import profiles
    except ImportError:
        return None
    provider_tools = getattr(profiles, "provider_tools", None)
    if provider_tools is None:
        return None
    adapted: list[dict[str, Any]] = provider_tools(tools, profile)
    return adapted


def openai_chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions ``tools``: ``{"type": "function", "function": {name, description, parameters}}``."""
    adapted = _profile_tools(tools, "openai")
    if adapted is not None:
        return adapted
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def anthropic_tools(
    tools: list[dict[str, Any]], deferred: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Messages API ``tools``: ``{name, description, input_schema}``.

    With ``deferred`` tools, they are sent with ``defer_loading: true`` beside the regex tool search
    tool, so the model finds them itself instead of every definition filling the context.
    """
    offered = _anthropic_shape(tools)
    if not deferred:
        return offered
    hidden = [{**tool, "defer_loading": True} for tool in _anthropic_shape(deferred)]
    return [dict(ANTHROPIC_TOOL_SEARCH), *offered, *hidden]


def _anthropic_shape(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    adapted = _profile_tools(tools, "anthropic")
    if adapted is not None:
        return adapted
    return [
        {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "input_schema": tool.get("parameters") or {"type": "object", "properties": {}},
        }
        for tool in tools
    ]
