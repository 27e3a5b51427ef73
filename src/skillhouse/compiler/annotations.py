"""What an operation does to the world, told from its declaration: the neutral tool's annotations.

HTTP says which methods are safe and which idempotent (RFC 9110 section 9.2); a declared
``identity`` makes a POST or PATCH idempotent too, because the gateway answers a repeat with the
first response. PUT, PATCH and DELETE may overwrite or remove what exists, which is what MCP calls
destructive; POST is taken as additive. Every tool reaches an outside API, an open world.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillhouse.json_types import JsonObject

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
