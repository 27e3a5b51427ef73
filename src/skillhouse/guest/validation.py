"""Checking a tool call's arguments against its schema, reporting every violation with its JSON path.

The schema subset is what the compiler and the wizard emit: ``type`` (a name or a list of names),
``properties``/``required``/``additionalProperties``, ``enum``, ``const``, ``nullable`` (OpenAPI 3.0's,
honoured because the author meant it), ``items``/``minItems``/``maxItems``/``uniqueItems``,
``anyOf``/``oneOf``/``allOf``, ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``,
``multipleOf``, ``minLength``/``maxLength``, ``pattern``. ``format`` and annotations are ignored, as
Draft 2020-12 does by default. Equality and number semantics follow the ``jsonschema`` library so the
two agree (a test holds them to it): ``1.0`` is an integer, ``true`` is not.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Violation:
    """One reason a call cannot be sent: where (JSON path), what (a stable code), and what was expected."""

    path: str
    problem: str
    expected: str

    def document(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem, "expected": self.expected}


def json_path(parent: str, key: str | int) -> str:
    """``$.a.b[0]``; keys that are not identifiers are quoted: ``$["include[]"]``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{parent}.{key}"
    # JSON string notation, not repr(): repr depends on the interpreter's Unicode database
    return parent + "[" + json.dumps(key, ensure_ascii=False) + "]"


def validate(schema: Any, instance: Any, path: str = "$") -> list[Violation]:
    """Every violation of ``schema`` by ``instance``; an empty list when it is valid."""
    out: list[Violation] = []
    _check(schema, instance, path, out)
    return out


def is_valid(schema: Any, instance: Any) -> bool:
    return not validate(schema, instance)


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``integer`` for whole numbers, as jsonschema counts them)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _has_type(value: Any, name: str) -> bool:
    actual = json_type(value)
    return actual == name or (name == "number" and actual == "integer")


def json_equal(one: Any, two: Any) -> bool:
    """JSON equality: ``1 == 1.0``, ``true != 1``, recursing into arrays and objects."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(bool(k in two) and json_equal(v, two[k]) for k, v in one.items())
    if isinstance(one, list | dict) or isinstance(two, list | dict):
        return False
    return bool(one == two)


def describe(schema: Any) -> str:
    """A short human summary of what ``schema`` accepts, for ``expected``."""
    if schema is True or schema == {}:
        return "any value"
    if schema is False:
        return "nothing (this value is not allowed)"
    if not isinstance(schema, dict):
        return "a valid value"
    if "const" in schema:
        return f"exactly {_show(schema['const'])}"
    if "enum" in schema:
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    types = _types(schema)
    if types:
        return " or ".join(_article(t) for t in types)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " or ".join(describe(s) for s in schema[key])
    return "a valid value"


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared) if isinstance(declared, list) else []
    if types and schema.get("nullable") is True and "null" not in types:
        types.append("null")
    return types


def _article(type_name: str) -> str:
    return {"integer": "an integer", "array": "an array", "object": "an object", "null": "null"}.get(
        type_name, f"a {type_name}"
    )


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _check(schema: Any, value: Any, path: str, out: list[Violation]) -> None:
    if schema is True:
        return
    if schema is False:
        out.append(Violation(path, "not-allowed", "nothing: this value is not allowed here"))
        return
    if not isinstance(schema, dict):
        return
    if value is None and schema.get("nullable") is True:
        return
    types = _types(schema)
    if types and not any(_has_type(value, t) for t in types):
        out.append(
            Violation(path, "wrong-type", f"{describe({'type': types})}, not {_article(json_type(value))}")
        )
        return
    if "const" in schema and not json_equal(value, schema["const"]):
        out.append(Violation(path, "not-const", describe({"const": schema["const"]})))
    if isinstance(schema.get("enum"), list) and not any(json_equal(value, e) for e in schema["enum"]):
        out.append(Violation(path, "not-in-enum", describe({"enum": schema["enum"]})))
    if _has_type(value, "number"):
        _check_number(schema, value, path, out)
    elif isinstance(value, str):
        _check_string(schema, value, path, out)
    elif isinstance(value, list):
        _check_array(schema, value, path, out)
    elif isinstance(value, dict):
        _check_object(schema, value, path, out)
    _check_combinators(schema, value, path, out)


def _check_number(schema: dict[str, Any], value: Any, path: str, out: list[Violation]) -> None:
    for keyword, problem, expected in (
        ("minimum", "too-small", "at least {}"),
        ("exclusiveMinimum", "too-small", "greater than {}"),
        ("maximum", "too-large", "at most {}"),
        ("exclusiveMaximum", "too-large", "less than {}"),
    ):
        bound = schema.get(keyword)
        if _has_type(bound, "number") and _beyond(keyword, value, bound):
            out.append(Violation(path, problem, expected.format(bound)))
    divisor: Any = schema.get("multipleOf")
    if _has_type(divisor, "number") and divisor > 0 and not _is_multiple(value, divisor):
        out.append(Violation(path, "not-multiple", f"a multiple of {divisor}"))


def _beyond(keyword: str, value: Any, bound: Any) -> bool:
    if keyword == "minimum":
        return bool(value < bound)
    if keyword == "exclusiveMinimum":
        return bool(value <= bound)
    if keyword == "maximum":
        return bool(value > bound)
    return bool(value >= bound)


def _is_multiple(value: Any, divisor: Any) -> bool:
    # The same arithmetic as jsonschema, float quirks included, so the two agree.
    if isinstance(divisor, float):
        quotient = value / divisor
        try:
            return bool(int(quotient) == quotient)
        except OverflowError:
            return (Fraction(value) / Fraction(divisor)).denominator == 1
    return not (value % divisor)


def _check_string(schema: dict[str, Any], value: str, path: str, out: list[Violation]) -> None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        out.append(Violation(path, "too-short", f"at least {low} characters"))
    if isinstance(high, int) and len(value) > high:
        out.append(Violation(path, "too-long", f"at most {high} characters"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # a pattern Python cannot read is not the caller's mistake
        if not matched:
            out.append(Violation(path, "pattern-mismatch", f"a string matching {pattern}"))


def _check_array(schema: dict[str, Any], value: list[Any], path: str, out: list[Violation]) -> None:
    low, high = schema.get("minItems"), schema.get("maxItems")
    if isinstance(low, int) and len(value) < low:
        out.append(Violation(path, "too-few-items", f"at least {low} items"))
    if isinstance(high, int) and len(value) > high:
        out.append(Violation(path, "too-many-items", f"at most {high} items"))
    if schema.get("uniqueItems") is True:
        for index, item in enumerate(value):
            if any(json_equal(item, earlier) for earlier in value[:index]):
                out.append(
                    Violation(json_path(path, index), "duplicate-item", "items that are all different")
                )
    if "items" in schema:
        for index, item in enumerate(value):
            _check(schema["items"], item, json_path(path, index), out)


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: str, out: list[Violation]) -> None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if name not in value:
            out.append(Violation(json_path(path, name), "missing", describe(properties.get(name, True))))
    additional = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            _check(properties[name], item, json_path(path, name), out)
        elif additional is False:
            known = ", ".join(sorted(properties)) or "none"
            out.append(
                Violation(json_path(path, name), "unknown-property", f"only these properties: {known}")
            )
        else:
            _check(additional, item, json_path(path, name), out)


def _check_combinators(schema: dict[str, Any], value: Any, path: str, out: list[Violation]) -> None:
    for sub in schema.get("allOf") or []:
        _check(sub, value, path, out)
    any_of = schema.get("anyOf")
    if isinstance(any_of, list) and any_of and not any(is_valid(s, value) for s in any_of):
        out.append(Violation(path, "no-alternative-matches", describe({"anyOf": any_of})))
    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and one_of:
        matches = sum(1 for s in one_of if is_valid(s, value))
        if matches == 0:
            out.append(
                Violation(path, "no-alternative-matches", "exactly one of: " + describe({"oneOf": one_of}))
            )
        elif matches > 1:
            out.append(
                Violation(path, "several-alternatives-match", "exactly one of the alternatives, not several")
            )
