"""Every profile's output passes that provider's published limits, on generated and hand-made schemas."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.compiler.provider_limits import problems

from skillhouse.compiler.profiles import (
    _REPORTS,
    _TAKEN_EVERYWHERE,
    PROFILES,
    adapt,
    anthropic,
    compatibility_report,
    gemini,
    provider_tools,
    strict,
    verdict,
)
from skillhouse.compiler.profiles.adaptation import Refused, Rewrite, check_property_names, takes_as_declared
from skillhouse.records import replace

NAMES = st.sampled_from(
    ["id", "name", "note", "include[]", "a.b", "x-y", "tags", "very_" + "long" * 20, "ünï"]
)
LEAF_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null"])


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    typed = st.builds(
        lambda t, extra: {"type": t, **extra},
        LEAF_TYPES,
        st.fixed_dictionaries(
            {},
            optional={
                "format": st.sampled_from(["email", "date-time", "uuid", "int64", "byte", "uri"]),
                "pattern": st.just("^[a-z]+$"),
                "minLength": st.integers(0, 3),
                "minimum": st.integers(-5, 5),
                "exclusiveMaximum": st.integers(6, 9),
                "default": st.just("x"),
                "description": st.text(max_size=20),
            },
        ),
    )
    others = st.one_of(
        st.builds(lambda v: {"const": v}, st.one_of(st.text(max_size=5), st.integers())),
        st.builds(
            lambda vs: {"enum": vs},
            st.lists(st.one_of(st.text(max_size=5), st.integers(), st.none()), min_size=1, max_size=4),
        ),
        st.builds(lambda ts: {"type": ts}, st.lists(LEAF_TYPES, min_size=1, max_size=3, unique=True)),
        st.just({}),
        st.just({"type": "object"}),
    )
    return st.one_of(typed, others)


def _containers(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    obj = st.builds(
        lambda props, req, extra: {
            "type": "object",
            "properties": props,
            "required": [n for n in props if req(n)],
            **extra,
        },
        st.dictionaries(NAMES, children, max_size=4),
        st.sampled_from([lambda n: True, lambda n: False, lambda n: len(n) % 2 == 0]),
        st.fixed_dictionaries({}, optional={"additionalProperties": st.one_of(st.booleans(), children)}),
    )
    array = st.builds(
        lambda items, extra: {"type": "array", **({"items": items} if items else {}), **extra},
        st.one_of(st.none(), children),
        st.fixed_dictionaries({}, optional={"uniqueItems": st.booleans()}),
    )
    union = st.builds(
        lambda kw, bs: {kw: bs},
        st.sampled_from(["anyOf", "oneOf", "allOf"]),
        st.lists(children, min_size=1, max_size=3),
    )
    nullable = st.builds(lambda c: {**c, "nullable": True}, children)
    return st.one_of(obj, array, union, nullable)


SCHEMAS = st.recursive(_leaf(), _containers, max_leaves=12)
ROOTS = st.builds(
    lambda props, optional: {
        "type": "object",
        "properties": props,
        "required": sorted(n for n in props if n not in optional),
        "additionalProperties": False,
    },
    st.dictionaries(NAMES, SCHEMAS, max_size=5),
    st.sets(NAMES),
)


def _tool(
    schema: dict[str, Any], description: str = "Does a thing.", name: str = "shop_do_thing"
) -> dict[str, Any]:
    return {"name": name, "description": description, "parameters": schema}


def _assert_fits(tool: dict[str, Any]) -> None:
    for profile in PROFILES:
        adaptation = adapt(tool, profile)
        entry = adaptation.report()
        if entry["status"] == "refused":
            assert entry["reason"]
            assert adaptation.tool is None
            continue
        if entry["status"] == "adapted":
            assert all(c["path"].startswith("/") and c["change"] for c in entry["changes"])
        for shape in ("chat", "responses") if profile.startswith("openai") else ("chat",):
            listing = provider_tools([tool], profile, shape=shape)
            assert problems(profile, listing) == [], (profile, shape, listing)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROOTS, st.text(max_size=1500), st.sampled_from(["shop_do_thing", "9lives", "a" * 70, "dots.in.name"]))
def test_every_profile_fits_its_provider_limits_on_generated_schemas(
    schema: dict[str, Any], description: str, name: str
) -> None:
    _assert_fits(_tool(schema, description, name))


@settings(max_examples=60, deadline=None)
@given(ROOTS)
def test_adapting_is_deterministic_and_leaves_the_neutral_tool_as_it_was(schema: dict[str, Any]) -> None:
    # one neutral tool is adapted for every profile in turn (the compatibility report does so): a
    # profile that edited it would change what the next profile is given
    tool = _tool(schema)
    before = copy.deepcopy(tool)
    for profile in PROFILES:
        adapted = adapt(tool, profile)
        assert repr(tool) == repr(before), profile
        # the same content in the same key order from an equal tool that is another object
        assert repr(adapt(copy.deepcopy(before), profile)) == repr(adapted), profile


@settings(max_examples=60, deadline=None)
@given(ROOTS)
def test_a_tool_is_ok_only_when_its_wire_schema_is_the_declared_one(schema: dict[str, Any]) -> None:
    tool = _tool(schema)
    for profile in ("anthropic", "bedrock", "mcp", "openai"):
        adaptation = adapt(tool, profile)
        if adaptation.status == "ok":
            wire = adaptation.tool
            assert wire is not None
            assert _wire_schema(profile, wire) == schema


def _wire_schema(profile: str, wire: dict[str, Any]) -> Any:
    if profile == "anthropic":
        return wire["input_schema"]
    if profile == "mcp":
        return wire["inputSchema"]
    if profile == "bedrock":
        return wire["toolSpec"]["inputSchema"]["json"]
    return wire["function"]["parameters"]


HARD = [
    {
        "type": "object",
        "properties": {
            "deep": {
                "type": "object",
                "properties": {
                    "a": {
                        "type": "object",
                        "properties": {
                            "b": {
                                "type": "object",
                                "properties": {
                                    "c": {
                                        "type": "object",
                                        "properties": {
                                            "d": {
                                                "type": "object",
                                                "properties": {
                                                    "e": {
                                                        "type": "object",
                                                        "properties": {
                                                            "f": {
                                                                "type": "object",
                                                                "properties": {
                                                                    "g": {
                                                                        "type": "object",
                                                                        "properties": {
                                                                            "h": {
                                                                                "type": "object",
                                                                                "properties": {
                                                                                    "i": {
                                                                                        "type": "object",
                                                                                        "properties": {
                                                                                            "j": {
                                                                                                "type": "string"
                                                                                            }
                                                                                        },
                                                                                    }
                                                                                },
                                                                            }
                                                                        },
                                                                    }
                                                                },
                                                            }
                                                        },
                                                    }
                                                },
                                            }
                                        },
                                    }
                                },
                            }
                        },
                    }
                },
            }
        },
        "required": [],
    },
    {
        "type": "object",
        "properties": {"big": {"type": "string", "enum": [f"v{i}" for i in range(1200)]}},
        "required": ["big"],
    },
    {
        "type": "object",
        "properties": {"meta": {"type": "object", "additionalProperties": {"type": "string"}}},
        "required": ["meta"],
    },
    {"type": "object", "properties": {}, "additionalProperties": False},
]


@pytest.mark.parametrize("schema", HARD)
def test_every_profile_fits_its_provider_limits_on_hand_made_edge_schemas(schema: dict[str, Any]) -> None:
    _assert_fits(_tool(schema, "x" * 3000))


_LEAF = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer"])},
    optional={"enum": st.lists(st.one_of(st.text(max_size=80), st.integers(), st.none()), max_size=300)},
)
_SCHEMAS = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(st.text(min_size=1, max_size=12), inner, max_size=5)}),
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=3)}),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_SCHEMAS)
def test_strict_size_totals_add_up_as_the_ordered_walk_does(schema: dict[str, Any]) -> None:
    # the strict check adds up without a call per node and walks in order only to name a large enum
    properties, enum_values, characters, large = strict._totals(schema)
    try:
        assert (properties, enum_values, characters) == strict._measure(schema)
        assert not large
    except Refused:
        assert large


def _assert_verdicts_are_the_reports(tool: dict[str, Any]) -> None:
    # the compatibility report's walks for strict mode and Gemini build no schema: they must record
    # and refuse exactly what the rewrites that build the wire form do
    for profile in PROFILES:
        assert verdict(tool, profile) == adapt(tool, profile).report(), profile


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROOTS)
def test_the_report_walks_say_what_the_rewrites_do_on_generated_schemas(schema: dict[str, Any]) -> None:
    _assert_verdicts_are_the_reports(_tool(schema))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ROOTS,
    st.one_of(st.just(""), st.text(max_size=1100), st.just("x" * 1024), st.just("x" * 1025)),
    st.sampled_from(["shop_do_thing", "9lives", "a" * 64, "a" * 65, "a" * 129, "dots.in.name", "-", "ünï"]),
)
def test_the_compatibility_report_is_every_profile_s_report(schema: dict[str, Any], description: str, name: str) -> None:
    # the report settles the name, description and root checks once per tool for the profiles whose
    # rules take them as they are, and asks each profile's own verdict otherwise
    tool = _tool(schema, description, name)
    report = compatibility_report([tool])["profiles"]
    for profile in PROFILES:
        assert report[profile][name] == adapt(tool, profile).report(), profile
    broken = {**tool, "parameters": {"anyOf": [schema]}}
    report = compatibility_report([broken])["profiles"]
    for profile in PROFILES:
        assert report[profile][name] == adapt(broken, profile).report(), profile


@pytest.mark.parametrize("schema", HARD)
def test_the_report_walks_say_what_the_rewrites_do_on_hand_made_edge_schemas(schema: dict[str, Any]) -> None:
    _assert_verdicts_are_the_reports(_tool(schema, "x" * 3000))


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


_FIVE = ["a", "b", "c", "d", "e"]
REPORT_EDGES = [
    # what the rewrite adds counts: null in an optional property's enum, and in a nullable one's
    _object({"x": {"type": "string", "enum": _FIVE}}),
    _object({"x": {"type": "string", "enum": _FIVE, "nullable": True}}, ("x",)),
    _object({f"p{i}": {"type": "string", "enum": []} for i in range(6)}),
    _object({"x": {"anyOf": [{"type": "string"}], "enum": _FIVE, "nullable": True}}, ("x",)),
    _object({"x": {"anyOf": [{"type": "object"}], "nullable": True}}, ("x",)),
    _object({"x": {"type": "string", "enum": ["abcd", "efgh"]}}),
    # what it leaves out does not: an optional property that cannot be expressed holds many values
    _object({"x": {"type": "object", "properties": {"e": {"type": "string", "enum": _FIVE * 2}}}, "y": {}}),
    _object({"x": {"anyOf": [{}, {"type": "string", "enum": _FIVE * 2}]}}),
    # an object whose type is not declared, and enums or unions in forms no provider takes
    _object({"x": {"properties": {"y": {"type": "string"}}}}),
    _object({"x": {"enum": "abc"}}, ("x",)),
    _object({"x": {"anyOf": {"type": "string"}, "nullable": True}, "y": {"anyOf": {"type": "string"}}}),
    _object({"x": {"type": ["string", "null"], "enum": ["", None], "format": "uri"}}),
    _object({"x": {"enum": [1, None]}, "y": {"enum": ["", "a"], "format": "date-time"}}),
    # a type that is null, an empty list, a list with a non-string or a one-type list
    _object({"x": {"type": "null"}, "y": {"type": []}, "z": {"type": [1, "string"]}, "w": {"type": ["integer"]}}),
    _object({"x": {"type": ["null", "string", "null"], "enum": ["é", None]}}, ("x",)),
    # tools Gemini takes whole (a value of any type), with "" in an enum deep in lists, or in none
    _object({"any": {}, "deep": {"anyOf": [{"type": "array", "items": {"enum": [["", "x"], "", "ü"]}}]}}),
    _object({"any": {}, "deep": {"anyOf": [[{"enum": ["a", ""]}]], "type": "string"}}),
    _object({"any": {}, "plain": {"enum": ["a", "b"]}}),
]


@pytest.mark.parametrize("schema", [*REPORT_EDGES, *HARD])
def test_the_report_walks_count_toward_strict_mode_s_limits_as_the_rewritten_schema_holds(
    schema: dict[str, Any],
) -> None:
    with _small_strict_limits():
        _assert_verdicts_are_the_reports(_tool(schema))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(ROOTS, _SCHEMAS.map(lambda inner: _object({"a": inner, "b": inner}, ("a",)))))
def test_the_strict_report_walk_counts_toward_the_size_limits_as_the_rewritten_schema_holds(
    schema: dict[str, Any],
) -> None:
    with _small_strict_limits():
        tool = _tool(schema)
        assert verdict(tool, "openai-strict") == adapt(tool, "openai-strict").report()


@contextmanager
def _small_strict_limits() -> Iterator[None]:
    # strict mode's size limits, made small so that schemas cross each of them: the report walk adds
    # up the rewritten schema without building it, and must refuse exactly where the rewrite does
    limits = {
        "MAX_DEPTH": 3, "MAX_PROPERTIES": 6, "MAX_ENUM_VALUES": 5, "LARGE_ENUM": 2,
        "LARGE_ENUM_CHARACTERS": 6, "MAX_CHARACTERS": 40,
    }  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        for limit, value in limits.items():
            patch.setattr(strict, limit, value)
        yield


def test_property_names_that_passed_one_pattern_are_checked_again_for_another() -> None:
    # the report checks a tool's names for Anthropic then Bedrock in a row and keeps the last pass
    schema = {"type": "object", "properties": {"a.b": {"type": "string"}}}
    check_property_names(schema, anthropic.RULES)
    check_property_names(schema, anthropic.RULES)
    stricter = replace(anthropic.RULES, property_name=re.compile(r"[a-z]+"))
    with pytest.raises(Refused, match=re.escape("'a.b' at /parameters/properties/a.b")):
        check_property_names(schema, stricter)


def test_the_compatibility_report_holds_one_object_per_distinct_change_and_text() -> None:
    # a large package's report repeats a few change texts thousands of times, a pointer in several changes,
    # and a change for every tool with the same argument
    schema = _object({"note": {"type": "string", "minLength": 1}, "tag": {"type": "string", "minLength": 2}})
    report = compatibility_report([_tool(schema, "Take a note.", "one"), _tool(schema, "Take a note.", "two")])["profiles"]
    one, two = report["openai-strict"]["one"]["changes"], report["openai-strict"]["two"]["changes"]
    assert one == two and all(a is b for a, b in zip(one, two, strict=True))
    removed = [change for change in one if change["change"].startswith("'minLength' removed")]
    assert len(removed) == 2 and removed[0]["change"] is removed[1]["change"]
    optional = {change["path"]: change for change in one if change["change"].startswith("optional")}
    assert optional["/parameters/properties/note"]["change"] is optional["/parameters/properties/tag"]["change"]


def test_the_compatibility_report_holds_one_ok_verdict() -> None:
    # two verdicts in three are "ok" in a large package's report: one dict serves them all
    plain = _object({"note": {"type": "string"}})
    report = compatibility_report([_tool(plain, "Take a note.", "one"), _tool(plain, "Take a note.", "two")])["profiles"]
    oks = [report[profile][name] for profile in PROFILES for name in ("one", "two") if report[profile][name] == {"status": "ok"}]
    assert len(oks) >= 2 and all(verdict is oks[0] for verdict in oks)


@settings(max_examples=300, deadline=None)
@given(
    st.from_regex(_TAKEN_EVERYWHERE.name_pattern, fullmatch=True),
    st.text(min_size=_TAKEN_EVERYWHERE.description_min, max_size=_TAKEN_EVERYWHERE.description_max or 2000),
)
def test_a_name_and_description_taken_everywhere_are_taken_by_every_profile(name: str, description: str) -> None:
    # the report settles name and description once for all profiles when they are of this kind
    taken = takes_as_declared(name, description, _TAKEN_EVERYWHERE, {})
    for profile, (rules, _) in _REPORTS.items():
        assert not taken or takes_as_declared(name, description, rules, {}), profile


def test_profiles_that_judge_a_schema_alike_share_one_verdict() -> None:
    # Anthropic's and Bedrock's property-name rule is one, and so is their verdict object
    report = compatibility_report([_tool(_object({"a b": {"type": "string"}}), "Take a note.", "one")])["profiles"]
    assert report["anthropic"]["one"]["status"] == "refused"
    assert report["anthropic"]["one"] is report["bedrock"]["one"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.sampled_from(["", "é", "enum"]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["enum", "properties", "items", "x", "ü"]), inner, max_size=4),
    max_leaves=25,
)


def _any_empty_enum_value(node: Any) -> bool:
    if isinstance(node, list):
        return any(_any_empty_enum_value(item) for item in node)
    if not isinstance(node, dict):
        return False
    values = node.get("enum")
    return (isinstance(values, list) and "" in values) or any(_any_empty_enum_value(v) for v in node.values())


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_the_empty_enum_value_check_finds_what_the_ordered_walk_moves(value: Any) -> None:
    # Gemini's report walks a whole tool for "" among enum values only when the check finds one
    assert gemini._has_empty_enum_value(value) == _any_empty_enum_value(value)
    assert gemini._has_empty_enum_value({"type": "object", "properties": {"a": value}}) == bool(
        _empty_enum_changes({"type": "object", "properties": {"a": value}})
    )


def _empty_enum_changes(schema: dict[str, Any]) -> list[dict[str, str]]:
    rw = Rewrite()
    gemini._empty_enum_values_moved(rw, schema, "/parameters")
    return rw.changes


def test_the_empty_enum_value_check_goes_as_deep_as_the_schema() -> None:
    deep: Any = {"enum": ["", "a"]}
    for level in range(3000):
        deep = [deep] if level % 2 else {"items": deep}
    assert gemini._has_empty_enum_value(deep)
