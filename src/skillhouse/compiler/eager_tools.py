"""The eager tools every turn offers from its first step: ``load_tools``, ``read_object``, ``fetch_url``.

Their neutral definitions live here and only here. The host hands them to the guest through the WIT
function ``eager-tools`` (the guest implements the three tools but keeps no copy of how they are
described); the registry offers ``read_object`` of them to API and MCP clients; publishing keeps their
names free of operations.
"""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.json_types import ToolDefinition


EAGER_TOOLS: list[ToolDefinition] = [
    {
        "name": "load_tools",
        "description": (
            "Load tools so you can call them. Pass the names of the operations you need, either as a "
            "skill lists them (e.g. 'create_booking') or as full tool names (e.g. "
            "'hollowbrook_create_booking'). Loaded tools are offered from your next step."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "names": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "minItems": 1,
                    "description": "Operation or tool names to load.",
                }
            },
            "required": ["names"],
            "additionalProperties": False,
        },
    },
    {
        "name": "read_object",
        "description": (
            "Read a document. 'skill/<name>' gives a skill's instructions and the operations and "
            "documents it lists; 'skill/<name>/<file>.md' gives one of its files. Use this, not "
            "fetch_url, for anything under skill/."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "For example 'skill/hollowbrook' or 'skill/hollowbrook/house_rules.md'.",
                }
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    },
    {
        "name": "fetch_url",
        "description": (
            "Send an HTTP request to a URL that no loaded tool covers. Prefer a skill's tools: they "
            "build the request for you. Skill files are read with read_object, never fetched."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "method": {
                    "type": "string",
                    "enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
                    "description": "HTTP method; GET when left out.",
                },
                "url": {"type": "string", "minLength": 1, "description": "Absolute http(s) URL."},
                "headers": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Request headers; credentials are added by the platform, never by you.",
                },
                "body": {"type": ["string", "null"], "description": "Request body text, if any."},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
    },
]
EAGER_NAMES: tuple[str, ...] = tuple(str(t["name"]) for t in EAGER_TOOLS)
"""Their names, which no bound operation's tool may take."""
