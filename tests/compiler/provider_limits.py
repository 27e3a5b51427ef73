"""Each provider's published limits, checked on a tool list exactly as it would be sent.

Written apart from the profiles (no constants shared) so that a profile that forgets a rule is
caught here. Sources: OpenAI function calling and Structured Outputs "Supported schemas"; Claude
"Define tools" and "Tool search tool"; Gemini API ``FunctionDeclaration``/``Schema`` reference;
Bedrock ``ToolSpecification``; MCP specification 2025-11-25 "Tools".
"""

from __future__ import annotations

import re
from typing import Any

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC_PROPERTY = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.\-]{0,63}$")
GEMINI_ARGUMENT = re.compile(r"^[a-zA-Z0-9_]{1,64}\Z")
BEDROCK_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

STRICT_KEYWORDS = {
    "type", "description", "title", "enum", "anyOf", "properties", "required", "additionalProperties",
    "items", "minItems", "maxItems", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum",
    "minimum", "exclusiveMinimum",
}  # fmt: skip
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
GEMINI_KEYWORDS = {
    "type", "format", "title", "description", "nullable", "enum", "properties", "required",
    "propertyOrdering", "minProperties", "maxProperties", "items", "minItems", "maxItems", "minLength",
    "maxLength", "pattern", "minimum", "maximum", "anyOf", "default", "example",
}  # fmt: skip
GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
GEMINI_FORMATS = {
    "string": {"enum", "date-time"},
    "integer": {"int32", "int64"},
    "number": {"float", "double"},
}
MCP_HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}


def problems(profile: str, tools: list[dict[str, Any]]) -> list[str]:
    """Every way ``tools`` (a provider tool list) breaks ``profile``'s published limits."""
    found: list[str] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if profile in ("openai", "openai-strict"):
            found += _openai(tool, where, strict=profile == "openai-strict")
        elif profile == "anthropic":
            found += _anthropic(tool, where)
        elif profile == "gemini":
            declarations = tool.get("functionDeclarations")
            if not isinstance(declarations, list) or set(tool) != {"functionDeclarations"}:
                found.append(f"{where}: a Gemini tool is {{'functionDeclarations': [...]}}")
                continue
            for j, declaration in enumerate(declarations):
                found += _gemini(declaration, f"{where}.functionDeclarations[{j}]")
        elif profile == "bedrock":
            found += _bedrock(tool, where)
        elif profile == "mcp":
            found += _mcp(tool, where)
        else:
            found.append(f"unknown profile {profile}")
    return found


def _openai(tool: dict[str, Any], where: str, *, strict: bool) -> list[str]:
    if tool.get("type") == "tool_search":
        return [] if set(tool) == {"type"} else [f"{where}: tool_search takes no other keys here"]
    if tool.get("type") != "function":
        return [f"{where}: type must be 'function'"]
    function = tool.get("function", tool)
    found = []
    if "function" not in tool and tool.get("strict") is not strict:
        found.append(f"{where}: Responses function tools default to strict; strict must be {strict}")
    if "function" in tool and "defer_loading" in tool:
        found.append(f"{where}: defer_loading exists in the Responses API only")
    if not OPENAI_NAME.match(function.get("name", "")):
        found.append(f"{where}: name {function.get('name')!r}")
    if len(function.get("description", "")) > 1024:
        found.append(f"{where}: description over 1024 characters")
    parameters = function.get("parameters")
    found += _object_root(parameters, where, no_union=strict)
    if strict:
        if function.get("strict") is not True:
            found.append(f"{where}: strict must be true")
        found += _strict(parameters, f"{where}.parameters", 1)
        count = _count(parameters)
        if count[0] > 5000 or count[1] > 1000:
            found.append(f"{where}: {count[0]} properties, {count[1]} enum values")
    return found


def _strict(node: Any, where: str, depth: int) -> list[str]:
    if not isinstance(node, dict):
        return [f"{where}: not a schema object"]
    found = [f"{where}: keyword {k!r} not supported in strict mode" for k in node if k not in STRICT_KEYWORDS]
    if "format" in node and node["format"] not in STRICT_FORMATS:
        found.append(f"{where}: format {node['format']!r}")
    types = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
    if "type" not in node and "anyOf" not in node and "enum" not in node:
        found.append(f"{where}: no type")
    if "object" in types:
        if depth > 10:
            found.append(f"{where}: nested deeper than 10 levels")
        properties = node.get("properties")
        if not isinstance(properties, dict):
            found.append(f"{where}: object without properties")
            properties = {}
        if node.get("additionalProperties") is not False:
            found.append(f"{where}: additionalProperties must be false")
        if sorted(node.get("required", [])) != sorted(properties):
            found.append(f"{where}: every property must be required")
        for name, sub in properties.items():
            found += _strict(sub, f"{where}.properties.{name}", depth + 1)
    if "array" in types:
        if not isinstance(node.get("items"), dict):
            found.append(f"{where}: array without items")
        else:
            found += _strict(node["items"], f"{where}.items", depth)
    for index, branch in enumerate(node.get("anyOf", [])):
        found += _strict(branch, f"{where}.anyOf[{index}]", depth)
    return found


def _count(node: Any) -> tuple[int, int]:
    if not isinstance(node, dict):
        return 0, 0
    properties, enums = 0, len(node.get("enum", []))
    children = list((node.get("properties") or {}).values()) + list(node.get("anyOf", []))
    children += [node["items"]] if isinstance(node.get("items"), dict) else []
    properties += len(node.get("properties") or {})
    for child in children:
        p, e = _count(child)
        properties, enums = properties + p, enums + e
    return properties, enums


def _anthropic(tool: dict[str, Any], where: str) -> list[str]:
    if str(tool.get("type", "")).startswith("tool_search_tool_"):
        return (
            []
            if tool.get("name", "").startswith("tool_search_tool_") and "defer_loading" not in tool
            else [f"{where}: tool search tool"]
        )
    found = [] if ANTHROPIC_NAME.match(tool.get("name", "")) else [f"{where}: name {tool.get('name')!r}"]
    if set(tool) - {"name", "description", "input_schema", "defer_loading"}:
        found.append(f"{where}: unexpected keys {sorted(set(tool))}")
    found += _object_root(tool.get("input_schema"), where, no_union=True)
    found += [
        f"{where}: property key {k!r}"
        for k in _property_keys(tool.get("input_schema"))
        if not ANTHROPIC_PROPERTY.match(k)
    ]
    return found


def _gemini(declaration: dict[str, Any], where: str) -> list[str]:
    found = (
        []
        if GEMINI_NAME.match(declaration.get("name", ""))
        else [f"{where}: name {declaration.get('name')!r}"]
    )
    if set(declaration) - {"name", "description", "parameters", "parametersJsonSchema"}:
        found.append(f"{where}: unexpected keys")
    if "parameters" in declaration and "parametersJsonSchema" in declaration:
        found.append(f"{where}: parameters and parametersJsonSchema are mutually exclusive")
    for key in ("parameters", "parametersJsonSchema"):
        if key in declaration:
            parameters = declaration[key]
            if not isinstance(parameters, dict) or parameters.get("type") != "object":
                found.append(f"{where}: {key} must be an object schema")
                continue
            found += [
                f"{where}.{key}: argument name {name!r}"
                for name in parameters.get("properties") or {}
                if not GEMINI_ARGUMENT.match(name)
            ]
            found += [f"{where}.{key}: an empty string among enum values" for _ in _empty_enum_values(parameters)]
            if key == "parameters":
                found += _gemini_schema(parameters, f"{where}.parameters")
    return found


def _empty_enum_values(node: Any) -> list[Any]:
    if isinstance(node, list):
        return [hit for item in node for hit in _empty_enum_values(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if isinstance(node.get("enum"), list) and "" in node["enum"] else []
    return own + [hit for value in node.values() for hit in _empty_enum_values(value)]


def _gemini_schema(node: Any, where: str) -> list[str]:
    if not isinstance(node, dict):
        return [f"{where}: not a schema object"]
    found = [f"{where}: field {k!r} not in Gemini's Schema" for k in node if k not in GEMINI_KEYWORDS]
    declared = node.get("type")
    if declared is None and "anyOf" not in node:
        found.append(f"{where}: no type")
    if declared is not None and declared not in GEMINI_TYPES:
        found.append(f"{where}: type {declared!r}")
    if "format" in node and node["format"] not in GEMINI_FORMATS.get(declared, set()):
        found.append(f"{where}: format {node['format']!r} for type {declared!r}")
    if "enum" in node and not all(isinstance(v, str) for v in node["enum"]):
        found.append(f"{where}: enum values must be strings")
    if declared == "object":
        if not node.get("properties"):
            found.append(f"{where}: OBJECT needs non-empty properties")
        for name, sub in (node.get("properties") or {}).items():
            found += _gemini_schema(sub, f"{where}.properties.{name}")
    if "items" in node:
        found += _gemini_schema(node["items"], f"{where}.items")
    for index, branch in enumerate(node.get("anyOf", [])):
        found += _gemini_schema(branch, f"{where}.anyOf[{index}]")
    return found


def _bedrock(tool: dict[str, Any], where: str) -> list[str]:
    spec = tool.get("toolSpec")
    if not isinstance(spec, dict) or set(tool) != {"toolSpec"}:
        return [f"{where}: a Bedrock tool is {{'toolSpec': ...}}"]
    found = [] if BEDROCK_NAME.match(spec.get("name", "")) else [f"{where}: name {spec.get('name')!r}"]
    if len(spec.get("description", "")) < 1:
        found.append(f"{where}: description must have at least 1 character")
    schema = (spec.get("inputSchema") or {}).get("json")
    found += _object_root(schema, where, no_union=True)
    found += [
        f"{where}: property key {k!r}" for k in _property_keys(schema) if not ANTHROPIC_PROPERTY.match(k)
    ]
    return found


def _mcp(tool: dict[str, Any], where: str) -> list[str]:
    found = [] if MCP_NAME.match(tool.get("name", "")) else [f"{where}: name {tool.get('name')!r}"]
    found += _object_root(tool.get("inputSchema"), where, no_union=False)
    annotations = tool.get("annotations", {})
    if set(annotations) - MCP_HINTS or not all(isinstance(v, bool) for v in annotations.values()):
        found.append(f"{where}: annotations {annotations}")
    return found


def _object_root(schema: Any, where: str, *, no_union: bool) -> list[str]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [f"{where}: the input schema root must be of type object"]
    if no_union and any(k in schema for k in ("anyOf", "oneOf", "allOf")):
        return [f"{where}: the input schema root cannot be a union"]
    return []


def _property_keys(node: Any) -> list[str]:
    keys: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                keys += list(value)
                for sub in value.values():
                    keys += _property_keys(sub)
            else:
                keys += _property_keys(value)
    elif isinstance(node, list):
        for item in node:
            keys += _property_keys(item)
    return keys
