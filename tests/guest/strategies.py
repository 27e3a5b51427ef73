"""Hypothesis strategies: schemas from the subset the compiler and wizard emit, and instances of them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PATTERNS = ["^[a-z]+$", "^[0-9]{2,4}$", "ab", "^(red|blue)$", "^\\S*$"]
NAMES = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def _string_schema(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    low = draw(st.none() | st.integers(0, 3))
    if low is not None:
        schema["minLength"] = low
    high = draw(st.none() | st.integers(low or 0, 8))
    if high is not None:
        schema["maxLength"] = high
    if draw(st.booleans()) and high is None and low is None:
        schema["pattern"] = draw(st.sampled_from(PATTERNS))
    return schema


@st.composite
def _number_schema(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["integer", "number"]))
    schema: dict[str, Any] = {"type": kind}
    low = draw(st.none() | st.integers(-100, 100))
    if low is not None:
        schema[draw(st.sampled_from(["minimum", "exclusiveMinimum"]))] = low
    high = draw(st.none() | st.integers((low or -100) + 2, 200))
    if high is not None:
        schema[draw(st.sampled_from(["maximum", "exclusiveMaximum"]))] = high
    if draw(st.integers(0, 3)) == 0:
        schema["multipleOf"] = draw(st.sampled_from([2, 3, 0.5, 0.25] if kind == "number" else [2, 3, 5]))
    return schema


def _leaf_schemas() -> st.SearchStrategy[dict[str, Any]]:
    scalar_types = st.sampled_from(["string", "integer", "number", "boolean", "null"])
    return st.one_of(
        _string_schema(),
        _number_schema(),
        st.just({"type": "boolean"}),
        st.lists(scalar_types, min_size=2, max_size=3, unique=True).map(lambda ts: {"type": ts}),
        json_scalars.map(lambda v: {"const": v}),
        st.lists(json_scalars, min_size=1, max_size=4).map(lambda vs: {"enum": vs}),
        st.just({"type": "string", "format": "date"}),
    )


@st.composite
def _object_schema(draw: st.DrawFn, inner: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    properties = draw(st.dictionaries(NAMES, inner, max_size=4))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if properties:
        schema["required"] = draw(
            st.lists(st.sampled_from(sorted(properties)), unique=True, max_size=len(properties))
        )
    schema["additionalProperties"] = draw(st.sampled_from([False, True]) | inner)
    return schema


@st.composite
def _array_schema(draw: st.DrawFn, inner: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": draw(inner)}
    low = draw(st.none() | st.integers(0, 2))
    if low is not None:
        schema["minItems"] = low
    high = draw(st.none() | st.integers(low or 0, 4))
    if high is not None:
        schema["maxItems"] = high
    if draw(st.booleans()):
        schema["uniqueItems"] = True
    return schema


def _extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    pair = st.lists(inner, min_size=1, max_size=3)
    return st.one_of(
        _object_schema(inner),
        _array_schema(inner),
        pair.map(lambda ss: {"anyOf": ss}),
        pair.map(lambda ss: {"oneOf": ss}),
        pair.map(lambda ss: {"allOf": ss}),
    )


schemas = st.recursive(_leaf_schemas(), _extend, max_leaves=8)


@st.composite
def instance_of(draw: st.DrawFn, schema: Any) -> Any:
    """A value aimed at ``schema``: usually valid, sometimes not (the tests check which with jsonschema)."""
    if not isinstance(schema, dict) or draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return draw(instance_of(draw(st.sampled_from(schema[key]))))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind))
    if kind == "string":
        if "pattern" in schema:
            return draw(st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: len(s) < 12))
        return draw(st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 8)))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1000))
        high = schema.get("maximum", schema.get("exclusiveMaximum", 1000))
        step = schema.get("multipleOf", 1)
        count = int((high - low) / step)
        return (
            low + step * draw(st.integers(0, max(count, 0)))
            if kind == "integer" or draw(st.booleans())
            else draw(st.floats(low, high, allow_nan=False))
        )
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        return draw(
            st.lists(
                instance_of(schema["items"]),
                min_size=schema.get("minItems", 0),
                max_size=schema.get("maxItems", 4),
            )
        )
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for name, sub in properties.items():
            if name in required or draw(st.booleans()):
                out[name] = draw(instance_of(sub))
        return out
    return draw(json_values)
