"""Hypothesis strategies for instances valid against a tool's published schema (expanded, no ``$ref``).

``hypothesis-jsonschema`` would be the library for this, but its last release (0.23.1) reaches into
Hypothesis internals that no longer exist in the Hypothesis this project tests with. This builder
covers the keywords the compiler and the wizard emit. Each node's draws are filtered by that node's
own JSON Schema validator, so what is drawn is valid by construction where the keywords are
understood, and by filtering where they are not (``not``, ``oneOf``, patterns with lengths); a value
that still fails is left for the caller to discard (it checks the whole instance again).
"""

from __future__ import annotations

import base64
import re
from datetime import UTC
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_LIMIT = 1000
_json_scalars = st.none() | st.booleans() | st.integers(-_LIMIT, _LIMIT) | st.text(max_size=6)
# the string formats openapi-core asserts, drawn in their own notation
FORMATS: dict[str, st.SearchStrategy[str]] = {
    "date-time": st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()),
    "date": st.dates().map(lambda d: d.isoformat()),
    "uuid": st.uuids().map(str),
    "byte": st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode("ascii")),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
    "email": st.from_regex(r"\A[a-z]{1,8}@[a-z]{1,8}\.(com|org)\Z"),
}
_any_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=4,
)


def valid_instances(schema: Any, depth: int = 0, formats: bool = False) -> st.SearchStrategy[Any]:
    """Values aimed at being valid for ``schema`` (filtered by its validator at this node).

    With ``formats``, strings honour the ``format`` they declare (:data:`FORMATS`), as a producer
    following the schema would; otherwise ``format`` is the annotation Draft 2020-12 makes it.
    """
    if schema is True or schema == {}:
        return _any_json
    if schema is False:
        return st.nothing()
    if not isinstance(schema, dict):
        return _any_json
    validator = Draft202012Validator(schema)
    # a lambda, not the bound method ``validator.is_valid``: to rewrite numeric bounds Hypothesis reads a
    # filter's source, and a method's is found by tokenizing jsonschema's validators.py afresh on every
    # filter (a fifth of this builder's time); a lambda's is read once and cached by its code
    return _aimed(schema, depth, formats).filter(lambda value: validator.is_valid(value))


def _aimed(schema: dict[str, Any], depth: int, formats: bool) -> st.SearchStrategy[Any]:
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            rest = {k: v for k, v in schema.items() if k != key}
            return st.one_of([valid_instances({**rest, **_merge_into(rest, branch)}, depth + 1, formats) for branch in schema[key]])
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for branch in schema["allOf"]:
            merged = _merge_into(merged, branch) if isinstance(branch, dict) else merged
        return _aimed(merged, depth, formats)
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared) if isinstance(declared, list) else None
    if types is None:
        types = [_guess(schema)] if _guess(schema) else list(_TYPES)
    if schema.get("nullable") is True and "null" not in types:
        types.append("null")
    if depth > 6:
        types = [t for t in types if t not in ("array", "object")] or types
    return st.one_of([_of_type(t, schema, depth, formats) for t in types])


def _merge_into(base: dict[str, Any], extra: Any) -> dict[str, Any]:
    if not isinstance(extra, dict):
        return dict(base)
    out = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = [*out[key], *[r for r in value if r not in out[key]]]
        else:
            out[key] = value
    return out


def _guess(schema: dict[str, Any]) -> str | None:
    if "properties" in schema or "additionalProperties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    if any(k in schema for k in ("pattern", "minLength", "maxLength")):
        return "string"
    if any(k in schema for k in ("minimum", "maximum", "multipleOf")):
        return "number"
    return None


def _of_type(kind: str, schema: dict[str, Any], depth: int, formats: bool) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        return _number(kind, schema)
    if kind == "string":
        return _string(schema, formats)
    if kind == "array":
        items = schema.get("items", True)
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", low + 3), low + 3)
        return st.lists(valid_instances(items, depth + 1, formats), min_size=low, max_size=max(low, high))
    if kind == "object":
        return _object(schema, depth, formats)
    return _any_json


def _number(kind: str, schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    low = schema.get("minimum", schema.get("exclusiveMinimum", -_LIMIT))
    high = schema.get("maximum", schema.get("exclusiveMaximum", _LIMIT))
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        first = -(-low // step)
        return st.integers(0, 20).map(lambda n: (first + n) * step)
    if kind == "integer" or high - low > 1e15:
        return st.integers(int(max(low, -1e15)), int(min(high, 1e15)))
    return st.integers(int(low), int(high)) | st.floats(low, high, allow_nan=False, allow_infinity=False)


def _string(schema: dict[str, Any], formats: bool) -> st.SearchStrategy[str]:
    if formats and schema.get("format") in FORMATS:
        return FORMATS[schema["format"]]
    low = schema.get("minLength", 0)
    high = schema.get("maxLength", low + 10)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            re.compile(pattern)
            return st.from_regex(pattern)
        except re.error:
            pass
    return st.text(min_size=low, max_size=max(low, min(high, low + 10)))


def _object(schema: dict[str, Any], depth: int, formats: bool) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    fixed = {name: valid_instances(properties.get(name, True), depth + 1, formats) for name in required}
    optional = {name: valid_instances(sub, depth + 1, formats) for name, sub in properties.items() if name not in required}
    base = st.fixed_dictionaries(fixed, optional=optional)  # type: ignore[arg-type]
    additional = schema.get("additionalProperties", True)
    if additional is False or depth > 4:
        return base
    extra = st.dictionaries(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=5).filter(lambda k: k not in properties),
        valid_instances(additional, depth + 1, formats),
        max_size=2,
    )
    return st.tuples(base, extra).map(lambda pair: {**pair[1], **pair[0]})
