"""Each profile's exact output for Hollowbrook and for hard schemas, and the real compatibility report."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import HOLLOWBROOK

from skillhouse.compiler import compile_dir, neutral_tool
from skillhouse.compiler.profiles import ProfileError, adapt, neutral_arguments, provider_tools

DESCRIPTION = (
    "Book a room for a guest from arrival to departure (dates as YYYY-MM-DD); returns the booking and its id."
)
PROPS = {
    "room_id": {"type": "integer"},
    "guest_name": {"type": "string"},
    "arrival": {"type": "string"},
    "departure": {"type": "string"},
    "note": {"type": "string"},
}
DECLARED = {
    "type": "object",
    "properties": PROPS,
    "required": ["arrival", "departure", "guest_name", "room_id"],
    "additionalProperties": False,
}
NAME = "hollowbrook_create_booking"


def _hollowbrook() -> tuple[Any, list[dict[str, Any]]]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, errors
    return compiled, [neutral_tool(op) for op in compiled.operations]


def _booking() -> dict[str, Any]:
    return next(t for t in _hollowbrook()[1] if t["name"] == NAME)


def test_create_booking_in_every_profile_is_the_declared_schema_in_the_providers_wrapping() -> None:
    tool = _booking()
    strict_schema = {
        "type": "object",
        "properties": {**PROPS, "note": {"type": ["string", "null"]}},
        "required": ["room_id", "guest_name", "arrival", "departure", "note"],
        "additionalProperties": False,
    }
    gemini_schema = {k: v for k, v in DECLARED.items() if k != "additionalProperties"}
    assert adapt(tool, "openai").tool == {
        "type": "function",
        "function": {"name": NAME, "description": DESCRIPTION, "parameters": DECLARED},
    }
    assert adapt(tool, "openai", shape="responses").tool == {
        "type": "function", "name": NAME, "description": DESCRIPTION, "parameters": DECLARED, "strict": False,
    }  # fmt: skip
    assert adapt(tool, "openai-strict").tool == {
        "type": "function",
        "function": {"name": NAME, "description": DESCRIPTION, "parameters": strict_schema, "strict": True},
    }
    assert adapt(tool, "anthropic").tool == {
        "name": NAME,
        "description": DESCRIPTION,
        "input_schema": DECLARED,
    }
    assert adapt(tool, "gemini").tool == {
        "name": NAME,
        "description": DESCRIPTION,
        "parameters": gemini_schema,
    }
    assert adapt(tool, "bedrock").tool == {
        "toolSpec": {"name": NAME, "description": DESCRIPTION, "inputSchema": {"json": DECLARED}}
    }
    assert adapt(tool, "mcp").tool == {
        "name": NAME,
        "title": "Create booking",
        "description": DESCRIPTION,
        "inputSchema": DECLARED,
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": True,
        },
    }


def test_mcp_annotations_follow_the_method_and_the_declared_identity() -> None:
    hints = {t["name"]: adapt(t, "mcp").tool["annotations"] for t in _hollowbrook()[1]}  # type: ignore[index]
    assert hints["hollowbrook_list_rooms"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert hints["hollowbrook_cancel_booking"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert hints["hollowbrook_charge"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }


def _optional(path: str) -> dict[str, str]:
    return {"path": path, "change": "optional: now required and nullable (null leaves it out)"}


def _removed(path: str, why: str) -> dict[str, str]:
    return {"path": path, "change": f"{path.rsplit('/', 1)[1]!r} removed: {why}"}


def _gemini_closed() -> dict[str, Any]:
    return {
        "status": "adapted",
        "changes": [
            {
                "path": "/parameters/additionalProperties",
                "change": "removed: Gemini has no additionalProperties (the guest still refuses unknown keys)",
            }
        ],
    }


def test_the_compiled_hollowbrook_release_carries_the_real_compatibility_report() -> None:
    compiled, _ = _hollowbrook()
    names = ["cancel_booking", "charge", "check_availability", "create_booking", "list_rooms"]
    ok = {f"hollowbrook_{n}": {"status": "ok"} for n in names}
    assert compiled.document["compatibility"] == {
        "profiles": {
            "openai": ok,
            "openai-strict": {
                **ok,
                NAME: {"status": "adapted", "changes": [_optional("/parameters/properties/note")]},
                "hollowbrook_cancel_booking": {
                    "status": "adapted",
                    "changes": [
                        _removed("/parameters/properties/booking_id/minLength", "strict mode does not support it"),
                        _removed("/parameters/properties/booking_id/not", "strict mode does not support it"),
                    ],
                },
                "hollowbrook_list_rooms": {
                    "status": "adapted",
                    "changes": [_optional("/parameters/properties/min_guests")],
                },
            },
            "anthropic": ok,
            "gemini": {
                **{f"hollowbrook_{n}": _gemini_closed() for n in names},
                # the path segment's limits (the compiler publishes them) are kept by the guest alone
                "hollowbrook_cancel_booking": {
                    "status": "adapted",
                    "changes": [
                        _removed("/parameters/properties/booking_id/not", "Gemini's schema has no such field"),
                        *_gemini_closed()["changes"],
                    ],
                },
            },
            "bedrock": ok,
            "mcp": ok,
        }
    }


HARD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pet": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}},
                    "required": ["kind"],
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"const": "dog"},
                        "breed": {"type": ["string", "null"], "format": "email"},
                    },
                    "required": ["kind", "breed"],
                },
            ],
            "discriminator": {"propertyName": "kind"},
        },
        "size": {"type": "integer", "enum": [1, 2, 3]},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$", "format": "uri", "minLength": 3},
        "parent": {"type": "object"},
        "when": {"type": "string", "format": "date-time", "default": "now"},
    },
    "required": ["pet", "code"],
    "additionalProperties": False,
}
HARD_TOOL = {"name": "zoo_adopt", "description": "Adopt a pet.", "parameters": HARD}


def test_strict_mode_rewrites_unions_consts_optionals_and_refused_keywords() -> None:
    adaptation = adapt(HARD_TOOL, "openai-strict")
    assert adaptation.tool is not None
    assert adaptation.tool["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "pet": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"enum": ["cat"]}, "lives": {"type": ["integer", "null"]}},
                        "required": ["kind", "lives"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "kind": {"enum": ["dog"]},
                            "breed": {"type": ["string", "null"], "format": "email"},
                        },
                        "required": ["kind", "breed"],
                        "additionalProperties": False,
                    },
                ]
            },
            "size": {"type": ["integer", "null"], "enum": [1, 2, 3, None]},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "when": {"type": ["string", "null"], "format": "date-time"},
        },
        "required": ["pet", "size", "code", "when"],
        "additionalProperties": False,
    }
    paths = [c["path"] for c in adaptation.changes]
    assert paths == [
        "/parameters/properties/pet/oneOf",
        "/parameters/properties/pet/discriminator",
        "/parameters/properties/pet/anyOf/0/properties/kind/const",
        "/parameters/properties/pet/anyOf/0/properties/lives",
        "/parameters/properties/pet/anyOf/0/additionalProperties",
        "/parameters/properties/pet/anyOf/1/properties/kind/const",
        "/parameters/properties/pet/anyOf/1/additionalProperties",
        "/parameters/properties/code/format",
        "/parameters/properties/code/minLength",
        "/parameters/properties/parent",
        "/parameters/properties/when/default",
        "/parameters/properties/size",
        "/parameters/properties/when",
    ]


def test_gemini_turns_nulls_into_nullable_and_moves_what_it_refuses_into_descriptions() -> None:
    # without the free-form `parent`, which sends the tool as JSON Schema (test_gemini_quirks.py)
    properties = {k: v for k, v in HARD["properties"].items() if k != "parent"}
    adaptation = adapt({**HARD_TOOL, "parameters": {**HARD, "properties": properties}}, "gemini")
    assert adaptation.tool == {
        "name": "zoo_adopt",
        "description": "Adopt a pet.",
        "parameters": {
            "type": "object",
            "properties": {
                "pet": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {
                                "kind": {"enum": ["cat"], "type": "string"},
                                "lives": {"type": "integer"},
                            },
                            "required": ["kind"],
                        },
                        {
                            "type": "object",
                            "properties": {
                                "kind": {"enum": ["dog"], "type": "string"},
                                "breed": {
                                    "type": "string",
                                    "description": "Format: email.",
                                    "nullable": True,
                                },
                            },
                            "required": ["kind", "breed"],
                        },
                    ]
                },
                "size": {"type": "integer", "description": "One of: 1, 2, 3."},
                "code": {
                    "pattern": "^[A-Z]{3}$",
                    "minLength": 3,
                    "type": "string",
                    "description": "Format: uri.",
                },
                "when": {"default": "now", "type": "string", "format": "date-time"},
            },
            "required": ["pet", "code"],
        },
    }
    assert "/parameters/properties/size/enum" in [c["path"] for c in adaptation.changes]


def test_a_required_argument_a_provider_cannot_express_refuses_the_tool_there_only() -> None:
    tool = {
        "name": "shop_tag",
        "description": "Tag.",
        "parameters": {
            "type": "object",
            "properties": {"labels": {"type": "object"}},
            "required": ["labels"],
        },
    }
    assert adapt(tool, "openai-strict").status == "refused"
    # Gemini takes it whole as JSON Schema (parametersJsonSchema) rather than refuse it
    assert adapt(tool, "gemini").tool == {"name": "shop_tag", "description": "Tag.", "parametersJsonSchema": tool["parameters"]}
    assert {adapt(tool, p).status for p in ("openai", "anthropic", "bedrock", "mcp")} == {"ok"}


def test_strict_mode_leaves_out_an_optional_subtree_nested_past_ten_levels() -> None:
    leaf: dict[str, Any] = {"type": "string"}
    for level in range(11):
        leaf = {
            "type": "object",
            "properties": {f"l{level}": leaf},
            "required": [f"l{level}"],
            "additionalProperties": False,
        }
    tool = {
        "name": "deep",
        "description": "Deep.",
        "parameters": {
            "type": "object",
            "properties": {"deep": leaf, "id": {"type": "string"}},
            "required": ["id"],
        },
    }
    adaptation = adapt(tool, "openai-strict")
    assert adaptation.tool is not None
    assert list(adaptation.tool["function"]["parameters"]["properties"]) == ["id"]
    assert adaptation.changes[0]["path"] == "/parameters/properties/deep"


def test_a_recursive_type_cut_to_an_object_is_left_out_where_optional() -> None:
    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "parent": {"type": "object"}},
        "required": ["name"],
    }
    tool = {
        "name": "tree",
        "description": "Tree.",
        "parameters": {"type": "object", "properties": {"node": node}, "required": ["node"]},
    }
    adaptation = adapt(tool, "openai-strict")
    assert adaptation.status == "adapted"
    assert "/parameters/properties/node/properties/parent" in [c["path"] for c in adaptation.changes]
    # Gemini's Schema subset would leave it out too, so the tool goes as JSON Schema, whole
    gemini = adapt(tool, "gemini")
    assert gemini.tool is not None and gemini.tool["parametersJsonSchema"] == tool["parameters"]
    assert "/parameters/properties/node/properties/parent" in gemini.changes[0]["change"]


def test_a_long_description_is_truncated_for_openai_with_a_note() -> None:
    tool = {**_booking(), "description": "word " * 400}
    adaptation = adapt(tool, "openai")
    assert adaptation.tool is not None
    assert len(adaptation.tool["function"]["description"]) <= 1024
    assert adaptation.changes[0]["path"] == "/description"
    assert adapt(tool, "anthropic").status == "ok"


def test_a_property_name_anthropic_refuses_refuses_the_tool_for_anthropic_and_bedrock() -> None:
    tool = {
        "name": "shop_list",
        "description": "List.",
        "parameters": {"type": "object", "properties": {"include[]": {"type": "string"}}},
    }
    assert adapt(tool, "anthropic").status == "refused"
    assert adapt(tool, "bedrock").status == "refused"
    assert adapt(tool, "openai").status == "ok"


def test_gemini_renames_a_tool_whose_name_starts_with_a_digit() -> None:
    tool = {
        "name": "9lives_get",
        "description": "Get.",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
    adaptation = adapt(tool, "gemini")
    assert adaptation.tool is not None and adaptation.tool["name"] == "_9lives_get"
    assert adaptation.changes[0]["path"] == "/name"


def test_deferred_anthropic_lists_the_search_tool_then_eager_tools_then_deferred_operations() -> None:
    _, tools = _hollowbrook()
    eager = {
        "name": "read_object",
        "description": "Read.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    listing = provider_tools(tools, "anthropic", deferred=True, eager=[eager])
    assert listing[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    assert listing[1] == {"name": "read_object", "description": "Read.", "input_schema": eager["parameters"]}
    assert [t.get("defer_loading") for t in listing[2:]] == [True] * 5


def test_deferred_openai_uses_tool_search_in_the_responses_shape() -> None:
    _, tools = _hollowbrook()
    listing = provider_tools(tools, "openai", deferred=True)
    assert listing[0] == {"type": "tool_search"}
    assert all(t["defer_loading"] is True and t["type"] == "function" and "name" in t for t in listing[1:])
    with pytest.raises(ProfileError):
        provider_tools(tools, "openai", deferred=True, shape="chat")
    for profile in ("gemini", "bedrock", "mcp"):
        with pytest.raises(ProfileError):
            provider_tools(tools, profile, deferred=True)


def test_a_null_for_a_left_out_argument_becomes_no_argument_again() -> None:
    schema = _booking()["parameters"]
    sent = {
        "room_id": 1,
        "guest_name": "Ada",
        "arrival": "2026-01-01",
        "departure": "2026-01-02",
        "note": None,
    }
    assert neutral_arguments(schema, sent) == {k: v for k, v in sent.items() if k != "note"}
