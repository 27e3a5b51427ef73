"""Example values for a JSON Schema: the smallest plausible value, for the "The call" sections.

Deterministic (the same schema always gives the same example) and bounded in depth, so a schema
that refers to itself or nests deeply still gives a short example.
"""

from __future__ import annotations

from typing import Any

from skillhouse.json_types import JsonObject

_FORMATS = {
    "date": "2024-01-31",
    "date-time": "2024-01-31T12:00:00Z",
    "time": "12:00:00",
    "email": "someone@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
}
_MAX_DEPTH = 6


def example_value(schema: Any, depth: int = 0) -> Any:
    """A small value ``schema`` accepts, or a plausible one where it cannot be told."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None if schema is False else {}
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            usable = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            return example_value((usable or options)[0], depth + 1)
    if isinstance(schema.get("allOf"), list):
        merged: JsonObject = {}
        for part in schema["allOf"]:
            value = example_value(part, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "string" or (kind is None and ("pattern" in schema or "format" in schema)):
        text = _FORMATS.get(str(schema.get("format")), "text")
        minimum = schema.get("minLength")
        return text.ljust(minimum, "x") if isinstance(minimum, int) and 0 < minimum <= 256 else text
    if kind in ("integer", "number"):
        for bound in ("minimum", "exclusiveMinimum"):
            if isinstance(schema.get(bound), int | float) and not isinstance(schema.get(bound), bool):
                value = schema[bound] + (1 if bound == "exclusiveMinimum" else 0)
                return int(value) if kind == "integer" else value
        return 1
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array" or "items" in schema:
        wanted = schema.get("minItems")
        count = wanted if isinstance(wanted, int) else 1
        return [example_value(schema.get("items", {}), depth + 1) for _ in range(max(1, min(count, 3)))]
    properties = schema.get("properties")
    if isinstance(properties, dict):
        wanted = [n for n in schema.get("required", []) if n in properties] or list(properties)[:2]
        return {name: example_value(properties[name], depth + 1) for name in wanted}
    return {}
