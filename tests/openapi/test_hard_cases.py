"""The cases today's peers break on, each imported into a skill the compiler accepts."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from tests.openapi.specs import imported, openapi, outcome

from skillhouse.compiler import SCHEMA_LIMIT, compact_size
from skillhouse.openapi import import_openapi, spec_from_data, wizard


def _where(op: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {a["name"]: (a["in"], a["wire"]) for a in op["arguments"]}


def test_a_self_recursive_schema_stops_at_a_bare_object() -> None:
    node = {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
    spec = openapi(
        {"/nodes": {"post": {"operationId": "createNode", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}},
        {"Node": node},
    )
    _, ops = imported(spec)
    # The body's fields are the tool's arguments; inside them, Node expands once and then stops.
    children = ops["createNode"]["schema"]["properties"]["children"]
    assert children["items"]["properties"]["children"] == {"type": "array", "items": {"type": "object"}}


def test_mutually_recursive_schemas_import_and_compile() -> None:
    schemas = {
        "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}, "n": {"type": "integer"}}},
    }
    spec = openapi({"/a": {"put": {"operationId": "putA", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}}, schemas)
    _, ops = imported(spec)
    # The argument b is B; its a is A, whose b would be B again: there it stops.
    assert ops["putA"]["schema"]["properties"]["b"]["properties"]["a"] == {"type": "object", "properties": {"b": {"type": "object"}}}


def test_duplicate_operation_ids_get_deterministic_suffixes() -> None:
    spec = openapi({"/a": {"get": {"operationId": "list"}}, "/b": {"get": {"operationId": "list"}}, "/c": {"get": {"operationId": "List"}}})
    _, ops = imported(spec)
    assert {name: op["url"] for name, op in ops.items()} == {
        "list": "https://api.test/v1/a",
        "list_2": "https://api.test/v1/b",
        "List_3": "https://api.test/v1/c",
    }


def test_missing_operation_ids_are_named_from_method_and_path() -> None:
    spec = openapi({"/users/{id}/posts": {"get": {}, "delete": {}}})
    _, ops = imported(spec)
    assert sorted(ops) == ["delete_users_id_posts", "get_users_id_posts"]


def test_an_over_long_operation_id_is_capped_at_64_with_a_hash() -> None:
    long_id = "getTheVeryLongListOfEverythingThatBelongsToTheAccountIncludingArchivedItemsAndMore"
    spec = openapi({"/x": {"get": {"operationId": long_id}}, "/y": {"get": {"operationId": long_id + "Too"}}})
    result, ops = imported(spec, name="a-rather-long-skill-name")
    assert len(ops) == 2
    assert all(len(name) <= 64 and len(op["tool_name"]) <= 64 for name, op in ops.items())
    assert len({op["tool_name"] for op in ops.values()}) == 2
    assert all(o.status == "written" for o in result.report.outcomes)


def test_a_name_in_the_path_and_the_body_gets_two_arguments_mapped_to_the_wire() -> None:
    body = {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}, "title": {"type": "string"}}}
    spec = openapi(
        {"/items/{id}": {"put": {"operationId": "putItem", "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                                  "requestBody": {"required": True, "content": {"application/json": {"schema": body}}}}}}
    )
    result, ops = imported(spec)
    assert _where(ops["putItem"]) == {"id": ("path", "id"), "id_body": ("body", "id"), "title": ("body", "title")}
    assert outcome(result, "putItem").status == "adapted"


def test_wire_names_providers_refuse_become_mapped_arguments() -> None:
    params = [
        {"name": "include[]", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "StartTime<", "in": "query", "schema": {"type": "string"}},
        {"name": "assigned_by.any", "in": "query", "schema": {"type": "string"}},
    ]
    _, ops = imported(openapi({"/calls": {"get": {"operationId": "listCalls", "parameters": params}}}))
    assert _where(ops["listCalls"]) == {
        "include": ("query", "include[]"),
        "StartTime_lt": ("query", "StartTime<"),
        "assigned_by_any": ("query", "assigned_by.any"),
    }


def test_deep_object_and_non_exploded_arrays_keep_their_query_style() -> None:
    params = [
        {"name": "filter", "in": "query", "style": "deepObject", "explode": True, "schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        {"name": "ids", "in": "query", "style": "form", "explode": False, "schema": {"type": "array", "items": {"type": "integer"}}},
        {"name": "tags", "in": "query", "style": "pipeDelimited", "explode": False, "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "many", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
    ]
    _, ops = imported(openapi({"/q": {"get": {"operationId": "query", "parameters": params}}}))
    styles = {a["name"]: a.get("style") for a in ops["query"]["arguments"]}
    assert styles == {"filter": "deepObject", "ids": "comma", "tags": "pipeDelimited", "many": None}


def test_a_form_body_is_declared_form_encoded_with_nested_fields_kept() -> None:
    body = {"type": "object", "properties": {"email": {"type": "string"}, "metadata": {"type": "object", "additionalProperties": {"type": "string"}}}}
    spec = openapi({"/customers": {"post": {"operationId": "createCustomer", "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": body}}}}}})
    _, ops = imported(spec)
    op = ops["createCustomer"]
    assert op["encoding"] == "form"
    assert op["schema"]["properties"]["metadata"] == {"type": "object", "additionalProperties": {"type": "string"}}


def test_a_multipart_body_keeps_its_fields_and_reports_file_parts() -> None:
    body = {"type": "object", "required": ["file", "purpose"], "properties": {"file": {"type": "string", "format": "binary"}, "purpose": {"type": "string"}}}
    spec = openapi({"/files": {"post": {"operationId": "upload", "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": body}}}}}})
    result, ops = imported(spec)
    assert ops["upload"]["encoding"] == "multipart"
    assert {a["name"] for a in ops["upload"]["arguments"]} == {"file", "purpose"}
    assert any("file part 'file'" in note for note in outcome(result, "upload").notes)


def test_openapi_31_type_arrays_and_const_are_kept_and_30_nullable_becomes_a_type_array() -> None:
    body31 = {"type": "object", "properties": {"n": {"type": ["integer", "null"]}, "kind": {"const": "x"}}}
    spec31 = openapi({"/t": {"post": {"operationId": "t", "requestBody": {"content": {"application/json": {"schema": body31}}}}}}, version="3.1.0")
    _, ops = imported(spec31)
    assert ops["t"]["schema"]["properties"] == {"n": {"type": ["integer", "null"]}, "kind": {"const": "x"}}
    body30 = {"type": "object", "properties": {"s": {"type": "string", "enum": ["a"], "nullable": True}}}
    _, ops30 = imported(openapi({"/t": {"post": {"operationId": "t", "requestBody": {"content": {"application/json": {"schema": body30}}}}}}))
    assert ops30["t"]["schema"]["properties"]["s"] == {"type": ["string", "null"], "enum": ["a", None]}


def test_swagger_20_form_data_becomes_a_typed_form_body() -> None:
    spec = {
        "swagger": "2.0",
        "info": {"title": "Chat", "version": "1"},
        "host": "chat.test",
        "basePath": "/api",
        "schemes": ["https"],
        "paths": {"/chat.post": {"post": {"operationId": "chat_post", "consumes": ["application/x-www-form-urlencoded"], "parameters": [
            {"name": "channel", "in": "formData", "type": "string", "required": True},
            {"name": "as_user", "in": "formData", "type": "boolean"},
            {"name": "ids", "in": "query", "type": "array", "items": {"type": "integer"}},
        ]}}},
    }
    _, ops = imported(spec)
    op = ops["chat_post"]
    assert op["url"] == "https://chat.test/api/chat.post"
    assert op["encoding"] == "form"
    assert op["schema"]["properties"]["as_user"] == {"type": "boolean"}
    assert op["schema"]["required"] == ["channel"]
    assert [a.get("style") for a in op["arguments"] if a["in"] == "query"] == ["comma"]


def test_an_oversized_schema_is_shrunk_to_fit_and_the_report_says_what_was_dropped() -> None:
    leaf = {"type": "object", "description": "A leaf. " * 20, "properties": {f"f{i}": {"type": "string", "description": "x" * 80} for i in range(30)}}
    schemas = {"Leaf": leaf, "Mid": {"type": "object", "properties": {f"m{i}": {"$ref": "#/components/schemas/Leaf"} for i in range(12)}}}
    body = {"type": "object", "properties": {f"p{i}": {"$ref": "#/components/schemas/Mid"} for i in range(6)}}
    spec = openapi({"/big": {"post": {"operationId": "big", "requestBody": {"content": {"application/json": {"schema": body}}}}}}, schemas)
    result, ops = imported(spec)
    assert compact_size(ops["big"]["schema"]) <= SCHEMA_LIMIT
    assert set(ops["big"]["schema"]["properties"]) == {f"p{i}" for i in range(6)}
    notes = outcome(result, "big").notes
    assert outcome(result, "big").status == "adapted"
    assert any("shrunk" in note for note in notes)


def test_a_defective_operation_is_skipped_with_its_reason_and_the_rest_are_written() -> None:
    spec = openapi({
        "/ok": {"get": {"operationId": "ok"}},
        "/bad": {"get": {"operationId": "bad", "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}}},
        "/any": {"post": {"operationId": "any_image", "requestBody": {"required": True, "content": {"image/*": {"schema": {"type": "string"}}}}}},
        "/raw": {"post": {"operationId": "raw", "requestBody": {"required": True, "content": {"image/png": {"schema": {"type": "string"}}}}}},
    })
    result, ops = imported(spec)
    assert sorted(ops) == ["ok", "raw"]
    assert {o.name: o.status for o in result.report.outcomes} == {"ok": "written", "bad": "skipped", "any_image": "skipped", "raw": "adapted"}
    assert result.report.totals() == {"operations": 4, "written": 1, "adapted": 1, "skipped": 2}
    assert (ops["raw"]["encoding"], ops["raw"]["content_type"]) == ("raw", "image/png")


def test_a_discriminator_pins_each_branch_with_a_const() -> None:
    schemas = {
        "Cat": {"type": "object", "properties": {"kind": {"type": "string"}, "meow": {"type": "boolean"}}},
        "Dog": {"type": "object", "properties": {"kind": {"type": "string"}, "bark": {"type": "boolean"}}},
    }
    pet = {"oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
           "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/components/schemas/Cat", "dog": "#/components/schemas/Dog"}}}
    spec = openapi({"/pets": {"post": {"operationId": "addPet", "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"pet": pet}}}}}}}}, schemas)
    _, ops = imported(spec)
    branches = ops["addPet"]["schema"]["properties"]["pet"]["oneOf"]
    pins = [b["allOf"][1]["properties"]["kind"]["const"] for b in branches]
    assert pins == ["cat", "dog"]


def test_all_of_objects_are_merged_into_one_object() -> None:
    schemas = {"Base": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}
    body = {"allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "properties": {"extra": {"type": "integer"}}}]}
    spec = openapi({"/m": {"post": {"operationId": "merge", "requestBody": {"content": {"application/json": {"schema": body}}}}}}, schemas)
    _, ops = imported(spec)
    assert _where(ops["merge"]) == {"extra": ("body", "extra"), "id": ("body", "id")}
    assert ops["merge"]["schema"]["required"] == ["id"]


def test_a_non_object_body_is_sent_whole_as_the_payload_argument() -> None:
    body = {"type": "array", "items": {"type": "string"}}
    spec = openapi({"/tags": {"put": {"operationId": "setTags", "requestBody": {"required": True, "content": {"application/json": {"schema": body}}}}}})
    _, ops = imported(spec)
    assert ops["setTags"]["payload"] == "body"
    assert ops["setTags"]["schema"]["properties"]["body"] == body


def test_credentials_are_reported_and_never_written() -> None:
    spec = openapi({"/me": {"get": {"operationId": "me", "parameters": [{"name": "Authorization", "in": "header", "required": True, "schema": {"type": "string"}}]}}})
    spec["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    result, ops = imported(spec)
    assert ops["me"]["arguments"] == []
    assert result.report.security == ["bearer (http bearer)"]
    assert not any("Authorization" in text for name, text in result.files.items() if name != "SKILL.md")


def test_refs_to_a_file_beside_the_spec_are_followed(tmp_path: Any) -> None:
    import json

    from skillhouse.openapi import import_openapi

    (tmp_path / "common.json").write_text(json.dumps({"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}}))
    spec = openapi({"/pets": {"post": {"operationId": "addPet", "requestBody": {"content": {"application/json": {"schema": {"$ref": "common.json#/Pet"}}}}}}})
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result = import_openapi(tmp_path / "spec.json")
    assert result.compiled is not None
    assert result.compiled.document["operations"][0]["schema"]["properties"] == {"name": {"type": "string"}}


def test_credential_parameters_are_never_offered_to_the_model() -> None:
    spec = openapi(
        {
            "/chat.post": {"post": {"operationId": "chat_post", "parameters": [
                {"name": "token", "in": "header", "required": True, "schema": {"type": "string"}},
                {"name": "channel", "in": "query", "required": True, "schema": {"type": "string"}},
            ]}},
            "/search": {"get": {"operationId": "search", "parameters": [
                {"name": "key", "in": "query", "required": True, "schema": {"type": "string"}},
                {"name": "q", "in": "query", "schema": {"type": "string"}},
            ]}},
            "/tokens/{token}": {"get": {"operationId": "get_token", "parameters": [
                {"name": "token", "in": "path", "required": True, "schema": {"type": "string"}},
            ]}},
        }
    )
    spec["components"] = {**spec.get("components", {}), "securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "key"}}}
    result, ops = imported(spec)
    assert set(ops["chat_post"]["schema"]["properties"]) == {"channel"}
    assert set(ops["search"]["schema"]["properties"]) == {"q"}
    assert set(ops["get_token"]["schema"]["properties"]) == {"token"}  # an id in the path, not a secret
    assert any("carries a credential" in note for note in outcome(result, "chat_post").notes)


def test_the_import_pauses_the_garbage_collector_and_leaves_it_as_it_found_it() -> None:
    import gc

    seen: list[bool] = []
    spec = openapi({"/things": {"get": {"operationId": "list", "responses": {"200": {"description": "ok"}}}}})
    original = wizard._convert

    def spying(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    with mock.patch.object(wizard, "_convert", spying):
        assert gc.isenabled()
        import_openapi(spec_from_data(spec))
        assert gc.isenabled() and seen == [False]  # paused during, running after
        gc.disable()
        try:
            import_openapi(spec_from_data(spec))
            assert not gc.isenabled()  # a caller's choice is kept
        finally:
            gc.enable()
        with mock.patch.object(wizard, "_compile_as_rendered", side_effect=RuntimeError("boom")), pytest.raises(RuntimeError):
            import_openapi(spec_from_data(spec))
        assert gc.isenabled()  # resumed when the import raises


def test_the_types_hold_one_string_per_distinct_description_and_type_name() -> None:
    # json.loads gives each repeat its own string; the types (held to the end of an import) share one
    text = json.dumps(openapi(
        {"/a": {"post": {"operationId": "a", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}},
         "/b": {"post": {"operationId": "b", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/B"}}}}}}},
        {"A": {"type": "object", "properties": {"x": {"type": "string", "description": "Shared text."}}},
         "B": {"type": "object", "properties": {"y": {"type": "string", "description": "Shared text."}}}},
    ))  # fmt: skip
    spec = json.loads(text)
    x, y = spec["components"]["schemas"]["A"]["properties"]["x"], spec["components"]["schemas"]["B"]["properties"]["y"]
    assert x["description"] is not y["description"] and x["type"] is not y["type"]
    result = import_openapi(spec_from_data(spec))
    assert result.compiled is not None
    types = result.compiled.document["types"]
    converted_x, converted_y = types["A"]["properties"]["x"], types["B"]["properties"]["y"]
    assert converted_x["description"] is converted_y["description"] and converted_x["type"] is converted_y["type"]


def test_a_lone_surrogate_in_a_schema_text_or_value_is_mended_and_the_operation_written(tmp_path: Any) -> None:
    # "\ud800" escapes in a JSON spec parse to lone surrogates, which no UTF-8 text (the release, a request) can hold
    body = {"type": "object", "properties": {
        "x": {"type": "string", "title": "T\ud800", "description": "bad \ud800 here", "enum": ["a\ud800", "b"], "default": "a\ud800",
              "example": {"k\udfff": "v\udc00"}},
    }}  # fmt: skip
    spec = openapi({"/a": {"post": {"operationId": "mend", "summary": "s \udc00",
                                    "requestBody": {"content": {"application/json": {"schema": body}}}}}})  # fmt: skip
    written = tmp_path / "spec.json"
    written.write_text(json.dumps(spec), encoding="ascii")  # the escapes as a spec file has them

    result = import_openapi(written)

    assert (outcome(result, "mend").status, result.compiled is not None) == ("written", True)
    schema = result.compiled.document["operations"][0]["schema"]
    x = schema["properties"]["x"]
    assert (x["title"], x["description"], x["enum"], x["default"]) == ("T?", "bad ? here", ["a?", "b"], "a?")
    assert x["examples"] == [{"k?": "v?"}]


def test_a_lone_surrogate_in_a_wire_name_or_pattern_skips_the_operation_with_why_and_the_others_are_written() -> None:
    spec = openapi({
        "/b": {"post": {"operationId": "badName", "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {"y\ud800": {"type": "string"}}}}}}}},
        "/c/{p\ud800}": {"get": {"operationId": "pathName", "parameters": [
            {"name": "p\ud800", "in": "path", "required": True, "schema": {"type": "string"}}]}},
        "/d": {"get": {"operationId": "badPattern", "parameters": [
            {"name": "q", "in": "query", "schema": {"type": "string", "pattern": "^\udc00$"}}]}},
        "/e": {"get": {"operationId": "fine"}},
    })  # fmt: skip

    result, ops = imported(spec)

    assert sorted(ops) == ["fine", "pathName"]  # a path variable is a placeholder: renamed, as any name a URL cannot hold
    assert ops["pathName"]["url"] == "https://api.test/v1/c/{p}"
    for name in ("badName", "badPattern"):
        skipped = outcome(result, name)
        assert skipped.status == "skipped" and skipped.error is None, skipped
        assert "lone surrogate" in skipped.notes[0]
