"""The neutral tool definition of an operation, and what the operation does to the world, told from
its declaration: the tool's annotations.

HTTP says which methods are safe and which idempotent (RFC 9110 section 9.2); a declared
``identity`` makes a POST or PATCH idempotent too, because the gateway answers a repeat with the
first response. PUT, PATCH and DELETE may overwrite or remove what exists, which is what MCP calls
destructive; POST is taken as additive. Every tool reaches an outside API, an open world.

Kept apart from the compiler proper, so reading a compiled release's tools loads no YAML or compiler.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillhouse.compiler.model import OperationDecl

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.json_types import JsonObject, OperationDocument, ToolDefinition

READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
DESTRUCTIVE = frozenset({"PUT", "PATCH", "DELETE"})


def operation_annotations(name: str, method: str, identity: Sequence[str]) -> JsonObject:
    """``title`` (from the operation name) and behaviour hints for an operation."""
    verb = method.upper()
    words = name.replace("_", " ").replace("-", " ").strip()
    return {
        "title": words[:1].upper() + words[1:],
        "read_only": verb in READ_ONLY,
        "destructive": verb in DESTRUCTIVE,
        "idempotent": verb in IDEMPOTENT or bool(identity),
        "open_world": True,
    }


def neutral_tool(op: OperationDecl | OperationDocument) -> ToolDefinition:
    """The provider-neutral tool definition of an operation: name, description, parameters, and
    annotations (title and behaviour hints) that profiles translate, such as MCP's."""
    if isinstance(op, OperationDecl):
        name, method, identity = op.name, op.method, op.identity
        tool = {"name": op.tool_name, "description": op.description, "parameters": op.schema}
    else:
        name, method, identity = op["name"], op["method"], op.get("identity") or ()
        tool = {"name": op["tool_name"], "description": op["description"], "parameters": op["schema"]}
    return {**tool, "annotations": operation_annotations(name, method, identity)}
