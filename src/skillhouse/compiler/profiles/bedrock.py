"""Amazon Bedrock Converse API tools: ``{"toolSpec": {name, description, inputSchema: {"json": ...}}}``.

Limits relied on (Bedrock API reference, ``ToolSpecification``,
docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html):

- name: pattern ``[a-zA-Z0-9_-]+``, 1 to 64 characters;
- description: at least 1 character, no published maximum;
- ``inputSchema.json``: a JSON Schema object. Converse forwards it to the model's own tool format,
  so the property-key pattern of Anthropic's models (``^[a-zA-Z0-9_.-]{1,64}$``) applies too.
- no tool search on Converse (Anthropic's tool search is offered through InvokeModel only).
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
from skillhouse.compiler.profiles.anthropic import PROPERTY_NAME

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.compiler.profiles.adaptation import SchemaRewrite
    from skillhouse.json_types import JsonObject, ProviderTool, ToolDefinition

RULES = ToolRules(
    name_pattern=re.compile(r"[A-Za-z0-9_-]+"), name_max=64, description_min=1, property_name=PROPERTY_NAME
)


def adapt(tool: ToolDefinition) -> Adaptation:
    def wire(name: str, description: str, schema: Any, neutral: ToolDefinition) -> ProviderTool:
        return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": schema}}}

    return adapt_with("bedrock", tool, RULES, unchanged, wire)


REPORT: tuple[ToolRules, SchemaRewrite] = (RULES, unchanged)
"""The rules and the schema walk of this profile's compatibility report entry (:func:`verdict`)."""


def verdict(tool: ToolDefinition) -> JsonObject:
    """``adapt(tool).report()``, without building the wire form."""
    return verdict_with(tool, *REPORT)
