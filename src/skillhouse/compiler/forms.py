"""The two argument forms: flat lists written by hand, and one JSON Schema object written by the wizard.

Both give the tool's schema (every ``#/types`` reference expanded) and the names of its body arguments.
"""

from __future__ import annotations

import json
import re

from skillhouse.compiler.context import ARGUMENT_NAME, OperationContext, check_one_place, name_list
from skillhouse.compiler.expansion import NODE_BUDGET, SCHEMA_LIMIT, TooLarge, UnknownType, expand_types
from skillhouse.compiler.metaschema import schema_problem
from skillhouse.skill import errors as codes
from skillhouse.skill.errors import SkillError, close_matches
from skillhouse.skill.frontmatter import RenderedJson

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.json_types import JsonObject, JsonSchema

NO_BODY = ("GET", "HEAD")
TYPE_QUALIFIERS = ("integer", "number", "boolean")
MEDIA_TYPE = re.compile(r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9_-]+=[^;\r\n]+)*$")


def flat_form(
    ctx: OperationContext,
    op: JsonObject,
    method: str,
    path_params: list[str],
    query: list[str],
    header: list[str],
) -> tuple[JsonSchema, list[str], str | None] | None:
    body = name_list(ctx, op, "body")
    if body and method in NO_BODY:
        ctx.error(codes.BODY_ON_GET, f"{method} has no body; send these fields in 'query' instead", "operation", "body")
    check_one_place(ctx, [("path", path_params), ("query", query), ("header", header), ("body", body)])
    path_names = set(path_params)
    sendable = {*query, *header, *body}
    qualified: dict[str, set[str]] = {}
    for key in ("optional", *TYPE_QUALIFIERS, "list"):
        members = name_list(ctx, op, key, check_names=False)
        qualified[key] = set()
        for index, name in enumerate(members):
            if name in path_names:
                ctx.error(
                    codes.PATH_PARAMETER,
                    f"{key}: {name!r} is a path parameter, which is always a required string",
                    "operation",
                    key,
                    index,
                )
            elif name not in sendable:
                near = close_matches(name, sorted(sendable), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                ctx.error(
                    codes.UNKNOWN_QUALIFIER,
                    f"{key}: {name!r} is not a field this operation sends{hint}",
                    "operation",
                    key,
                    index,
                )
            else:
                qualified[key].add(name)
    for name in sorted(sendable):
        typed = [k for k in TYPE_QUALIFIERS if name in qualified[k]]
        if len(typed) > 1:
            ctx.error(codes.INVALID_OPERATION, f"{name!r} is given two types ({', '.join(typed)})", "operation", typed[1])

    properties: dict[str, JsonSchema] = {}
    for name in path_params:
        properties[name] = {"type": "string"}
    for name in query + header + body:
        kind = next((k for k in TYPE_QUALIFIERS if name in qualified[k]), "string")
        item: JsonSchema = {"type": kind}
        properties[name] = {"type": "array", "items": item} if name in qualified["list"] else item
    required = sorted(n for n in properties if n not in qualified["optional"])
    schema: JsonSchema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return schema, sorted(body), None


def written_plain(text: str) -> bool:
    """Whether the schema whose JSON text is ``text`` is its own expansion, so expanding it would copy it unchanged.

    Written without a reference and too short to hold more nodes than the expansion allows: no
    "$ref" in the text and no "\\u00" escape (which could spell one: "\\u0024ref") means no key "$ref"
    anywhere in it.
    """
    return len(text) <= NODE_BUDGET and "$ref" not in text and "\\u00" not in text


def schema_form(
    ctx: OperationContext,
    op: JsonObject,
    method: str,
    path_params: list[str],
    query: list[str],
    header: list[str],
    composite: set[str] | frozenset[str] = frozenset(),
) -> tuple[JsonSchema, list[str], str | None] | None:
    """The schema form; a path parameter in ``composite`` (style ``matrix``) may be a list or an object."""
    raw = op["schema"]
    if type(raw) is RenderedJson:  # the wizard's own rendering: the value it was written from
        parsed = raw.value
    elif isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            line = json_line(ctx, exc.lineno)
            ctx.errors.append(SkillError(ctx.shown, line, codes.INVALID_SCHEMA, f"schema is not valid JSON: {exc.msg}"))
            return None
        except RecursionError:
            ctx.error(codes.INVALID_SCHEMA, "schema is nested too deeply", "operation", "schema")
            return None
    elif isinstance(raw, dict):
        parsed = raw
    else:
        ctx.error(codes.INVALID_SCHEMA, "schema must be a JSON Schema object (an indented block of JSON)", "operation", "schema")
        return None
    if not isinstance(parsed, dict) or parsed.get("type") != "object":
        ctx.error(codes.INVALID_SCHEMA, 'the schema must be an object schema: {"type": "object", "properties": {...}}', "operation", "schema")
        return None
    # The metaschema check runs on the schema as written; each shared type is checked once per
    # package (check_types), so expanded copies of the same type are not checked again.
    problem = schema_problem(parsed)
    if problem is not None:
        ctx.error(codes.INVALID_SCHEMA, f"schema {problem}", "operation", "schema")
        return None
    try:
        plain = raw.plain if type(raw) is RenderedJson else isinstance(raw, str) and written_plain(raw)
        schema = parsed if plain else expand_types(parsed, ctx.types, ctx.expansions)
    except UnknownType as exc:
        ctx.error(codes.UNKNOWN_TYPE, exc.reason, "operation", "schema")
        return None
    except TooLarge:
        ctx.error(
            codes.SCHEMA_TOO_LARGE,
            f"the expanded schema is far over {SCHEMA_LIMIT} bytes; split the operation or simplify its types",
            "operation",
            "schema",
        )
        return None
    except RecursionError:
        ctx.error(codes.INVALID_SCHEMA, "schema is nested too deeply", "operation", "schema")
        return None
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):  # pragma: no cover - the metaschema refuses this
        properties = {}
    additional = schema.get("additionalProperties", False)
    if additional is not False:
        ctx.error(
            codes.INVALID_SCHEMA,
            "additionalProperties must be false at the root: an undeclared argument has nowhere to be sent",
            "operation",
            "schema",
        )
    bad = [n for n in properties if not ARGUMENT_NAME.match(n)]
    for name in bad:
        ctx.error(
            codes.INVALID_SCHEMA,
            f"argument name {name!r} is not accepted by every provider (letters, digits, '_' and '-', at most 64); "
            "rename it and map it with names: {new_name: '" + name + "'}",
            "operation",
            "schema",
        )
    for key, members in (("query", query), ("header", header)):
        for index, name in enumerate(members):
            if name not in properties:
                ctx.error(codes.UNKNOWN_QUALIFIER, f"{key}: {name!r} is not a property of the schema", "operation", key, index)
    check_one_place(ctx, [("path", path_params), ("query", query), ("header", header)])
    required = list(schema.get("required", []))
    new_properties = dict(properties)
    for name in path_params:
        prop = new_properties.get(name)
        if prop is None:
            new_properties[name] = {"type": "string"}
        elif isinstance(prop, dict) and prop.get("type") in ("object", "array") and name not in composite:
            ctx.error(codes.PATH_PARAMETER, f"path parameter {name!r} must be a string or number, not {prop['type']} "
                      "(unless its style is matrix)", "operation", "schema")
        if name not in required:
            required.append(name)
    located = {*path_params, *query, *header}
    body = sorted(n for n in new_properties if n not in located)
    if body and method in NO_BODY:
        ctx.error(
            codes.BODY_ON_GET,
            f"{method} has no body, but the schema's {', '.join(body[:5])} are not path or query parameters; list them in 'query'",
            "operation",
            "schema",
        )
    payload = op.get("payload")
    if payload is not None and (payload not in body or len(body) != 1):
        ctx.error(codes.INVALID_OPERATION, "payload must name the one body argument, which is sent as the whole body", "operation", "payload")
    out = dict(schema)
    out["properties"] = new_properties
    out["required"] = sorted(set(required))
    out["additionalProperties"] = False
    return out, body, payload if isinstance(payload, str) else None


def raw_body(ctx: OperationContext, op: JsonObject, encoding: str, schema: JsonSchema, payload: str | None) -> str | None:
    """``encoding: raw``: one string ``payload`` sent as it is, under the declared ``content_type``."""
    content_type = op.get("content_type")
    if encoding != "raw":
        if content_type is not None:
            ctx.error(codes.INVALID_OPERATION, "content_type goes with 'encoding: raw' only", "operation", "content_type")
        return None
    if payload is None:
        ctx.error(codes.INVALID_OPERATION, "'encoding: raw' sends the payload argument as it is; name it with payload:", "operation", "encoding")
        return None
    if schema["properties"].get(payload, {}).get("type") != "string":
        ctx.error(codes.INVALID_OPERATION, f"the raw payload {payload!r} must be a string", "operation", "payload")
    if not isinstance(content_type, str) or not MEDIA_TYPE.match(content_type):
        ctx.error(codes.INVALID_OPERATION, "'encoding: raw' needs content_type: a media type such as image/jpeg", "operation", "encoding")
        return None
    return content_type


def json_line(ctx: OperationContext, line_in_json: int) -> int:
    """The file line of line ``line_in_json`` of the schema's JSON text."""
    start: int = ctx.front.value_lines.get(("operation", "schema"), ctx.front.line_of("operation", "schema"))
    lines = ctx.text.splitlines()
    indicator = str(lines[start - 1]).rstrip() if 0 < start <= len(lines) else ""
    block = indicator.endswith(("|", ">", "|-", ">-", "|+", ">+"))
    return start + line_in_json if block else start + line_in_json - 1
