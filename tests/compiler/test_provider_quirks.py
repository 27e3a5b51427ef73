"""Each provider's quirks, each a rule in the compatibility report per tool with its reason: Gemini's empty
enum values, free-form object bodies and argument names; strict mode's inherent limit; OpenAI's 128 tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.compiler.provider_limits import problems
from tests.openapi.specs import SPECS, import_of, imported, openapi
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import neutral_tool
from skillhouse.compiler.profiles import adapt, compatibility_report, provider_tools
from skillhouse.openapi import import_openapi, spec_from_data

# A Kubernetes-style PATCH: the body is `io.k8s.apimachinery.pkg.apis.meta.v1.Patch`, an object that
# lists no properties (any JSON merge patch).
KUBERNETES_PATCH = openapi(
    {
        "/api/v1/namespaces/{namespace}/configmaps/{name}": {
            "patch": {
                "operationId": "patchNamespacedConfigMap",
                "parameters": [
                    {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "dryRun", "in": "query", "schema": {"type": "string", "enum": ["", "All"]}},
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/Patch"}}},
                },
                "responses": {"200": {"description": "OK"}},
            }
        }
    },
    schemas={"Patch": {"type": "object", "description": "A JSON merge patch of the object."}},
)


def _tools(spec: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    result, operations = imported(spec)
    assert result.compiled is not None
    return result.compiled.document["compatibility"], [neutral_tool(op) for op in operations.values()]


def test_a_free_form_object_body_goes_to_gemini_as_json_schema_and_strict_mode_says_why_it_cannot() -> None:
    report, tools = _tools(KUBERNETES_PATCH)
    (tool,) = tools
    gemini = adapt(tool, "gemini")
    assert gemini.tool is not None and "parameters" not in gemini.tool
    sent = gemini.tool["parametersJsonSchema"]
    assert sent["properties"]["body"]["type"] == "object" and sent["required"] == tool["parameters"]["required"]
    name = tool["name"]
    verdict = report["profiles"]["gemini"][name]
    assert verdict["status"] == "adapted"
    assert verdict["changes"][0]["path"] == "/parameters"
    assert "parametersJsonSchema" in verdict["changes"][0]["change"]
    assert "/parameters/properties/body" in verdict["changes"][0]["change"]
    strict = report["profiles"]["openai-strict"][name]
    assert strict["status"] == "refused"
    assert "/parameters/properties/body" in strict["reason"] and "inherent limit of strict mode" in strict["reason"]
    assert report["profiles"]["openai"][name]["status"] == "ok"
    assert problems("gemini", provider_tools(tools, "gemini")) == []


def test_gemini_never_gets_an_empty_string_among_enum_values() -> None:
    report, tools = _tools(KUBERNETES_PATCH)
    (tool,) = tools
    sent = adapt(tool, "gemini").tool
    assert sent is not None
    assert sent["parametersJsonSchema"]["properties"]["dryRun"]["enum"] == ["All"]
    assert '""' in sent["parametersJsonSchema"]["properties"]["dryRun"]["description"]
    changes = report["profiles"]["gemini"][tool["name"]]["changes"]
    assert {"path": "/parameters/properties/dryRun/enum", "change": changes[1]["change"]} in changes
    assert "empty enum value" in changes[1]["change"]
    # the declaration is untouched: the guest still accepts the empty string
    assert tool["parameters"]["properties"]["dryRun"]["enum"] == ["", "All"]


def test_an_empty_string_enum_in_gemini_s_schema_subset_moves_to_the_description() -> None:
    tool = {
        "name": "list_things",
        "description": "List.",
        "parameters": {
            "type": "object",
            "properties": {
                "order": {"type": "string", "enum": ["", "asc", "desc"]},
                "only": {"type": "string", "enum": [""]},
            },
            "additionalProperties": False,
        },
    }
    adaptation = adapt(tool, "gemini")
    assert adaptation.tool is not None
    properties = adaptation.tool["parameters"]["properties"]
    assert properties["order"] == {
        "type": "string",
        "enum": ["asc", "desc"],
        "description": 'The empty string "" is also accepted.',
    }
    assert properties["only"] == {"type": "string", "description": 'The empty string "" is also accepted.'}
    assert [c["path"] for c in adaptation.changes][:2] == [
        "/parameters/properties/order/enum",
        "/parameters/properties/only/enum",
    ]


def test_wire_names_gemini_refuses_are_mapped_through_names_by_the_wizard() -> None:
    spec = openapi(
        {
            "/things": {
                "get": {
                    "operationId": "listThings",
                    "parameters": [
                        {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
                        {"name": "page.size", "in": "query", "schema": {"type": "integer"}},
                        {"name": "sort-by", "in": "query", "schema": {"type": "string"}},
                    ],
                    "responses": {"200": {"description": "OK"}},
                }
            }
        }
    )
    result, operations = imported(spec)
    operation = operations["listThings"]
    assert [(a["name"], a["wire"]) for a in operation["arguments"]] == [
        ("page_size", "page.size"),
        ("sort_by", "sort-by"),
        ("X_Request_Id", "X-Request-Id"),
    ]
    assert "names:" in result.files["listThings.md"]
    assert adapt(neutral_tool(operation), "gemini").status != "refused"


def test_a_hand_written_argument_name_gemini_refuses_is_refused_for_gemini_alone_with_the_fix() -> None:
    tool = {
        "name": "get_thing",
        "description": "Get.",
        "parameters": {"type": "object", "properties": {"thing-id": {"type": "string"}}, "required": ["thing-id"]},
    }
    verdict = adapt(tool, "gemini").report()
    assert verdict["status"] == "refused"
    assert "'thing-id'" in verdict["reason"] and "names:" in verdict["reason"]
    assert {adapt(tool, p).status for p in ("openai", "anthropic", "bedrock", "mcp")} == {"ok"}


def _many(count: int) -> list[dict[str, Any]]:
    return [
        {
            "name": f"op_{i}",
            "description": "Op.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": False},
        }
        for i in range(count)
    ]


def test_an_openai_listing_over_128_tools_is_flagged_with_the_deferred_form() -> None:
    assert "listings" not in compatibility_report(_many(128))
    listings = compatibility_report(_many(129))["listings"]
    assert set(listings) == {"openai", "openai-strict"}
    assert listings["openai"]["tools"] == 129
    assert "128" in listings["openai"]["problem"] and "--deferred" in listings["openai"]["problem"]


def _package_of(spec: dict[str, Any], out: Path) -> Path:
    result = import_openapi(spec_from_data(spec))
    assert result.compiled is not None
    for name, text in result.files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    return out


def test_the_cli_flags_an_openai_listing_over_128_tools_and_not_its_deferred_form(tmp_path: Path) -> None:
    paths = {
        f"/things{i}": {"get": {"operationId": f"thing{i}", "responses": {"200": {"description": "OK"}}}}
        for i in range(130)
    }
    package = _package_of(openapi(paths), tmp_path / "test-api")
    runner = CliRunner()
    plain = runner.invoke(app, ["tools", str(package), "--provider", "openai"])
    assert plain.exit_code == 0, plain.output
    assert len(json.loads(plain.stdout)) == 130
    assert "130 tools" in plain.stderr and "--deferred" in plain.stderr
    deferred = runner.invoke(app, ["tools", str(package), "--provider", "openai", "--deferred"])
    assert deferred.exit_code == 0, deferred.output
    assert "128" not in deferred.stderr


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_gemini_refuses_no_corpus_tool_and_every_rule_it_applied_has_a_reason(path: Path) -> None:
    result = import_of(path)
    assert result.compiled is not None
    report = result.compiled.document["compatibility"]
    for name, verdict in report["profiles"]["gemini"].items():
        assert verdict["status"] != "refused", (name, verdict)
        assert all(change["change"] for change in verdict.get("changes", []))
    offered = sum(1 for v in report["profiles"]["openai"].values() if v["status"] != "refused")
    assert ("openai" in report.get("listings", {})) == (offered > 128)


def test_strict_nullable_extends_an_enum_list_and_leaves_a_malformed_enum_to_the_metaschema() -> None:
    from skillhouse.compiler.profiles.strict import nullable

    assert nullable({"type": "string", "enum": ["a"]}) == {"type": ["string", "null"], "enum": ["a", None]}
    assert nullable({"enum": ["a", None]}) == {"enum": ["a", None]}
    for malformed in ("", "ab", {"a": 1}, 3):  # not a list: no TypeError, nothing added to it
        assert nullable({"type": "string", "enum": malformed}) == {"type": ["string", "null"], "enum": malformed}
