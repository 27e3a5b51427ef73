"""A reference in place of a path item, an operation, a parameter or a request body is followed, and one
that cannot be is located by its JSON pointer; places that are not references are read as they are
(their pointers are spelled out only for a reference)."""

from __future__ import annotations

from typing import Any

from skillhouse.openapi import import_openapi, spec_from_data


def _spec() -> dict[str, Any]:
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": {"x": {"type": "string"}}}}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://x.test"}],
        "paths": {
            "/a/{id}": {"parameters": [{"$ref": "#/components/parameters/Nope"}], "get": {"operationId": "getA"}},
            "/b": {"post": {"operationId": "postB", "requestBody": {"$ref": "#/components/requestBodies/Gone"}}},
            "/c": {"$ref": "#/components/pathItems/Missing"},
            "/d/~x": {"get": {"$ref": "#/components/operations/Absent"}},
            "/e": {
                "get": {"operationId": "getE", "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}, {"$ref": "#/components/parameters/Q"}]},
                "put": {"operationId": "putE", "requestBody": {"$ref": "#/components/requestBodies/Body"}},
            },
            "/f": {"$ref": "#/components/x-paths/F"},
        },
        "components": {
            "schemas": {},
            "parameters": {"Q": {"name": "limit", "in": "query", "schema": {"type": "integer"}}},
            "requestBodies": {"Body": body},
            "x-paths": {"F": {"get": {"operationId": "getF", "parameters": [{"$ref": "#/components/parameters/Q"}]}}},
        },
    }


def test_references_that_fail_are_located_and_the_others_followed() -> None:
    document = spec_from_data(_spec())
    result = import_openapi(document)
    statuses = {o.name: o.status for o in result.report.outcomes}
    assert statuses == {"getA": "skipped", "postB": "skipped", "any_c": "skipped", "get_d_x": "skipped", "getE": "written", "putE": "written", "getF": "written"}
    assert [(p.code, p.at, p.ref) for p in document.problems] == [
        ("ref-bad-pointer", "/paths/~1a~1{id}/parameters/0", "#/components/parameters/Nope"),
        ("ref-bad-pointer", "/paths/~1b/post/requestBody", "#/components/requestBodies/Gone"),
        ("ref-bad-pointer", "/paths/~1c", "#/components/pathItems/Missing"),
        ("ref-bad-pointer", "/paths/~1d~1~0x/get", "#/components/operations/Absent"),
    ]
    notes = {o.name: o.notes[0].split(":")[0] for o in result.report.outcomes if o.status == "skipped"}
    assert notes == {"getA": "path item parameter 1", "postB": "request body", "any_c": "path item '/c'", "get_d_x": "operation GET /d/~x"}
    assert result.compiled is not None
    schemas = {op["name"]: op["schema"]["properties"] for op in result.compiled.document["operations"]}
    assert schemas == {"getE": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "putE": {"x": {"type": "string"}}, "getF": {"limit": {"type": "integer"}}}
