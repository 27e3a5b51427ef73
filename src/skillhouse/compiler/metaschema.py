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

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
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
(_TYPE, _ONE, _MAP, _LIST, _REQUIRED, _DEPENDENT_REQUIRED, _ENUM, _VALUE, _EXAMPLES, _NON_NEGATIVE_INT, _NUMBER,
 _MULTIPLE_OF, _PATTERN, _STRING, _DEPENDENCIES, _BOOLEAN, _VOCABULARY, _NAME_STRING) = range(18)  # fmt: skip
_KIND = {
    "type": _TYPE, "required": _REQUIRED, "dependentRequired": _DEPENDENT_REQUIRED, "enum": _ENUM,
    "const": _VALUE, "default": _VALUE, "examples": _EXAMPLES, "multipleOf": _MULTIPLE_OF, "pattern": _PATTERN,
    "dependencies": _DEPENDENCIES, "$vocabulary": _VOCABULARY,
    **dict.fromkeys(_SCHEMA, _ONE), **dict.fromkeys(_SCHEMA_MAP, _MAP), **dict.fromkeys(_SCHEMA_LIST, _LIST),
    **dict.fromkeys(_NON_NEGATIVE, _NON_NEGATIVE_INT), **dict.fromkeys(_NUMBERS, _NUMBER),
    **dict.fromkeys(_STRINGS, _STRING), **dict.fromkeys(_STRING_PATTERNS, _NAME_STRING), **dict.fromkeys(_BOOLEANS, _BOOLEAN),
}  # fmt: skip
"""Each keyword's kind: one dictionary lookup per keyword instead of a test against every group. A string
with a pattern of its own is a kind apart, so a description or a format is not looked up again for one."""
MAX_SAFE_INTEGER = 2**53 - 1
_MAX_DEPTH = 200


class _Problem(Exception):
    """A problem found at ``path``: relative to where it is raised, completed by each caller it passes
    on its way out (so a schema that is well formed, the usual case, builds no path at all)."""

    def __init__(self, path: list[str | int], message: str) -> None:
        self.path = path
        self.message = message


def schema_problem(schema: Any) -> str | None:
    """What is wrong with ``schema`` as a JSON Schema, or ``None`` when it is well formed."""
    try:
        _schema(schema, 0)
    except _Problem as problem:
        where = "/".join(str(p) for p in problem.path) or "(root)"
        return f"at {where}: {problem.message}"
    return None


def _json_value(value: Any, depth: int) -> None:
    """Values inside enum, const, default and examples: plain JSON that I-JSON can carry.

    ``depth`` is how many steps the value's path has from the schema's root. A scalar or a list of
    scalars (most defaults, enums and examples) is taken at once; anything else, or anything refused,
    is walked keeping each value's path, to say where the problem is.
    """
    if depth < _MAX_DEPTH:  # the value's items too are within the depth allowed
        kind = type(value)
        if kind is list:
            if all(map(_plain_scalar, value)):
                return
        elif _plain_scalar(value):
            return
    _located_json_value(value, depth)


def _plain_scalar(value: Any) -> bool:
    """Whether ``value`` is a string, boolean, null, integer within ±(2**53 - 1) or finite float (of those very types)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    return kind is float and math.isfinite(value)


def _located_json_value(value: Any, depth: int) -> None:
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, at = stack.pop()
        if depth + len(at) > _MAX_DEPTH:
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


def _number(value: Any, depth: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Problem([], f"{value!r} is not a number")
    _json_value(value, depth)


def _schema(node: Any, depth: int) -> None:
    """Check the schema ``node`` whose path from the root has ``depth`` steps."""
    if isinstance(node, bool):
        return
    if not isinstance(node, dict):
        raise _Problem([], f"{_short(node)} is not a schema (an object or a boolean)")
    if depth > _MAX_DEPTH:
        raise _Problem([], "is nested too deeply")
    below = depth + 1  # the depth of a keyword's value
    # The kinds are tested most frequent first (in the corpus); the common values of each are taken
    # without a call, the rest checked by the same calls as always. With the scalars of _json_value
    # taken at once: 0.5% of Jira's import (1300M instructions, 1293M so; Twilio's 892M, 887M).
    for key, value in node.items():
        try:
            kind = _KIND.get(key)
            if kind is _TYPE:
                if type(value) is not str or value not in TYPES:
                    _type(value)
            elif kind is _STRING:
                if not isinstance(value, str):
                    raise _Problem([], f"{_short(value)} is not a string")
            elif kind is _MAP:
                if not isinstance(value, dict):
                    raise _Problem([], f"{_short(value)} is not an object of schemas")
                patterned = key == "patternProperties"
                for name, sub in value.items():
                    if patterned:
                        _regex(name)  # the problem is the keyword's: its path stops there
                    if sub is True or sub is False:
                        continue
                    try:
                        _schema(sub, below + 1)
                    except _Problem as problem:
                        problem.path.insert(0, name)
                        raise
            elif kind is _ONE:
                if value is not True and value is not False:
                    _schema(value, below)
            elif kind is _REQUIRED:
                _unique_strings(value)
            elif kind is _VALUE:
                _json_value(value, below)
            elif kind is _ENUM:
                if not isinstance(value, list):
                    raise _Problem([], f"{_short(value)} is not an array")
                _json_value(value, below)
            elif kind is _LIST:
                if not isinstance(value, list) or not value:
                    raise _Problem([], f"{_short(value)} is not a non-empty array of schemas")
                for index, sub in enumerate(value):
                    try:
                        _schema(sub, below + 1)
                    except _Problem as problem:
                        problem.path.insert(0, index)
                        raise
            elif kind is _NAME_STRING:
                if not isinstance(value, str):
                    raise _Problem([], f"{_short(value)} is not a string")
                if not _STRING_PATTERNS[key].match(value):
                    raise _Problem([], f"{value!r} is not a valid {key}")
            elif kind is _DEPENDENT_REQUIRED:
                if not isinstance(value, dict):
                    raise _Problem([], f"{_short(value)} is not an object")
                for name, names in value.items():
                    try:
                        _unique_strings(names)
                    except _Problem as problem:
                        problem.path.insert(0, name)
                        raise
            elif kind is _EXAMPLES:
                if not isinstance(value, list):
                    raise _Problem([], f"{_short(value)} is not an array")
                _json_value(value, below)
            elif kind is _NON_NEGATIVE_INT:
                _number(value, below)
                if value < 0 or value != int(value):
                    raise _Problem([], f"{_short(value)} is not a non-negative integer")
            elif kind is _NUMBER:
                _number(value, below)
            elif kind is _MULTIPLE_OF:
                _number(value, below)
                if value <= 0:
                    raise _Problem([], f"{value!r} is not greater than 0")
            elif kind is _PATTERN:
                _regex(value)
            elif kind is _DEPENDENCIES:
                if not isinstance(value, dict):
                    raise _Problem([], f"{_short(value)} is not an object")
                for name, sub in value.items():
                    try:
                        if isinstance(sub, list):
                            _unique_strings(sub)
                        else:
                            _schema(sub, below + 1)
                    except _Problem as problem:
                        problem.path.insert(0, name)
                        raise
            elif kind is _BOOLEAN:
                if not isinstance(value, bool):
                    raise _Problem([], f"{_short(value)} is not a boolean")
            elif kind is _VOCABULARY:
                if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
                    raise _Problem([], "is not an object of booleans")
            else:
                # Keywords outside the vocabularies (x-*, nullable, discriminator...) are allowed by
                # 2020-12; they must still be JSON the release can hash.
                _json_value(value, below)
        except _Problem as problem:
            problem.path.insert(0, key)
            raise


def _type(value: Any) -> None:
    if isinstance(value, str):
        if value not in TYPES:
            raise _Problem([], f"{value!r} is not a JSON Schema type ({', '.join(sorted(TYPES))})")
        return
    if not isinstance(value, list) or not value:
        raise _Problem([], f"{_short(value)} is not a type or a non-empty array of types")
    for index, item in enumerate(value):
        if not isinstance(item, str) or item not in TYPES:
            raise _Problem([index], f"{_short(item)} is not a JSON Schema type")
    if len(set(value)) != len(value):
        raise _Problem([], "has non-unique elements")


def _unique_strings(value: Any) -> None:
    if not isinstance(value, list):
        raise _Problem([], f"{_short(value)} is not an array of strings")
    for item in value:
        if not isinstance(item, str):
            raise _Problem([], f"{_short(value)} is not an array of strings")
    if len(set(value)) != len(value):
        raise _Problem([], "has non-unique elements")


def _regex(value: Any) -> None:
    if not isinstance(value, str):
        raise _Problem([], f"{_short(value)} is not a string")
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError) as exc:
        raise _Problem([], f"{value!r} is not a regular expression: {exc}") from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
