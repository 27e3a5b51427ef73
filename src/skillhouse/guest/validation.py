"""Checking a tool call's arguments against its schema, reporting every violation with its JSON path.

The schema subset is what the compiler and the wizard emit: ``type`` (a name or a list of names),
``properties``/``required``/``additionalProperties``/``minProperties``, ``enum``, ``const``, ``nullable`` (OpenAPI 3.0's,
honoured because the author meant it), ``items``/``minItems``/``maxItems``/``uniqueItems``,
``anyOf``/``oneOf``/``allOf``, ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum``,
``multipleOf``, ``minLength``/``maxLength``, ``pattern``. ``format`` and annotations are ignored, as
Draft 2020-12 does by default. Equality and number semantics follow the ``jsonschema`` library so the
two agree (a test holds them to it): ``1.0`` is an integer, ``true`` is not.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeAlias

from skillhouse.guest.values import (
    JsonObject,
    JsonSchema,
    Violation,
    article,
    declared_types,
    describe,
    has_type,
    json_equal,
    json_path,
    json_type,
    json_type_names,
)

__all__ = ["Violation", "compiled", "json_path", "validate"]


def validate(schema: Any, instance: Any, path: str = "$") -> list[Violation]:
    """Every violation of ``schema`` by ``instance``; an empty list when it is valid."""
    out: list[Violation] = []
    compiled(schema)(instance, path, out)
    return out


# --- Checks compiled once per schema --------------------------------------------------------------
#
# A schema is turned into a tree of closures the first time it is used, so a call pays only for the
# checks its schema has. Paths are built as strings only where a violation is recorded (``where`` is
# a chain of (parent, key) pairs until then: a tuple costs less to make than a function, which counts
# in the WebAssembly guest). The order of checks and violations is the order a reader of
# the schema expects: type, const, enum, the type's own keywords, then the combinators.

_NUMBERS = (int, float)
Where: TypeAlias = "str | tuple[Where, str | int]"
Check = Callable[[Any, Any, list[Violation]], None]
"""``check(value, where, out)``: ``where`` is the path string or the (parent, key) pair it is built from."""

_CACHE: dict[int, tuple[Any, Check]] = {}
_CACHE_LIMIT = 4096


def compiled(schema: Any) -> Check:
    """The compiled check of ``schema`` (cached for as long as the schema object lives in the cache)."""
    entry = _CACHE.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    check = _compile(schema)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[id(schema)] = (schema, check)
    return check


def _at(where: Where) -> str:
    if isinstance(where, str):
        return where
    parent, key = where
    return json_path(_at(parent), key)


def _nothing(value: Any, where: Any, out: list[Violation]) -> None:
    return None


def _compile(schema: Any) -> Check:
    if schema is False:
        return lambda value, where, out: out.append(
            Violation(_at(where), "not-allowed", "nothing: this value is not allowed here")
        )
    if not isinstance(schema, dict):
        return _nothing
    parts: list[Check] = []
    types = declared_types(schema)
    if "const" in schema:
        parts.append(_const_check(schema["const"]))
    if isinstance(schema.get("enum"), list):
        parts.append(_enum_check(schema["enum"]))
    number, string, array, obj = _number_check(schema), _string_check(schema), _array_check(schema), _object_check(schema)
    if number or string or array or obj:
        parts.append(_by_type(number, string, array, obj))
    combinators = _combinator_check(schema)
    if combinators is not None:
        parts.append(combinators)
    nullable = schema.get("nullable") is True
    type_names = frozenset(types)
    expected = describe({"type": types}) if types else ""
    named = json_type_names.get

    def check(value: Any, where: Any, out: list[Violation]) -> None:
        if nullable and value is None:
            return
        if type_names:
            actual = named(type(value)) or json_type(value)  # json_type's own first look, without its call
            if actual not in type_names and not (actual == "integer" and "number" in type_names):
                out.append(Violation(_at(where), "wrong-type", f"{expected}, not {article(actual)}"))
                return
        for part in parts:
            part(value, where, out)

    return check


def _const_check(const: Any) -> Check:
    expected = describe({"const": const})

    def check(value: Any, where: Any, out: list[Violation]) -> None:
        if not json_equal(value, const):
            out.append(Violation(_at(where), "not-const", expected))

    return check


def _enum_check(enum: list[Any]) -> Check:
    expected = describe({"enum": enum})
    hashable = {v for v in enum if isinstance(v, str)}

    def check(value: Any, where: Any, out: list[Violation]) -> None:
        if isinstance(value, str) and value in hashable:
            return
        if not any(json_equal(value, e) for e in enum):
            out.append(Violation(_at(where), "not-in-enum", expected))

    return check


def _by_type(number: Check | None, string: Check | None, array: Check | None, obj: Check | None) -> Check:
    def check(value: Any, where: Any, out: list[Violation]) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, _NUMBERS):
            if number is not None:
                number(value, where, out)
        elif isinstance(value, str):
            if string is not None:
                string(value, where, out)
        elif isinstance(value, list):
            if array is not None:
                array(value, where, out)
        elif isinstance(value, dict) and obj is not None:
            obj(value, where, out)

    return check


_BOUNDS = (
    ("minimum", "too-small", "at least {}"),
    ("exclusiveMinimum", "too-small", "greater than {}"),
    ("maximum", "too-large", "at most {}"),
    ("exclusiveMaximum", "too-large", "less than {}"),
)


def _number_check(schema: JsonSchema) -> Check | None:
    bounds = [(k, p, e.format(schema[k]), schema[k]) for k, p, e in _BOUNDS if has_type(schema.get(k), "number")]
    divisor: Any = schema.get("multipleOf")
    if not (has_type(divisor, "number") and divisor > 0):
        divisor = None
    if not bounds and divisor is None:
        return None

    def check(value: Any, where: Any, out: list[Violation]) -> None:
        for keyword, problem, expected, bound in bounds:
            if _beyond(keyword, value, bound):
                out.append(Violation(_at(where), problem, expected))
        if divisor is not None and not _is_multiple(value, divisor):
            out.append(Violation(_at(where), "not-multiple", f"a multiple of {divisor}"))

    return check


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


def _string_check(schema: JsonSchema) -> Check | None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    low = low if isinstance(low, int) and not isinstance(low, bool) else None
    high = high if isinstance(high, int) and not isinstance(high, bool) else None
    pattern = schema.get("pattern")
    regex: re.Pattern[str] | None = None
    if isinstance(pattern, str):
        try:
            regex = re.compile(pattern)
        except re.error:
            regex = None  # a pattern Python cannot read is not the caller's mistake
    if low is None and high is None and regex is None:
        return None

    def check(value: str, where: Any, out: list[Violation]) -> None:
        if low is not None and len(value) < low:
            out.append(Violation(_at(where), "too-short", f"at least {low} characters"))
        if high is not None and len(value) > high:
            out.append(Violation(_at(where), "too-long", f"at most {high} characters"))
        if regex is not None and regex.search(value) is None:
            out.append(Violation(_at(where), "pattern-mismatch", f"a string matching {pattern}"))

    return check


def _array_check(schema: JsonSchema) -> Check | None:
    low, high = schema.get("minItems"), schema.get("maxItems")
    low = low if isinstance(low, int) and not isinstance(low, bool) else None
    high = high if isinstance(high, int) and not isinstance(high, bool) else None
    unique = schema.get("uniqueItems") is True
    items = compiled(schema["items"]) if "items" in schema else None
    if low is None and high is None and not unique and items is None:
        return None

    def check(value: list[Any], where: Any, out: list[Violation]) -> None:
        if low is not None and len(value) < low:
            out.append(Violation(_at(where), "too-few-items", f"at least {low} items"))
        if high is not None and len(value) > high:
            out.append(Violation(_at(where), "too-many-items", f"at most {high} items"))
        if unique:
            for index, item in enumerate(value):
                if any(json_equal(item, earlier) for earlier in value[:index]):
                    out.append(Violation(json_path(_at(where), index), "duplicate-item", "items that are all different"))
        if items is not None:
            for index, item in enumerate(value):
                items(item, (where, index), out)

    return check


def _object_check(schema: JsonSchema) -> Check | None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    additional = schema.get("additionalProperties", True)
    fewest = schema.get("minProperties")
    fewest = fewest if isinstance(fewest, int) and not isinstance(fewest, bool) and fewest > 0 else None
    if not properties and not required and additional is True and fewest is None:
        return None
    checks = {name: compiled(sub) for name, sub in properties.items()}
    missing = {name: describe(properties.get(name, True)) for name in required}
    known = ", ".join(sorted(properties)) or "none"
    other = None if additional is False else compiled(additional)

    def check(value: JsonObject, where: Any, out: list[Violation]) -> None:
        if fewest is not None and len(value) < fewest:
            out.append(Violation(_at(where), "too-few-properties", f"at least {fewest} properties"))
        for name in required:
            if name not in value:
                out.append(Violation(json_path(_at(where), name), "missing", missing[name]))
        for name, item in value.items():
            sub = checks.get(name)
            if sub is not None:
                sub(item, (where, name), out)
            elif other is None:
                out.append(Violation(json_path(_at(where), name), "unknown-property", f"only these properties: {known}"))
            elif other is not _nothing:
                other(item, (where, name), out)

    return check


def _combinator_check(schema: JsonSchema) -> Check | None:
    all_of = [compiled(s) for s in schema.get("allOf") or []] if isinstance(schema.get("allOf"), list) else []
    any_of_schemas = schema.get("anyOf")
    any_of = [compiled(s) for s in any_of_schemas] if isinstance(any_of_schemas, list) and any_of_schemas else []
    one_of_schemas = schema.get("oneOf")
    one_of = [compiled(s) for s in one_of_schemas] if isinstance(one_of_schemas, list) and one_of_schemas else []
    if not all_of and not any_of and not one_of:
        return None
    any_expected = describe({"anyOf": any_of_schemas}) if any_of else ""
    one_expected = "exactly one of: " + describe({"oneOf": one_of_schemas}) if one_of else ""

    def passes(sub: Check, value: Any) -> bool:
        found: list[Violation] = []
        sub(value, "$", found)
        return not found

    def check(value: Any, where: Any, out: list[Violation]) -> None:
        for sub in all_of:
            sub(value, where, out)
        if any_of and not any(passes(s, value) for s in any_of):
            out.append(Violation(_at(where), "no-alternative-matches", any_expected))
        if one_of:
            matches = sum(1 for s in one_of if passes(s, value))
            if matches == 0:
                out.append(Violation(_at(where), "no-alternative-matches", one_expected))
            elif matches > 1:
                out.append(Violation(_at(where), "several-alternatives-match", "exactly one of the alternatives, not several"))

    return check
