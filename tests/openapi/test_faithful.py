"""Faithful to the spec: what a spec says about a request is what the tool and its translation do.

readOnly fields are out of a request and out of its ``required``; empty query values are sent only
where ``allowEmptyValue`` says; a required nullable body sends ``null``; a property called ``$ref``
is a property; a ``$ref`` into ``components/examples`` adapts the operation instead of costing it;
spec bugs (``type: any``, ``/users/:id``) are reported.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.openapi.specs import SPECS, import_of, imported, openapi, outcome

from skillhouse.guest.translation import InvalidArguments, build_request


def json_body(schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_read_only_properties_leave_required_too_wherever_they_are_declared_and_write_only_ones_stay() -> None:
    schemas = {
        "Id": {"type": "string", "readOnly": True},
        "Base": {"type": "object", "properties": {"id": ref("Id"), "created": {"type": "string", "readOnly": True}, "name": {"type": "string"}}},
        # required here, readOnly in the part it comes from (or in the type its $ref leads to)
        "User": {"allOf": [ref("Base"), {"type": "object", "required": ["id", "created", "name", "password"],
                                          "properties": {"password": {"type": "string", "writeOnly": True}}}]},
    }
    _, ops = imported(openapi({"/users": {"post": {"operationId": "createUser", "requestBody": json_body(ref("User"), True)}}}, schemas))
    schema = ops["createUser"]["schema"]
    assert sorted(schema["properties"]) == ["name", "password"]
    assert schema["required"] == ["name", "password"]


def test_empty_query_values_are_sent_only_where_allow_empty_value_says() -> None:
    params = [
        {"name": "q", "in": "query", "required": True, "schema": {"type": "string"}},
        {"name": "cursor", "in": "query", "schema": {"type": "string"}},
        {"name": "flag", "in": "query", "allowEmptyValue": True, "schema": {"type": "string"}},
    ]
    result, ops = imported(openapi({"/search": {"get": {"operationId": "search", "parameters": params}}}))
    op = ops["search"]
    assert op["schema"]["properties"]["q"] == {"type": "string", "minLength": 1}  # required: "" cannot be sent
    assert op["schema"]["properties"]["cursor"] == {"type": "string"}
    assert "  allow_empty:\n  - flag\n" in result.files["search.md"]
    assert [a["name"] for a in op["arguments"] if a.get("allow_empty")] == ["flag"]
    request = build_request(op, {"q": "books", "cursor": "", "flag": ""})
    assert request["url"] == "https://api.test/v1/search?q=books&flag="
    with pytest.raises(InvalidArguments) as refused:
        build_request(op, {"q": ""})
    assert [v.problem for v in refused.value.violations] == ["too-short"]


def test_a_required_nullable_body_sends_null_and_an_optional_one_sends_nothing() -> None:
    nullable = {"type": "array", "items": {"type": "string"}, "nullable": True}
    _, ops = imported(openapi({
        "/tags": {"put": {"operationId": "setTags", "requestBody": json_body(nullable, True)}},
        "/notes": {"put": {"operationId": "setNotes", "requestBody": json_body(nullable)}},
    }))  # fmt: skip
    sent = build_request(ops["setTags"], {"body": None})
    assert (sent["body"], sent["headers"]["Content-Type"]) == ("null", "application/json")
    assert build_request(ops["setTags"], {"body": ["a"]})["body"] == '["a"]'
    assert build_request(ops["setNotes"], {"body": None})["body"] is None


def test_a_property_named_ref_is_a_property_at_every_depth() -> None:
    # Kubernetes' JSONSchemaProps has "$ref" and "$schema" properties
    props = {"type": "object", "required": ["$ref"], "properties": {"$ref": {"type": "string"}, "$schema": {"type": "string"}}}
    spec = openapi({"/crds": {"post": {"operationId": "createCrd", "requestBody": json_body(
        {"type": "object", "properties": {"validation": ref("Props")}})}}}, {"Props": props})
    result, ops = imported(spec)
    assert outcome(result, "createCrd").status == "written"
    inner = ops["createCrd"]["schema"]["properties"]["validation"]
    assert inner["properties"] == {"$ref": {"type": "string"}, "$schema": {"type": "string"}}
    sent = build_request(ops["createCrd"], {"validation": {"$ref": "#/definitions/x"}})
    assert sent["body"] == '{"validation":{"$ref":"#/definitions/x"}}'


def test_a_ref_into_components_examples_adapts_the_operation_with_a_located_note() -> None:
    schemas = {"Pet": {"type": "object", "properties": {
        "name": {"type": "string", "example": {"$ref": "#/components/examples/Name"}},
        "kind": {"$ref": "#/components/examples/Name"},
    }}}
    spec = openapi({"/pets": {"post": {"operationId": "addPet", "requestBody": json_body(ref("Pet"))}}}, schemas)
    spec["components"]["examples"] = {"Name": {"value": "Rex"}}
    result, ops = imported(spec)
    found = outcome(result, "addPet")
    assert found.status == "adapted"
    assert found.notes == (
        "spec#/components/schemas/Pet: example $ref '#/components/examples/Name' replaced by the value it names",
        "spec: $ref '#/components/examples/Name' points into components/examples, which holds no schemas (a spec bug) "
        "[ref-wrong-kind]; the schema there accepts any value",
    )
    assert ops["addPet"]["schema"]["properties"] == {"name": {"type": "string", "examples": ["Rex"]}, "kind": {}}
    assert [p.code for p in result.report.problems] == ["ref-wrong-kind"]


def test_type_any_and_express_style_path_parameters_are_reported() -> None:
    spec = openapi({
        "/users/:id": {"get": {"operationId": "getUser", "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]}},
        "/things": {"post": {"operationId": "addThing", "requestBody": json_body({"type": "object", "properties": {"value": {"type": "any"}}})}},
    })  # fmt: skip
    result, ops = imported(spec)
    assert outcome(result, "getUser").notes[0] == (
        "path segment ':id' looks like a parameter written Express-style; OpenAPI writes '{id}' (a spec bug): it is sent literally as written"
    )
    assert outcome(result, "addThing").notes == (
        "an inline schema: type 'any' is not a JSON Schema type (a spec bug); any type is accepted there",
    )
    assert ops["addThing"]["schema"]["properties"]["value"] == {}


def test_properties_holding_a_ref_string_give_a_property_named_ref_and_a_note() -> None:
    # written by mistake for "these properties are those of X": the key is a property name all the same
    spec = openapi({"/search": {"post": {"operationId": "multiSearch", "requestBody": json_body(
        {"type": "object", "properties": {"queries": {"type": "array", "items": {"type": "object", "properties": {"$ref": "#/components/schemas/Q"}}}}})}}},
        {"Q": {"type": "object"}})  # fmt: skip
    result, ops = imported(spec)
    assert outcome(result, "multiSearch").notes == (
        "an inline schema: property '$ref' has '#/components/schemas/Q' for a schema, which is not one (a spec bug); it accepts any value",
    )
    assert ops["multiSearch"]["schema"]["properties"]["queries"]["items"]["properties"] == {"$ref": {}}


def test_form_fields_the_spec_encodes_as_deep_objects_write_lists_in_indexed_brackets() -> None:
    # Stripe's spelling: every list and object of a form body in brackets, a list's items indexed; its
    # "unset" empty string stays a plain field
    form = {
        "type": "object",
        "properties": {
            "expand": {"type": "array", "items": {"type": "string"}},
            "aliases": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string", "enum": [""]}]},
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    deep = {"style": "deepObject", "explode": True}
    body = {"content": {"application/x-www-form-urlencoded": {
        "schema": form, "encoding": {"expand": deep, "aliases": deep, "metadata": deep}}}}  # fmt: skip
    _, ops = imported(openapi({"/people": {"post": {"operationId": "createPerson", "requestBody": body}}}))
    op = ops["createPerson"]
    assert {a["name"]: a.get("style") for a in op["arguments"]} == {"expand": "deepObject", "aliases": "deepObject", "metadata": None, "tags": None}
    sent = build_request(op, {"expand": ["a", "b"], "aliases": ["x"], "metadata": {"k": "v"}, "tags": ["t", "u"]})["body"]
    assert sent == "aliases%5B0%5D=x&expand%5B0%5D=a&expand%5B1%5D=b&metadata%5Bk%5D=v&tags=t&tags=u"
    assert build_request(op, {"aliases": ""})["body"] == "aliases="


def test_a_property_two_all_of_parts_describe_keeps_what_each_says() -> None:
    both = {"allOf": [{"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer", "minimum": 1}}},
                      {"type": "object", "properties": {"name": {"example": "buster"}, "size": {"type": "integer", "minimum": 3}}}]}  # fmt: skip
    _, ops = imported(openapi({"/dogs": {"post": {"operationId": "createDog", "requestBody": json_body(both)}}}))
    properties = ops["createDog"]["schema"]["properties"]
    assert properties["name"] == {"type": "string", "examples": ["buster"]}
    assert properties["size"] == {"allOf": [{"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 3}]}
    with pytest.raises(InvalidArguments):
        build_request(ops["createDog"], {"name": None})


def _object_nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _object_nodes(item)]
    if not isinstance(node, dict):
        return []
    return [node, *(found for value in node.values() for found in _object_nodes(value))]


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_no_corpus_tool_offers_a_read_only_property_or_requires_one_it_left_out(path: Any) -> None:
    result = import_of(path)
    assert result.compiled is not None
    for op in result.compiled.document["operations"]:
        for node in _object_nodes(op["schema"]):
            properties = node.get("properties")
            if isinstance(properties, dict):
                assert not any(isinstance(s, dict) and s.get("readOnly") is True for s in properties.values()), op["name"]
                if node.get("additionalProperties") is False:
                    assert set(node.get("required", [])) <= set(properties), op["name"]


def test_a_schema_requiring_a_property_it_forbids_is_reported_and_usable() -> None:
    screens = {"type": "object", "required": ["defaultScreen"], "additionalProperties": False,
               "properties": {"default": {"type": "integer"}, "edit": {"type": "integer"}}}  # fmt: skip
    result, ops = imported(openapi({"/schemes": {"post": {"operationId": "createScheme", "requestBody": json_body(ref("Screens"), True)}}},
                                   {"Screens": screens}))  # fmt: skip
    assert ops["createScheme"]["schema"].get("required", []) == []
    assert any("requires 'defaultScreen', which it does not declare" in n for n in outcome(result, "createScheme").notes)
    build_request(ops["createScheme"], {"default": 1})
