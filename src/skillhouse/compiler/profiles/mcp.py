"""Model Context Protocol ``Tool``: name, title, description, ``inputSchema`` and annotations.

Limits relied on (MCP specification 2025-11-25, "Tools"):

- name: 1 to 128 characters of A-Z, a-z, 0-9, underscore, hyphen and dot (a SHOULD in the spec,
  which clients enforce);
- ``inputSchema``: a JSON Schema object (``type: "object"``);
- ``annotations``: hints ``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
  ``openWorldHint``; untrusted by clients, so they describe, never authorize. Derived from the
  operation: read-only for GET/HEAD, destructive for DELETE/PUT/PATCH, idempotent for methods that
  are and where an ``identity`` is declared (the gateway turns repeats into the first response).
- no deferred loading in the protocol: a client lists tools and chooses.
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

RULES = ToolRules(name_pattern=re.compile(r"[A-Za-z0-9_.-]+"), name_max=128)
_HINTS = (
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
)


def adapt(tool: ToolDefinition) -> Adaptation:
    def wire(name: str, description: str, schema: Any, neutral: ToolDefinition) -> ProviderTool:
        out: ProviderTool = {"name": name}
        annotations = neutral.get("annotations") or {}
        if isinstance(annotations.get("title"), str):
            out["title"] = annotations["title"]
        out["description"] = description
        out["inputSchema"] = schema
        hints = {
            wire_key: annotations[key] for key, wire_key in _HINTS if isinstance(annotations.get(key), bool)
        }
        if hints:
            out["annotations"] = hints
        return out

    return adapt_with("mcp", tool, RULES, unchanged, wire)


REPORT: tuple[ToolRules, SchemaRewrite] = (RULES, unchanged)
"""The rules and the schema walk of this profile's compatibility report entry (:func:`verdict`)."""


def verdict(tool: ToolDefinition) -> JsonObject:
    """``adapt(tool).report()``, without building the wire form."""
    return verdict_with(tool, *REPORT)
