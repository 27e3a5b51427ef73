"""What is the same for every operation of a spec is read once per import: the result is what reading
it for each operation gives, a problem met on the way included."""

from __future__ import annotations

from typing import Any

from tests.openapi.specs import openapi

from skillhouse.openapi import import_openapi, spec_from_data


def _spec(schemes: dict[str, Any]) -> dict[str, Any]:
    params = [{"name": "api_token", "in": "query", "schema": {"type": "string"}}, {"name": "q", "in": "query", "schema": {"type": "string"}}]
    spec = openapi({f"/things/{n}": {"get": {"operationId": f"get{n}", "parameters": params}} for n in range(3)})
    spec["components"]["securitySchemes"] = schemes
    return spec


def test_an_api_key_parameter_is_dropped_from_every_operation() -> None:
    result = import_openapi(spec_from_data(_spec({"key": {"type": "apiKey", "in": "query", "name": "API_TOKEN"}})))
    assert [o.status for o in result.report.outcomes] == ["adapted"] * 3
    for outcome in result.report.outcomes:
        assert any("'api_token' carries a credential" in note for note in outcome.notes)
    assert result.compiled is not None
    for op in result.compiled.document["operations"]:
        assert list(op["schema"]["properties"]) == ["q"]


def test_a_scheme_that_cannot_be_read_is_met_by_every_operation() -> None:
    document = spec_from_data(_spec({"key": {"$ref": "#/components/securitySchemes/missing"}}))
    result = import_openapi(document)
    assert result.compiled is not None
    missing = [p for p in document.problems if "missing" in p.ref]
    # once for the report's scheme list, once for the credential templates, once per operation built
    assert len(missing) == 2 + 3
    assert len({p for p in result.report.problems if "missing" in p.ref}) == 1


def test_without_filters_every_operation_is_selected_and_with_them_each_is_matched() -> None:
    spec = _spec({})
    spec["paths"]["/things/1"]["get"]["tags"] = ["odd"]
    assert [o.name for o in import_openapi(spec_from_data(spec)).report.outcomes] == ["get0", "get1", "get2"]
    # filters given as generators are read once, for every operation
    picked = import_openapi(spec_from_data(spec), include=(p for p in ["get*"]), exclude=(p for p in ["tag:odd"]))
    assert [o.name for o in picked.report.outcomes] == ["get0", "get2"]
    assert picked.report.filtered == 1
    assert [o.name for o in import_openapi(spec_from_data(spec), include=["GET /things/2"]).report.outcomes] == ["get2"]
