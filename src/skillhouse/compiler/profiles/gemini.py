"""Gemini ``FunctionDeclaration``: its OpenAPI-3.0-flavoured ``Schema`` subset.

Limits relied on, from the Gemini API reference (ai.google.dev/api/caching#FunctionDeclaration and
#Schema, generativelanguage v1beta) and the Firebase AI Logic ``SchemaShared`` reference:

- name: must start with a letter or an underscore; a-z, A-Z, 0-9, underscores, dots and dashes;
  at most 64 characters;
- ``Schema`` fields: ``type``, ``format``, ``title``, ``description``, ``nullable``, ``enum``
  (strings only), ``properties``, ``required``, ``propertyOrdering``, ``minProperties``,
  ``maxProperties``, ``items``, ``minItems``, ``maxItems``, ``minLength``, ``maxLength``,
  ``pattern``, ``minimum``, ``maximum``, ``anyOf``, ``default``, ``example``. No ``$ref``,
  ``additionalProperties``, ``const``, ``oneOf``, ``allOf``, type arrays or exclusive bounds;
- ``format`` on the Gemini Developer API: ``enum`` or ``date-time`` for strings, ``int32``/``int64``
  for integers, ``float``/``double`` for numbers; others fail the request;
- an ``OBJECT`` needs non-empty ``properties``; a function without arguments leaves ``parameters`` out.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skillhouse.compiler.profiles.adaptation import (
    Adaptation,
    Rewrite,
    ToolRules,
    Unexpressible,
    adapt_with,
    pointer,
)
from skillhouse.compiler.profiles.objects import normalize, rewrite_properties, rewrite_root, type_list
from skillhouse.json_types import JsonSchema, ProviderTool, ToolDefinition

RULES = ToolRules(name_pattern=re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*"), name_max=64)
KEYWORDS = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "properties", "required",
        "propertyOrdering", "minProperties", "maxProperties", "items", "minItems", "maxItems",
        "minLength", "maxLength", "pattern", "minimum", "maximum", "anyOf", "default", "example",
    }
)  # fmt: skip
FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}
_STRUCTURE = frozenset(
    {"type", "nullable", "enum", "anyOf", "properties", "required", "items", "format", "additionalProperties"}
)


def gemini_parameters(rw: Rewrite, schema: JsonSchema) -> JsonSchema | None:
    """The declaration's ``parameters``, or ``None`` for a function without arguments."""
    if not schema.get("properties"):
        return None
    out: JsonSchema = rewrite_root(rw, schema, lambda node, path, depth: _node(rw, node, path))
    # Every argument may have been left out; then the function takes none.
    return out if out.get("properties") else None


def _node(rw: Rewrite, node: Any, path: str) -> JsonSchema:
    if not isinstance(node, dict):
        raise Unexpressible(path, "a schema that is a boolean")
    node = normalize(rw, node, path)
    out: JsonSchema = {}
    for key, value in node.items():
        if key in _STRUCTURE:
            continue
        if key not in KEYWORDS:
            rw.change(pointer(path, key), f"{key!r} removed: Gemini's schema has no such field")
        else:
            out[key] = value
    types = type_list(node)
    nullable = node.get("nullable") is True
    if "null" in types:
        types = [t for t in types if t != "null"]
        nullable = True
        rw.change(pointer(path, "type"), "null became nullable: true")
    if len(types) > 1:
        out["anyOf"] = [{"type": t} for t in types]
        rw.change(pointer(path, "type"), "a list of types became anyOf")
    elif types:
        out["type"] = types[0]
    if "anyOf" in node:
        branches, null_branch = _branches(rw, node["anyOf"], path)
        nullable = nullable or null_branch
        out["anyOf"] = branches
    if "enum" in node:
        nullable = _enum(rw, node, out, path) or nullable
    if "format" in node:
        _format(rw, node["format"], out, path)
    if "object" in types or ("properties" in node and not types):
        out["type"] = "object"
        _object(rw, node, out, path)
    if "array" in types and isinstance(node.get("items"), dict):
        out["items"] = _node(rw, node["items"], pointer(path, "items"))
    if "type" not in out and "anyOf" not in out:
        raise Unexpressible(path, "a value of any type (Gemini needs a type)")
    if nullable:
        out["nullable"] = True
    return out


def _object(rw: Rewrite, node: JsonSchema, out: JsonSchema, path: str) -> None:
    if not node.get("properties"):
        raise Unexpressible(path, "an object that lists no properties (Gemini needs them)")
    properties, required = rewrite_properties(rw, node, path, 0, lambda n, p, d: _node(rw, n, p))
    if not properties and path != "/parameters":
        raise Unexpressible(path, "an object whose properties Gemini cannot express")
    out["properties"] = properties
    if required:
        out["required"] = required
    if "additionalProperties" in node:
        rw.change(
            pointer(path, "additionalProperties"),
            "removed: Gemini has no additionalProperties (the guest still refuses unknown keys)",
        )


def _branches(rw: Rewrite, branches: Any, path: str) -> tuple[list[JsonSchema], bool]:
    kept: list[JsonSchema] = []
    null_branch = False
    for index, branch in enumerate(branches if isinstance(branches, list) else []):
        where = f"{path}/anyOf/{index}"
        if isinstance(branch, dict) and branch.get("type") == "null":
            null_branch = True
            rw.change(where, "the null alternative became nullable: true")
            continue
        try:
            kept.append(_node(rw, branch, where))
        except Unexpressible as problem:
            rw.change(where, f"alternative left out: {problem.reason}")
    if not kept:
        raise Unexpressible(path, "no alternative Gemini can express")
    return kept, null_branch


def _enum(rw: Rewrite, node: JsonSchema, out: JsonSchema, path: str) -> bool:
    values = list(node["enum"]) if isinstance(node["enum"], list) else []
    has_null = None in values
    values = [v for v in values if v is not None]
    if all(isinstance(v, str) for v in values) and values:
        out["enum"] = values
        out.setdefault("type", "string")
        if has_null:
            rw.change(pointer(path, "enum"), "null value became nullable: true")
        return has_null
    shown = ", ".join(_show(v) for v in values)
    _note(out, f"One of: {shown}.")
    rw.change(pointer(path, "enum"), "moved into the description: Gemini enums hold strings only")
    return has_null


def _format(rw: Rewrite, value: Any, out: JsonSchema, path: str) -> None:
    declared = out.get("type")
    if isinstance(declared, str) and value in FORMATS.get(declared, set()):
        out["format"] = value
        return
    _note(out, f"Format: {value}.")
    rw.change(pointer(path, "format"), f"format {value!r} moved into the description: Gemini refuses it")


def _note(out: JsonSchema, text: str) -> None:
    described = out.get("description")
    out["description"] = f"{described} {text}" if isinstance(described, str) and described else text


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def adapt(tool: ToolDefinition) -> Adaptation:
    def wire(name: str, description: str, parameters: Any, neutral: ToolDefinition) -> ProviderTool:
        declaration: ProviderTool = {"name": name, "description": description}
        if parameters is not None:
            declaration["parameters"] = parameters
        return declaration

    return adapt_with("gemini", tool, RULES, gemini_parameters, wire)
