"""Compiling one operation file's frontmatter into an :class:`OperationDecl`, with located errors.

Two argument forms describe the same thing (shared/DESIGN.md, "Skill package"): flat lists written
by hand, and one JSON Schema object (``schema:``) written by the wizard. Both end as one expanded
schema plus the location of every argument. Every problem is collected; nothing stops at the first.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from skillhouse.compiler.expansion import SCHEMA_LIMIT, TooLarge, UnknownType, compact_size, expand_types
from skillhouse.compiler.metaschema import schema_problem
from skillhouse.compiler.model import ENCODINGS, QUERY_STYLES, Argument, Location, OperationDecl
from skillhouse.skill import errors as codes
from skillhouse.skill.errors import SkillError
from skillhouse.skill.frontmatter import Frontmatter

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
NO_BODY = ("GET", "HEAD")
ARGUMENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_PATH_SEGMENT_PARAM = re.compile(r"^\{([A-Za-z0-9_-]+)\}$")
# Schema form (the wizard's, for real APIs) also takes literal text around the one parameter of a
# segment, as in Twilio's /Accounts/{Sid}.json; the value is still encoded as a whole segment would be.
_AFFIXED_SEGMENT_PARAM = re.compile(r"^[^{}]*\{([A-Za-z0-9_-]+)\}[^{}]*$")
COMMON_KEYS = {"method", "url", "query", "header", "headers", "identity", "encoding", "style", "names"}
FLAT_KEYS = COMMON_KEYS | {"body", "optional", "integer", "number", "boolean", "list"}
SCHEMA_KEYS = COMMON_KEYS | {"schema", "payload", "content_type"}
MEDIA_TYPE = re.compile(r"^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9_-]+=[^;\r\n]+)*$")
FLAT_ONLY = FLAT_KEYS - SCHEMA_KEYS
TYPE_QUALIFIERS = ("integer", "number", "boolean")
# A skill never carries credentials, and the transport owns framing headers.
FORBIDDEN_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "content-type", "content-length", "host"}
)
FILE_KEYS = ("operation", "approval")


@dataclass
class OperationContext:
    """What compiling an operation needs from its package."""

    skill: str
    file: str
    """File name inside the package (``create_booking.md``)."""
    shown: str
    """The file as errors name it."""
    front: Frontmatter
    text_lines: list[str]
    types: dict[str, Any]
    errors: list[SkillError] = field(default_factory=list)

    def error(self, code: str, message: str, *path: str | int) -> None:
        self.errors.append(SkillError(self.shown, self.front.line_of(*path), code, message))


def check_file_keys(ctx: OperationContext) -> None:
    """Refuse top-level frontmatter keys other than ``operation`` and ``approval`` (a typo hides an operation)."""
    for key in ctx.front.data:
        if key not in FILE_KEYS:
            near = difflib.get_close_matches(key, FILE_KEYS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f"; allowed: {', '.join(FILE_KEYS)}"
            ctx.error(codes.INVALID_FRONTMATTER, f"unknown key {key!r}{hint}", key)


def parse_gate(ctx: OperationContext) -> tuple[str, str] | None:
    """The ``approval`` block's ``matches`` as (METHOD, path template), or ``None``."""
    approval = ctx.front.data.get("approval")
    if approval is None:
        return None
    if not isinstance(approval, dict) or not isinstance(approval.get("matches"), str):
        ctx.error(codes.INVALID_FRONTMATTER, "approval must be a mapping with 'matches: \"METHOD /path\"'", "approval")
        return None
    for key in approval:
        if key not in ("matches", "reason"):
            ctx.error(codes.INVALID_FRONTMATTER, f"unknown approval key {key!r}; allowed: matches, reason", "approval", key)
    parts = approval["matches"].split()
    if len(parts) != 2 or parts[0].upper() not in (*METHODS, "*") or not parts[1].startswith(("/", "http")):
        ctx.error(
            codes.INVALID_FRONTMATTER,
            f"approval.matches {approval['matches']!r} must be 'METHOD /path', e.g. 'POST /charges'",
            "approval",
            "matches",
        )
        return None
    return parts[0].upper(), parts[1]


def compile_operation(ctx: OperationContext, tool_name: str, description: str, prose: str) -> OperationDecl | None:
    """Compile the ``operation`` block of ``ctx``'s file, or return ``None`` with errors recorded."""
    before = len(ctx.errors)
    op = ctx.front.data["operation"]
    if not isinstance(op, dict):
        ctx.error(codes.INVALID_OPERATION, "operation must be a mapping with method and url", "operation")
        return None
    schema_form = "schema" in op
    allowed = SCHEMA_KEYS if schema_form else FLAT_KEYS
    for key in op:
        if key not in allowed:
            if schema_form and key in FLAT_ONLY:
                message = f"{key!r} is a flat-list key; with 'schema:' the types and required fields come from the schema"
            else:
                near = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                message = f"unknown operation key {key!r}{hint}"
            ctx.error(codes.INVALID_OPERATION, message, "operation", key)

    method = op.get("method")
    if not isinstance(method, str) or method.upper() not in METHODS:
        ctx.error(codes.INVALID_OPERATION, f"method must be one of {', '.join(METHODS)}", "operation", "method")
        method = "GET"
    method = method.upper()
    url = op.get("url")
    path_params = _check_url(ctx, url, affixes=schema_form)
    if not isinstance(url, str):
        url = ""

    query = _name_list(ctx, op, "query")
    header = _name_list(ctx, op, "header")
    headers = _fixed_headers(ctx, op.get("headers"))
    encoding = op.get("encoding", "json")
    if encoding not in ENCODINGS:
        ctx.error(codes.INVALID_OPERATION, f"encoding must be one of {', '.join(ENCODINGS)}", "operation", "encoding")
        encoding = "json"

    if schema_form:
        built = _schema_form(ctx, op, method, path_params, query, header)
    else:
        built = _flat_form(ctx, op, method, path_params, query, header)
    if built is None:
        return None
    schema, body, payload = built
    content_type = _raw_body(ctx, op, encoding, schema, payload)

    sent = [n for n, _ in path_params] + [n for n, _ in query] + [n for n, _ in header] + body
    names = _mapping(ctx, op, "names")
    styles = _mapping(ctx, op, "style")
    query_names = {n for n, _ in query}
    for arg, wire in names.items():
        if arg not in sent:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"names: {arg!r} is not an argument of this operation", "operation", "names", arg)
        elif not isinstance(wire, str) or not wire:
            ctx.error(codes.INVALID_OPERATION, f"names: the wire name of {arg!r} must be a non-empty string", "operation", "names", arg)
    for arg, style in styles.items():
        if arg not in query_names:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"style: {arg!r} is not a query parameter", "operation", "style", arg)
        elif style not in QUERY_STYLES:
            ctx.error(codes.INVALID_OPERATION, f"style of {arg!r} must be one of {', '.join(QUERY_STYLES)}", "operation", "style", arg)

    identity = _name_list(ctx, op, "identity", check_names=False)
    for index, (name, _) in enumerate(identity):
        if name not in sent:
            ctx.error(
                codes.UNKNOWN_IDENTITY_FIELD,
                f"identity names {name!r}, which this operation does not send; identity fields must be sent",
                "operation",
                "identity",
                index,
            )

    size = compact_size(schema)
    if size > SCHEMA_LIMIT:
        ctx.error(
            codes.SCHEMA_TOO_LARGE,
            f"the expanded schema is {size} bytes; the limit is {SCHEMA_LIMIT}. Split the operation or simplify its types",
            "operation",
            "schema" if schema_form else "method",
        )
    gate = parse_gate(ctx)
    approval = None
    if gate is not None:
        if not _gate_matches(gate, method, url):
            ctx.error(
                codes.GATE_MISMATCH,
                f"approval.matches {' '.join(gate)!r} does not match this operation ({method} {_path_of(url)}); "
                "a gate in a file with an operation must match it",
                "approval",
                "matches",
            )
        approval = dict(ctx.front.data["approval"])
    if len(ctx.errors) > before:
        return None

    wire_of = {a: str(w) for a, w in names.items()}
    arguments: list[Argument] = []
    for location, members in (
        ("path", [n for n, _ in path_params]),
        ("query", [n for n, _ in query]),
        ("header", [n for n, _ in header]),
        ("body", body),
    ):
        loc: Location = location  # type: ignore[assignment]
        for name in members:
            style = styles.get(name) if loc == "query" else None
            arguments.append(Argument(name, loc, wire_of.get(name, name), None if style in (None, "form") else str(style)))
    return OperationDecl(
        name=ctx.file.removesuffix(".md"),
        tool_name=tool_name,
        file=ctx.file,
        description=description,
        prose=prose,
        method=method,
        url=url,
        arguments=tuple(arguments),
        schema=schema,
        encoding=str(encoding),
        headers=headers,
        identity=tuple(sorted({n for n, _ in identity})),
        approval=approval,
        payload=payload,
        content_type=content_type,
    )


def _flat_form(
    ctx: OperationContext,
    op: dict[str, Any],
    method: str,
    path_params: list[tuple[str, int]],
    query: list[tuple[str, int]],
    header: list[tuple[str, int]],
) -> tuple[dict[str, Any], list[str], str | None] | None:
    body = _name_list(ctx, op, "body")
    if body and method in NO_BODY:
        ctx.error(codes.BODY_ON_GET, f"{method} has no body; send these fields in 'query' instead", "operation", "body")
    _check_one_place(ctx, [("path", path_params), ("query", query), ("header", header), ("body", body)])
    path_names = {n for n, _ in path_params}
    sendable = {n for n, _ in query} | {n for n, _ in header} | {n for n, _ in body}
    qualified: dict[str, set[str]] = {}
    for key in ("optional", *TYPE_QUALIFIERS, "list"):
        members = _name_list(ctx, op, key, check_names=False)
        qualified[key] = set()
        for index, (name, _) in enumerate(members):
            if name in path_names:
                ctx.error(
                    codes.PATH_PARAMETER,
                    f"{key}: {name!r} is a path parameter, which is always a required string",
                    "operation",
                    key,
                    index,
                )
            elif name not in sendable:
                near = difflib.get_close_matches(name, sorted(sendable), n=1)
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

    properties: dict[str, Any] = {}
    for name, _ in path_params:
        properties[name] = {"type": "string"}
    for name in [n for n, _ in query] + [n for n, _ in header] + [n for n, _ in body]:
        kind = next((k for k in TYPE_QUALIFIERS if name in qualified[k]), "string")
        item: dict[str, Any] = {"type": kind}
        properties[name] = {"type": "array", "items": item} if name in qualified["list"] else item
    required = sorted(n for n in properties if n not in qualified["optional"])
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return schema, sorted(n for n, _ in body), None


def _schema_form(
    ctx: OperationContext,
    op: dict[str, Any],
    method: str,
    path_params: list[tuple[str, int]],
    query: list[tuple[str, int]],
    header: list[tuple[str, int]],
) -> tuple[dict[str, Any], list[str], str | None] | None:
    raw = op["schema"]
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            line = _json_line(ctx, exc.lineno)
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
        schema = expand_types(parsed, ctx.types)
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
    path_names = [n for n, _ in path_params]
    for key, members in (("query", query), ("header", header)):
        for index, (name, _) in enumerate(members):
            if name not in properties:
                ctx.error(codes.UNKNOWN_QUALIFIER, f"{key}: {name!r} is not a property of the schema", "operation", key, index)
    _check_one_place(ctx, [("path", path_params), ("query", query), ("header", header)])
    required = list(schema.get("required", []))
    new_properties = dict(properties)
    for name in path_names:
        prop = new_properties.get(name)
        if prop is None:
            new_properties[name] = {"type": "string"}
        elif isinstance(prop, dict) and prop.get("type") in ("object", "array"):
            ctx.error(codes.PATH_PARAMETER, f"path parameter {name!r} must be a string or number, not {prop['type']}", "operation", "schema")
        if name not in required:
            required.append(name)
    located = set(path_names) | {n for n, _ in query} | {n for n, _ in header}
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


def _raw_body(ctx: OperationContext, op: dict[str, Any], encoding: str, schema: dict[str, Any], payload: str | None) -> str | None:
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


def _check_url(ctx: OperationContext, url: Any, affixes: bool) -> list[tuple[str, int]]:
    if not isinstance(url, str) or not url:
        ctx.error(codes.INVALID_OPERATION, "url must be an absolute http(s) URL", "operation", "url")
        return []
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        ctx.error(codes.INVALID_OPERATION, f"url is malformed: {exc}", "operation", "url")
        return []
    if parts.scheme not in ("http", "https") or not parts.netloc:
        ctx.error(codes.INVALID_OPERATION, f"url {url!r} must be an absolute http(s) URL", "operation", "url")
        return []
    if parts.fragment:
        ctx.error(codes.INVALID_OPERATION, "url must not have a fragment (#...)", "operation", "url")
    if any(c in parts.netloc + parts.query for c in "{}"):
        ctx.error(codes.PATH_PARAMETER, "parameters belong in whole path segments, not in the host or query", "operation", "url")
    params: list[tuple[str, int]] = []
    line = ctx.front.line_of("operation", "url")
    for segment in parts.path.split("/"):
        if "{" not in segment and "}" not in segment:
            continue
        match = (_AFFIXED_SEGMENT_PARAM if affixes else _PATH_SEGMENT_PARAM).match(segment)
        if match is None:
            rule = "one parameter per segment" if affixes else "a path parameter must be a whole segment"
            ctx.error(
                codes.PATH_PARAMETER,
                f"path segment {segment!r}: {rule}, like /bookings/{{id}}",
                "operation",
                "url",
            )
        elif match.group(1) in [p for p, _ in params]:
            ctx.error(codes.PATH_PARAMETER, f"path parameter {match.group(1)!r} appears twice", "operation", "url")
        else:
            params.append((match.group(1), line))
    return params


def _name_list(ctx: OperationContext, op: dict[str, Any], key: str, check_names: bool = True) -> list[tuple[str, int]]:
    value = op.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.error(codes.INVALID_OPERATION, f"{key} must be a list of field names, like [room_id, guest_name]", "operation", key)
        return []
    out: list[tuple[str, int]] = []
    for index, name in enumerate(value):
        if check_names and not ARGUMENT_NAME.match(name):
            ctx.error(
                codes.INVALID_OPERATION,
                f"{key}: {name!r} is not a name every provider accepts (letters, digits, '_' and '-'); "
                f"use another and map it with names:",
                "operation",
                key,
                index,
            )
            continue
        out.append((name, ctx.front.line_of("operation", key, index)))
    return out


def _check_one_place(ctx: OperationContext, groups: Iterable[tuple[str, list[tuple[str, int]]]]) -> None:
    seen: dict[str, str] = {}
    for where, members in groups:
        for index, (name, _) in enumerate(members):
            if name in seen:
                other = seen[name]
                detail = f"twice in {where}" if other == where else f"in both {other} and {where}"
                path: tuple[str | int, ...] = ("operation", "url") if where == "path" else ("operation", where, index)
                ctx.error(codes.NAME_IN_TWO_PLACES, f"{name!r} is {detail}; a name lives in one place", *path)
            else:
                seen[name] = where


def _mapping(ctx: OperationContext, op: dict[str, Any], key: str) -> dict[str, Any]:
    value = op.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        ctx.error(codes.INVALID_OPERATION, f"{key} must be a mapping", "operation", key)
        return {}
    return value


def _fixed_headers(ctx: OperationContext, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        ctx.error(codes.INVALID_OPERATION, "headers must map header names to string values", "operation", "headers")
        return {}
    out: dict[str, str] = {}
    for name, header_value in value.items():
        if name.lower() in FORBIDDEN_HEADERS:
            ctx.error(
                codes.INVALID_OPERATION,
                f"header {name!r} cannot be fixed in a skill (credentials are bound in the gateway; "
                "Content-Type comes from encoding)",
                "operation",
                "headers",
                name,
            )
        elif not re.match(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", name) or any(c in header_value for c in "\r\n\0"):
            ctx.error(codes.INVALID_OPERATION, f"header {name!r} has a name or value HTTP does not allow", "operation", "headers", name)
        else:
            out[name] = header_value
    return out


def _json_line(ctx: OperationContext, json_line: int) -> int:
    start = ctx.front.value_lines.get(("operation", "schema"), ctx.front.line_of("operation", "schema"))
    indicator = ctx.text_lines[start - 1].rstrip() if 0 < start <= len(ctx.text_lines) else ""
    block = indicator.endswith(("|", ">", "|-", ">-", "|+", ">+"))
    return start + json_line if block else start + json_line - 1


def _path_of(url: str) -> str:
    try:
        return urlsplit(url).path or "/"
    except ValueError:
        return url


def _normal_template(path: str) -> list[str]:
    return ["{}" if (s.startswith("{") and s.endswith("}")) or s == "*" else s for s in path.rstrip("/").split("/")]


def _gate_matches(gate: tuple[str, str], method: str, url: str) -> bool:
    gate_method, gate_path = gate
    if gate_method not in ("*", method):
        return False
    if gate_path.startswith("http"):
        return _normal_template(gate_path) == _normal_template(url)
    return _normal_template(gate_path) == _normal_template(_path_of(url))
