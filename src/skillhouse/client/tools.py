"""A turn's tools and answers as any agent framework takes them: the groundwork of the integrations.

A framework wants each tool as a name, a description and the JSON Schema of its arguments, whatever
provider format the turn was bound in (:func:`offered_tools`), and wants a tool's outcome as a value it
hands back to its model, a held or refused call included: an approval that a person has still to give
is the tool's result ("not yet, approval ``apr_...``"), not an exception that ends the run
(:func:`model_answer`, the same view the agent loop and the MCP server give a model).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from skillhouse.guest.results import model_result
from skillhouse.json_types import JsonSchema, ProviderTool
from skillhouse.wire.turns import CallAnswer


@dataclass(frozen=True)
class OfferedTool:
    """One tool a turn offers, in no provider's format."""

    name: str
    description: str
    parameters: JsonSchema
    """The JSON Schema of the tool's arguments (an object), as the turn's profile adapted it."""


def _declarations(tool: ProviderTool) -> Iterator[tuple[dict[str, Any], JsonSchema]]:
    if "functionDeclarations" in tool:  # gemini: every declaration in one Tool object
        for declaration in tool["functionDeclarations"]:
            yield declaration, declaration.get("parameters") or {"type": "object"}
    elif "function" in tool:  # openai, openai-strict
        yield tool["function"], tool["function"].get("parameters") or {"type": "object"}
    elif "toolSpec" in tool:  # bedrock
        yield tool["toolSpec"], tool["toolSpec"]["inputSchema"]["json"]
    else:  # anthropic, mcp
        yield tool, tool.get("input_schema") or tool.get("inputSchema") or {"type": "object"}


def offered_tools(tools: Sequence[ProviderTool]) -> list[OfferedTool]:
    """Each tool of a turn's ``tools`` (in any profile's wire format) as an :class:`OfferedTool`."""
    return [OfferedTool(str(spec["name"]), str(spec.get("description", "")), schema)
            for tool in tools for spec, schema in _declarations(tool)]


def model_answer(answer: CallAnswer) -> Any:
    """What a model reads of a call's answer: a response with its JSON body parsed and transport headers
    left out, or the refusal or signal as it is (``{"error": {"code": "approval-required", "approval_id"...}}``)."""
    return model_result(answer.model_dump(exclude_none=True))
