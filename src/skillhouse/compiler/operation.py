"""Compiling one operation file's frontmatter into an :class:`OperationDecl`, with located errors.

Two argument forms describe the same thing (README.md, "A skill package"): flat lists written
by hand, and one JSON Schema object (``schema:``) written by the wizard. Both end as one expanded
schema plus the location of every argument. Every problem is collected; nothing stops at the first.
"""

from __future__ import annotations

import re

from skillhouse.compiler.context import OperationContext, mapping, name_list
from skillhouse.compiler.expansion import SCHEMA_LIMIT, compact_size
from skillhouse.compiler.forms import flat_form, raw_body, schema_form
from skillhouse.compiler.model import ENCODINGS, PATH_STYLES, QUERY_STYLES, Argument, OperationDecl
from skillhouse.compiler.urls import check_url, gate_matches, path_of
from skillhouse.compiler.wire_limits import wire_limited
from skillhouse.skill import errors as codes
from skillhouse.skill.errors import close_matches

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.compiler.model import Location

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
COMMON_KEYS = {"method", "url", "query", "header", "headers", "identity", "encoding", "style", "names", "allow_empty", "explode",
               "defaults"}
FLAT_KEYS = COMMON_KEYS | {"body", "optional", "integer", "number", "boolean", "list"}
SCHEMA_KEYS = COMMON_KEYS | {"schema", "payload", "content_type"}
FLAT_ONLY = FLAT_KEYS - SCHEMA_KEYS
# A skill never carries credentials, and the transport owns framing headers.
FORBIDDEN_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "content-type", "content-length", "host"}
)
FILE_KEYS = ("operation", "approval")



def check_file_keys(ctx: OperationContext) -> None:
    """Refuse top-level frontmatter keys other than ``operation`` and ``approval`` (a typo hides an operation)."""
    for key in ctx.front.data:
        if key not in FILE_KEYS:
            near = close_matches(key, FILE_KEYS, n=1)
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
    written_as_schema = "schema" in op
    allowed = SCHEMA_KEYS if written_as_schema else FLAT_KEYS
    for key in op:
        if key not in allowed:
            if written_as_schema and key in FLAT_ONLY:
                message = f"{key!r} is a flat-list key; with 'schema:' the types and required fields come from the schema"
            else:
                near = close_matches(str(key), sorted(allowed), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                message = f"unknown operation key {key!r}{hint}"
            ctx.error(codes.INVALID_OPERATION, message, "operation", key)

    method = op.get("method")
    if not isinstance(method, str) or method.upper() not in METHODS:
        ctx.error(codes.INVALID_OPERATION, f"method must be one of {', '.join(METHODS)}", "operation", "method")
        method = "GET"
    method = method.upper()
    url = op.get("url")
    path_params = check_url(ctx, url, affixes=written_as_schema)
    if not isinstance(url, str):
        url = ""

    query = name_list(ctx, op, "query")
    header = name_list(ctx, op, "header")
    headers = fixed_headers(ctx, op.get("headers"))
    encoding = op.get("encoding", "json")
    if encoding not in ENCODINGS:
        ctx.error(codes.INVALID_OPERATION, f"encoding must be one of {', '.join(ENCODINGS)}", "operation", "encoding")
        encoding = "json"

    styles = mapping(ctx, op, "style")
    # a matrix parameter may be a list or an object: its ';name=a,b' says which items
    matrix = {n for n in path_params if styles.get(n) == "matrix"}
    if written_as_schema:
        built = schema_form(ctx, op, method, path_params, query, header, composite=matrix)
    else:
        built = flat_form(ctx, op, method, path_params, query, header)
    if built is None:
        return None
    schema, body, payload = built
    content_type = raw_body(ctx, op, encoding, schema, payload)

    sent = path_params + query + header + body
    names = mapping(ctx, op, "names")
    query_names = set(query)
    path_names = set(path_params)
    for arg, wire in names.items():
        if arg not in sent:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"names: {arg!r} is not an argument of this operation", "operation", "names", arg)
        elif not isinstance(wire, str) or not wire:
            ctx.error(codes.INVALID_OPERATION, f"names: the wire name of {arg!r} must be a non-empty string", "operation", "names", arg)
    for arg, style in styles.items():
        if arg in path_names:
            if style not in PATH_STYLES:
                ctx.error(codes.INVALID_OPERATION, f"style of path parameter {arg!r} must be one of {', '.join(PATH_STYLES)}",
                          "operation", "style", arg)  # fmt: skip
            elif style == "matrix" and "{" + arg + "}" not in path_of(url).split("/"):
                ctx.error(codes.PATH_PARAMETER, f"path parameter {arg!r} of style matrix must be a whole segment, like "
                          f"/items/{{{arg}}}: its ';{arg}=' starts the segment", "operation", "style", arg)  # fmt: skip
        elif arg in body and encoding == "form":
            if style != "deepObject":
                ctx.error(codes.INVALID_OPERATION, f"style of form field {arg!r} can only be deepObject", "operation", "style", arg)
        elif arg not in query_names:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"style: {arg!r} is not a query or path parameter (or a field of a form body)",
                      "operation", "style", arg)  # fmt: skip
        elif style not in QUERY_STYLES:
            ctx.error(codes.INVALID_OPERATION, f"style of {arg!r} must be one of {', '.join(QUERY_STYLES)}", "operation", "style", arg)
    # the published schema says what the wire can carry, so a schema-valid call is never refused
    explode_names = name_list(ctx, op, "explode", check_names=False)
    for index, arg in enumerate(explode_names):
        if arg not in matrix:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"explode: {arg!r} is not a path parameter of style matrix", "operation",
                      "explode", index)  # fmt: skip
    explode = set(explode_names)
    schema = wire_limited(
        schema, [n for n in path_params if n not in matrix], header, styles, query, body if payload is None else [], str(encoding),
        payload, matrix=sorted(matrix),
    )

    defaults = argument_defaults(ctx, mapping(ctx, op, "defaults"), schema, sent)

    allow_empty_names = name_list(ctx, op, "allow_empty", check_names=False)
    for index, arg in enumerate(allow_empty_names):
        if arg not in query_names:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"allow_empty: {arg!r} is not a query parameter", "operation", "allow_empty", index)
    allow_empty = set(allow_empty_names)

    identity = name_list(ctx, op, "identity", check_names=False)
    for index, name in enumerate(identity):
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
            "schema" if written_as_schema else "method",
        )
    gate = parse_gate(ctx)
    approval = None
    if gate is not None:
        if not gate_matches(gate, method, url):
            ctx.error(
                codes.GATE_MISMATCH,
                f"approval.matches {' '.join(gate)!r} does not match this operation ({method} {path_of(url)}); "
                "a gate in a file with an operation must match it",
                "approval",
                "matches",
            )
        approval = dict(ctx.front.data["approval"])
    if len(ctx.errors) > before:
        return None

    wire_of = {a: str(w) for a, w in names.items()}
    arguments: list[Argument] = []
    located: tuple[tuple[Location, list[str]], ...] = (
        ("path", path_params),
        ("query", query),
        ("header", header),
        ("body", body),
    )
    made = ctx.arguments
    for loc, members in located:
        for name in members:
            style = styles.get(name) if loc != "header" else None
            fields = (name, loc, wire_of.get(name, name), None if style in (None, "form", "simple") else str(style),
                      loc == "query" and name in allow_empty, loc == "path" and name in explode)  # fmt: skip
            argument = made.get(fields)
            if argument is None:
                argument = made[fields] = Argument(*fields)
            arguments.append(argument)
    return OperationDecl(
        name=ctx.file.removesuffix(".md"),
        tool_name=tool_name,
        file=ctx.file,
        description=description or f"{method} {url}",  # no prose: the request itself says what it is
        prose=prose,
        method=method,
        url=url,
        arguments=tuple(arguments),
        schema=schema,
        encoding=str(encoding),
        headers=headers,
        identity=tuple(sorted(set(identity))),
        approval=approval,
        payload=payload,
        content_type=content_type,
        defaults=defaults,
    )


def argument_defaults(ctx: OperationContext, given: dict[str, Any], schema: dict[str, Any], sent: list[str]) -> dict[str, Any]:
    """``defaults:``: each an optional argument of the operation, with a value its schema accepts."""
    if not given:
        return {}
    import jsonschema  # here: only operations with defaults pay for it (start-up time of the hot CLI commands)

    required = schema.get("required") or []
    properties = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name, value in given.items():
        if name not in sent or name not in properties:
            ctx.error(codes.UNKNOWN_QUALIFIER, f"defaults: {name!r} is not an argument of this operation", "operation", "defaults", name)
        elif name in required:
            ctx.error(codes.INVALID_OPERATION, f"defaults: {name!r} is required, so a default would never be used",
                      "operation", "defaults", name)  # fmt: skip
        else:
            error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(properties[name]).iter_errors(value))
            if error is not None:
                ctx.error(codes.INVALID_OPERATION, f"defaults: {name!r}: the argument's schema refuses the value: {error.message}",
                          "operation", "defaults", name)  # fmt: skip
            else:
                out[name] = value
    return out


def fixed_headers(ctx: OperationContext, value: Any) -> dict[str, str]:
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
        elif not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name) or not re.fullmatch(r"[\t\x20-\x7e]*", header_value):
            # the gateway accepts printable ASCII, space and tab in a header value, nothing else (fullmatch:
            # ``$`` would let a final line break through)
            ctx.error(codes.INVALID_OPERATION, f"header {name!r} has a name or value HTTP does not allow", "operation", "headers", name)
        else:
            out[name] = header_value
    return out


