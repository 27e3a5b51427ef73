"""A request validator for Swagger 2.0 operations, for the round-trip test (openapi-core reads 3.x only).

It judges a request the way a Swagger 2.0 server would: the operation by method and path template
under ``basePath``; every declared parameter in its location (path, query, header, formData, body)
present when required and valid for its type once read from the wire (``collectionFormat`` for
arrays); nothing undeclared in the query or the form; a JSON body valid for its schema.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from jsonschema import Draft4Validator

from skillhouse.openapi.parameters import CREDENTIAL_NAMES

_SCHEMA_KEYS = ("type", "format", "items", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "multipleOf")
_SEPARATORS = {"csv": ",", "ssv": " ", "tsv": "\t", "pipes": "|"}


def _deref(spec: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        for part in node["$ref"][2:].split("/"):
            spec = spec[part.replace("~1", "/").replace("~0", "~")] if isinstance(spec, dict) else spec
        node = spec
    return node


def _operation(spec: dict[str, Any], method: str, path: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]] | None:
    for template, item in spec.get("paths", {}).items():
        pattern = "^" + re.sub(r"\\\{([^}]+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$"
        try:
            found = re.match(pattern, path)
        except re.error:
            continue
        if found and isinstance(item, dict) and isinstance(item.get(method.lower()), dict):
            return item, item[method.lower()], {k: unquote(v) for k, v in found.groupdict().items()}
    return None


def _typed(raw: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if kind == "number":
        try:
            return float(raw) if not re.fullmatch(r"-?\d+", raw) else int(raw)
        except ValueError:
            return raw
    if kind == "boolean" and raw in ("true", "false"):
        return raw == "true"
    return raw


def _wire_value(values: list[str], param: dict[str, Any]) -> Any:
    schema = {k: param[k] for k in _SCHEMA_KEYS if k in param}
    if param.get("type") == "array":
        fmt = param.get("collectionFormat", "csv")
        items = values if fmt == "multi" else [part for v in values for part in v.split(_SEPARATORS.get(fmt, ","))]
        return [_typed(v, schema.get("items", {})) for v in items], schema
    return _typed(values[-1], schema), schema


def problems(spec: dict[str, Any], request: dict[str, Any]) -> list[str]:
    """Every reason a Swagger 2.0 server would refuse ``request``; empty when it accepts it."""
    parts = urlsplit(request["url"])
    base = spec.get("basePath", "") or ""
    if not parts.path.startswith(base):
        return [f"path {parts.path} is not under basePath {base}"]
    found = _operation(spec, request["method"], parts.path[len(base):] or "/")
    if found is None:
        return [f"no operation {request['method']} {parts.path}"]
    item, op, path_values = found
    declared: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*item.get("parameters", []), *op.get("parameters", [])]:
        param = _deref(spec, raw)
        declared[(param["in"], param["name"])] = param
    headers = {k.lower(): v for k, v in request["headers"].items()}
    query = parse_qs(parts.query, keep_blank_values=True)
    body = request.get("body")
    content_type = headers.get("content-type", "")
    form = parse_qs(body, keep_blank_values=True) if body and content_type.startswith("application/x-www-form-urlencoded") else {}
    out: list[str] = []
    for (location, name), param in declared.items():
        if location == "body":
            if body is None:
                if param.get("required"):
                    out.append("the required JSON body is missing")
                continue
            try:
                document = json.loads(body)
            except ValueError:
                out.append("the body is not JSON")
                continue
            schema = {**_deref(spec, param.get("schema", {})), "definitions": spec.get("definitions", {})}
            out += [f"body: {e.message}" for e in Draft4Validator(schema).iter_errors(document)]
            continue
        values = {"path": {k: [v] for k, v in path_values.items()}, "query": query, "formData": form,
                  "header": {k: [v] for k, v in headers.items()}}.get(location, {})
        key = name.lower() if location == "header" else name
        if key not in values:
            if param.get("required") and name.lower() not in CREDENTIAL_NAMES:  # credentials are the gateway's
                out.append(f"required {location} parameter {name!r} is missing")
            continue
        value, schema = _wire_value(values[key], param)
        out += [f"{location} {name}: {e.message}" for e in Draft4Validator(schema).iter_errors(value)]
    known = {name for (location, name) in declared if location == "query"}
    out += [f"undeclared query parameter {name!r}" for name in query if name not in known]
    known_form = {name for (location, name) in declared if location == "formData"}
    out += [f"undeclared form field {name!r}" for name in form if name not in known_form]
    if form and not any(location == "formData" for location, _ in declared):
        out.append("a form body for an operation without formData parameters")
    return out
