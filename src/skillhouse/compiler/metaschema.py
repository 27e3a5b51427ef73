"""Checking that a schema is a well-formed JSON Schema (Draft 2020-12), fast.

jsonschema's own metaschema check resolves ``$dynamicRef`` at every node and costs about 2 µs per
byte of schema; the wizard's Stripe import spent most of its time there. This walk checks the same
keyword rules of the 2020-12 vocabularies directly (tests hold it to agreement with jsonschema's
``check_schema``), plus what the release needs on top: every value representable in I-JSON, so the
RFC 8785 hash can be computed (integers within ±2**53, finite numbers, JSON types only).
"""

from __future__ import annotations

import math
import re
from typing import Any

TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_SCHEMA = ("items", "additionalProperties", "not", "propertyNames", "contains", "if", "then", "else",
           "unevaluatedItems", "unevaluatedProperties", "contentSchema")
_SCHEMA_MAP = ("properties", "patternProperties", "$defs", "dependentSchemas", "definitions")
_SCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_NON_NEGATIVE = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
                 "minContains", "maxContains")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
# $recursiveAnchor and $recursiveRef are 2019-09's; the 2020-12 metaschema still gives their shape
_STRINGS = ("title", "description", "format", "$comment", "contentEncoding", "contentMediaType",
            "$id", "$schema", "$anchor", "$dynamicAnchor", "$ref", "$dynamicRef", "$recursiveAnchor", "$recursiveRef")
_BOOLEANS = ("uniqueItems", "deprecated", "readOnly", "writeOnly")
_STRING_PATTERNS = {
    "$id": re.compile(r"^[^#]*#?$"),
    "$anchor": re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$"),
    "$dynamicAnchor": re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$"),
    "$recursiveAnchor": re.compile(r"^[A-Za-z_][-A-Za-z0-9._]*$"),
}
MAX_SAFE_INTEGER = 2**53 - 1
_MAX_DEPTH = 200


class _Problem(Exception):
    def __init__(self, path: list[str | int], message: str) -> None:
        self.path = path
        self.message = message


def schema_problem(schema: Any) -> str | None:
    """What is wrong with ``schema`` as a JSON Schema, or ``None`` when it is well formed."""
    try:
        _schema(schema, [])
    except _Problem as problem:
        where = "/".join(str(p) for p in problem.path) or "(root)"
        return f"at {where}: {problem.message}"
    return None


def _json_value(value: Any, path: list[str | int]) -> None:
    """Values inside enum, const, default and examples: plain JSON that I-JSON can carry."""
    stack: list[tuple[Any, list[str | int]]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        if len(at) > _MAX_DEPTH:
            raise _Problem(at, "is nested too deeply")
        if item is None or isinstance(item, bool | str):
            continue
        if isinstance(item, int):
            if abs(item) > MAX_SAFE_INTEGER:
                raise _Problem(at, f"{item} is beyond ±(2**53 - 1) and cannot be carried exactly in JSON; use a float or a string")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise _Problem(at, f"{item} is not a JSON number")
        elif isinstance(item, list):
            stack.extend((v, [*at, i]) for i, v in enumerate(item))
        elif isinstance(item, dict):
            for key, v in item.items():
                if not isinstance(key, str):
                    raise _Problem(at, f"key {key!r} is not a string")
                stack.append((v, [*at, key]))
        else:
            raise _Problem(at, f"{type(item).__name__} is not a JSON value (quote dates and times)")


def _number(value: Any, path: list[str | int]) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Problem(path, f"{value!r} is not a number")
    _json_value(value, path)


def _schema(node: Any, path: list[str | int]) -> None:
    if isinstance(node, bool):
        return
    if not isinstance(node, dict):
        raise _Problem(path, f"{_short(node)} is not a schema (an object or a boolean)")
    if len(path) > _MAX_DEPTH:
        raise _Problem(path, "is nested too deeply")
    for key, value in node.items():
        at = [*path, key]
        if key == "type":
            _type(value, at)
        elif key in _SCHEMA:
            _schema(value, at)
        elif key in _SCHEMA_MAP:
            if not isinstance(value, dict):
                raise _Problem(at, f"{_short(value)} is not an object of schemas")
            for name, sub in value.items():
                if key == "patternProperties":
                    _regex(name, at)
                _schema(sub, [*at, name])
        elif key in _SCHEMA_LIST:
            if not isinstance(value, list) or not value:
                raise _Problem(at, f"{_short(value)} is not a non-empty array of schemas")
            for index, sub in enumerate(value):
                _schema(sub, [*at, index])
        elif key in ("required",):
            _unique_strings(value, at)
        elif key == "dependentRequired":
            if not isinstance(value, dict):
                raise _Problem(at, f"{_short(value)} is not an object")
            for name, names in value.items():
                _unique_strings(names, [*at, name])
        elif key == "enum":
            if not isinstance(value, list):
                raise _Problem(at, f"{_short(value)} is not an array")
            _json_value(value, at)
        elif key in ("const", "default"):
            _json_value(value, at)
        elif key == "examples":
            if not isinstance(value, list):
                raise _Problem(at, f"{_short(value)} is not an array")
            _json_value(value, at)
        elif key in _NON_NEGATIVE:
            _number(value, at)
            if value < 0 or value != int(value):
                raise _Problem(at, f"{_short(value)} is not a non-negative integer")
        elif key in _NUMBERS:
            _number(value, at)
        elif key == "multipleOf":
            _number(value, at)
            if value <= 0:
                raise _Problem(at, f"{value!r} is not greater than 0")
        elif key == "pattern":
            _regex(value, at)
        elif key in _STRINGS:
            if not isinstance(value, str):
                raise _Problem(at, f"{_short(value)} is not a string")
            pattern = _STRING_PATTERNS.get(key)
            if pattern is not None and not pattern.match(value):
                raise _Problem(at, f"{value!r} is not a valid {key}")
        elif key == "dependencies":
            if not isinstance(value, dict):
                raise _Problem(at, f"{_short(value)} is not an object")
            for name, sub in value.items():
                if isinstance(sub, list):
                    _unique_strings(sub, [*at, name])
                else:
                    _schema(sub, [*at, name])
        elif key in _BOOLEANS:
            if not isinstance(value, bool):
                raise _Problem(at, f"{_short(value)} is not a boolean")
        elif key == "$vocabulary":
            if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
                raise _Problem(at, "is not an object of booleans")
        else:
            # Keywords outside the vocabularies (x-*, nullable, discriminator...) are allowed by
            # 2020-12; they must still be JSON the release can hash.
            _json_value(value, at)


def _type(value: Any, at: list[str | int]) -> None:
    if isinstance(value, str):
        if value not in TYPES:
            raise _Problem(at, f"{value!r} is not a JSON Schema type ({', '.join(sorted(TYPES))})")
        return
    if not isinstance(value, list) or not value:
        raise _Problem(at, f"{_short(value)} is not a type or a non-empty array of types")
    for index, item in enumerate(value):
        if not isinstance(item, str) or item not in TYPES:
            raise _Problem([*at, index], f"{_short(item)} is not a JSON Schema type")
    if len(set(value)) != len(value):
        raise _Problem(at, "has non-unique elements")


def _unique_strings(value: Any, at: list[str | int]) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Problem(at, f"{_short(value)} is not an array of strings")
    if len(set(value)) != len(value):
        raise _Problem(at, "has non-unique elements")


def _regex(value: Any, at: list[str | int]) -> None:
    if not isinstance(value, str):
        raise _Problem(at, f"{_short(value)} is not a string")
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError) as exc:
        raise _Problem(at, f"{value!r} is not a regular expression: {exc}") from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
