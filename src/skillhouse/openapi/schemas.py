"""OpenAPI schemas to the JSON Schema a skill holds, with shared components as ``#/types/Name``.

Each referenced schema is converted once, when an operation first reaches it, and becomes an entry
of ``types.json``; the compiler expands the references per tool. Only the keywords JSON Schema
2020-12 knows are kept, each checked for the shape the metaschema demands, so a sloppy spec gives a
schema that still compiles. OpenAPI's dialect is translated: 3.0 ``nullable`` and boolean
``exclusiveMinimum``, Swagger's ``type: file``, ``example``; ``allOf`` of objects is merged;
``readOnly`` properties are left out of requests; a discriminator becomes a ``const`` per branch.
"""

from __future__ import annotations

import math
import re
from typing import Any

from skillhouse.json_types import JsonObject, JsonSchema
from skillhouse.openapi.document import SpecDocument

TYPE_PREFIX = "#/types/"
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties")
_NUMBERS = ("minimum", "maximum")
_TEXTS = ("title", "description", "format", "contentMediaType", "contentEncoding")
_MAX_DEPTH = 64
_SAFE_INT = 2**53 - 1


def json_value(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON that canonical serialization accepts (no NaN, no 2**64 integers)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {str(k): json_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v, depth + 1) for v in value]
    return str(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _SAFE_INT


def _number(value: Any) -> int | float | None:
    """A finite number canonical JSON can carry (large integers become floats), or ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else float(value)
    return value if math.isfinite(value) else None


def _valid_regex(pattern: Any) -> bool:
    try:
        re.compile(pattern)
    except (re.error, TypeError, RecursionError, OverflowError):
        return False
    return True


class SchemaConverter:
    """Converts schemas of one spec; ``types`` fills up with every component an operation reaches."""

    def __init__(self, spec: SpecDocument) -> None:
        self.spec = spec
        self.types: dict[str, JsonSchema] = {}
        self._names: dict[str, str] = {}
        self._taken: set[str] = set()
        self._converting: set[str] = set()
        self.notes: list[str] = []
        """What was changed or dropped while converting, for the operation being built."""

    def convert(self, node: Any, doc: str = "", depth: int = 0) -> Any:
        """The JSON Schema for OpenAPI schema ``node`` found in file ``doc``."""
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict) or depth > _MAX_DEPTH:
            return {}
        if "$ref" in node:
            return self.reference(node["$ref"], doc)
        out: JsonSchema = {}
        read_only: set[str] = set()
        for key, value in node.items():
            if key == "type":
                kind = _convert_type(value, out)
                if kind is not None:
                    out["type"] = kind
            elif key in _TEXTS:
                if isinstance(value, str):
                    out[key] = value
            elif key in ("enum", "examples"):
                if isinstance(value, list):
                    out[key] = json_value(value)
                elif key == "examples" and isinstance(value, dict):
                    out[key] = json_value(list(value.values()))
            elif key in ("const", "default"):
                out[key] = json_value(value)
            elif key == "example":
                out.setdefault("examples", [json_value(value)])
            elif key == "properties" and isinstance(value, dict):
                props: dict[str, JsonSchema] = {}
                for name, sub in value.items():
                    if isinstance(sub, dict) and sub.get("readOnly") is True:
                        read_only.add(str(name))
                        continue
                    props[str(name)] = self.convert(sub, doc, depth + 1)
                out["properties"] = props
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key in ("additionalProperties", "not"):
                if isinstance(value, bool | dict):
                    out[key] = self.convert(value, doc, depth + 1)
            elif key == "items":
                if isinstance(value, list):
                    out["prefixItems"] = [self.convert(v, doc, depth + 1) for v in value]
                elif isinstance(value, bool | dict):
                    out["items"] = self.convert(value, doc, depth + 1)
            elif key in ("allOf", "anyOf", "oneOf"):
                if isinstance(value, list) and value:
                    out[key] = [self.convert(v, doc, depth + 1) for v in value]
            elif key in _COUNTS:
                if _is_count(value):
                    out[key] = value
            elif key in _NUMBERS or key in ("exclusiveMinimum", "exclusiveMaximum"):
                number = _number(value)
                if number is not None:
                    out[key] = number
            elif key == "multipleOf":
                number = _number(value)
                if number is not None and number > 0:
                    out[key] = number
            elif key == "pattern":
                if isinstance(value, str) and _valid_regex(value):
                    out[key] = value
            elif key == "patternProperties" and isinstance(value, dict):
                out[key] = {k: self.convert(v, doc, depth + 1) for k, v in value.items() if _valid_regex(k)}
            elif key in ("uniqueItems", "deprecated") and isinstance(value, bool):
                out[key] = value
        _openapi_30_bounds(node, out)
        if read_only and "required" in out:
            out["required"] = [n for n in out["required"] if n not in read_only]
        if node.get("nullable") is True:
            out = _nullable(out)
        if "discriminator" in node and "oneOf" in out:
            self._discriminate(node["discriminator"], out, doc)
        if "allOf" in out:
            out = self._merge_all_of(out)
        return out

    def reference(self, ref: Any, doc: str) -> JsonSchema:
        """``{"$ref": "#/types/Name"}`` for the schema ``ref`` points to, converting it on first use."""
        found = self.spec.resolve(ref, doc)
        if found is None:
            self.notes.append(f"reference {str(ref)[:80]!r} cannot be followed; it accepts any value")
            return {}
        target, target_doc, key = found
        name = self._names.get(key)
        if name is None:
            name = self._new_name(key)
            self._names[key] = name
            self.types[name] = {}
            self._converting.add(name)
            try:
                self.types[name] = self.convert(target, target_doc)
            except BaseException:
                # half made, it would serve the next operation that reaches it as "any value"
                del self._names[key], self.types[name]
                self._taken.discard(name.lower())
                raise
            finally:
                self._converting.discard(name)
        return {"$ref": TYPE_PREFIX + name}

    def type_of(self, schema: Any) -> Any:
        """``schema`` with a ``#/types/`` reference at its root followed (one level, no expansion)."""
        for _ in range(32):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            name = schema["$ref"][len(TYPE_PREFIX) :]
            if name in self._converting:
                return None
            schema = self.types.get(name)
        return None

    def _new_name(self, key: str) -> str:
        tail = key.rsplit("/", 1)[-1] if "/" in key else key.split("#")[0].rsplit(".", 1)[0]
        base = re.sub(r"[^A-Za-z0-9_.-]+", "_", tail).strip("_") or "Type"
        name, n = base, 2
        while name.lower() in self._taken:
            name, n = f"{base}_{n}", n + 1
        self._taken.add(name.lower())
        return name

    def _merge_all_of(self, schema: JsonSchema) -> JsonSchema:
        parts = [self.type_of(p) for p in schema["allOf"]]
        mergeable = all(
            isinstance(p, dict) and set(p) <= {"type", "properties", "required", "description", "title", "additionalProperties"}
            and p.get("type", "object") == "object"
            for p in parts
        )
        if not mergeable:
            return schema
        merged: JsonSchema = {k: v for k, v in schema.items() if k != "allOf"}
        properties: dict[str, JsonSchema] = dict(merged.get("properties", {}))
        required: list[str] = list(merged.get("required", []))
        closed = [p.get("additionalProperties") is False for p in parts]
        for part in parts:
            properties.update(part.get("properties", {}))
            required.extend(part.get("required", []))
            for key in ("description", "title"):
                if key in part:
                    merged.setdefault(key, part[key])
        merged["type"] = "object"
        merged["properties"] = properties
        if required:
            merged["required"] = list(dict.fromkeys(required))
        if all(closed):
            merged["additionalProperties"] = False
        return merged

    def _discriminate(self, discriminator: Any, schema: JsonSchema, doc: str) -> None:
        if not isinstance(discriminator, dict) or not isinstance(discriminator.get("propertyName"), str):
            return
        prop = discriminator["propertyName"]
        mapping: JsonObject = discriminator["mapping"] if isinstance(discriminator.get("mapping"), dict) else {}
        value_of: dict[str, str] = {}
        for value, ref in mapping.items():
            target = self.reference(ref, doc)
            if "$ref" in target:
                value_of.setdefault(target["$ref"], str(value))
        branches = []
        for branch in schema["oneOf"]:
            ref = branch.get("$ref") if isinstance(branch, dict) else None
            if isinstance(ref, str):
                value = value_of.get(ref, ref[len(TYPE_PREFIX) :])
                pin = {"type": "object", "properties": {prop: {"const": value}}}
                branches.append({"allOf": [branch, pin]})
            else:
                branches.append(branch)
        schema["oneOf"] = branches


def _convert_type(value: Any, out: JsonSchema) -> Any:
    if value == "file":  # Swagger 2.0
        out.setdefault("format", "binary")
        return "string"
    if isinstance(value, str):
        return value if value in JSON_TYPES else None
    if isinstance(value, list):
        kinds = list(dict.fromkeys(v for v in value if v in JSON_TYPES))
        return kinds or None
    return None


def _openapi_30_bounds(node: JsonSchema, out: JsonSchema) -> None:
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and bound in out:
            out[flag] = out.pop(bound)


def _nullable(schema: JsonSchema) -> JsonSchema:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema = {**schema, "type": [kind, "null"]}
    elif isinstance(kind, list):
        schema = {**schema, "type": [*kind, "null"] if "null" not in kind else kind}
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema
