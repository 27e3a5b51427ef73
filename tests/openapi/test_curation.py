"""``curation.yaml``: applied on every import, kept across re-imports, and held against the spec at check."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.openapi.specs import imported, openapi
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir
from skillhouse.guest import InvalidArguments, build_request
from skillhouse.openapi import CurationRun, import_openapi, spec_from_data
from skillhouse.skill import ALL_CODES
from skillhouse.skill.curation import read_curation


def shop_spec() -> dict[str, Any]:
    account = {"name": "account", "in": "path", "required": True, "schema": {"type": "string"}}
    return openapi(
        {
            "/accounts/{account}/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List pets",
                    "parameters": [
                        account,
                        {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}},
                        {"name": "api-version", "in": "query", "required": True,
                         "schema": {"type": "string", "enum": ["2023-01", "2024-01"]}},
                        {"name": "X-Tenant", "in": "header", "schema": {"type": "string"}},
                    ],
                },
                "post": {
                    "operationId": "createPet",
                    "summary": "Create a pet",
                    "parameters": [account],
                    "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}},
                },
            },
            "/accounts/{account}/pets/{petId}": {
                "delete": {"summary": "Delete a pet", "parameters": [account, {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}]},
            },
            "/admin/reset": {"post": {"operationId": "resetEverything", "summary": "Reset the shop"}},
        },
        schemas={"NewPet": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}, "species": {"type": "string", "enum": ["cat", "dog"]}}}},
    )  # fmt: skip


OVERLAY = """\
operations:
  listPets:
    name: pets
    description: List the pets of the shop's account, newest first.
    arguments:
      account: {pin: acme}
      api_version: {pin: "2024-01"}
      X_Tenant: {pin: blue}
      limit: {default: 20, description: How many pets to return.}
  createPet:
    arguments:
      account: {pin: acme}
      species: {pin: cat}
  DELETE /accounts/{account}/pets/{petId}:
    consequential: Deleting a pet cannot be undone.
  resetEverything:
    hide: true
"""


def run(text: str) -> CurationRun:
    return CurationRun.of(*read_curation("shop/curation.yaml", text))


def test_an_overlay_renames_describes_pins_defaults_gates_and_hides() -> None:
    curation = run(OVERLAY)
    result, ops = imported(shop_spec(), name="shop", curation=curation)
    assert curation.problems == []
    assert sorted(ops) == ["createPet", "delete_accounts_account_pets_petId", "pets"]
    pets = ops["pets"]
    assert pets["tool_name"] == "shop_pets"
    assert pets["description"] == "List the pets of the shop's account, newest first."
    assert (pets["method"], pets["url"], pets["headers"]) == ("GET", "https://api.test/v1/accounts/acme/pets?api-version=2024-01", {"X-Tenant": "blue"})
    assert pets["schema"] == {
        "type": "object",
        "properties": {"limit": {"type": "integer", "maximum": 100, "description": "How many pets to return.", "default": 20}},
        "required": [],
        "additionalProperties": False,
    }
    assert [a["name"] for a in pets["arguments"]] == ["limit"]
    create = ops["createPet"]
    assert create["url"] == "https://api.test/v1/accounts/acme/pets"
    assert create["schema"]["properties"]["species"] == {"const": "cat"}
    assert create["schema"]["required"] == ["name", "species"]
    assert ops["delete_accounts_account_pets_petId"]["approval"] == {
        "matches": "DELETE /v1/accounts/{account}/pets/{petId}", "reason": "Deleting a pet cannot be undone."
    }
    assert result.compiled is not None and result.compiled.document["gates"] == []
    assert "resetEverything.md" not in result.files and "resetEverything" not in result.files["SKILL.md"]
    assert "- `pets`: List the pets of the shop's account, newest first." in result.files["SKILL.md"]
    assert result.report.curation == {
        "file": "shop/curation.yaml",
        "changes": {
            "pets": ["renamed from 'listPets'", "description replaced", 'argument \'account\' pinned to "acme" and removed from the tool',
                     'argument \'api_version\' pinned to "2024-01" and removed from the tool',
                     'argument \'X_Tenant\' pinned to "blue" and removed from the tool',
                     "argument 'limit' described", "argument 'limit' defaults to 20"],
            "createPet": ['argument \'account\' pinned to "acme" and removed from the tool',
                          'argument \'species\' pinned to "cat" (kept as const: body fields are sent from the call)'],
            "delete_accounts_account_pets_petId": ["consequential: calls wait for approval"],
        },
        "hidden": ["resetEverything"],
        "problems": [],
    }  # fmt: skip
    assert "curation.yaml: renamed from 'listPets'" in next(o for o in result.report.outcomes if o.name == "pets").notes


def test_pinned_arguments_leave_the_schema_and_are_always_in_the_request() -> None:
    _, ops = imported(shop_spec(), name="shop", curation=run(OVERLAY))
    assert build_request(ops["pets"], {"limit": 5}) == {
        "method": "GET",
        "url": "https://api.test/v1/accounts/acme/pets?api-version=2024-01&limit=5",
        "headers": {"X-Tenant": "blue"},
        "body": None,
    }
    # the overlay's default for limit fills a call that leaves it out, and a given value wins over it
    assert build_request(ops["pets"], {})["url"] == "https://api.test/v1/accounts/acme/pets?api-version=2024-01&limit=20"
    assert ops["pets"]["defaults"] == {"limit": 20}
    created = build_request(ops["createPet"], {"name": "Tom", "species": "cat"})
    assert json.loads(created["body"]) == {"name": "Tom", "species": "cat"}


def test_pinned_values_are_encoded_as_the_guest_encodes_arguments() -> None:
    overlay = "operations:\n  listPets:\n    arguments:\n      account: {pin: 'acme corp/ü'}\n"
    curation = run(overlay)
    result = import_openapi(spec_from_data(shop_spec()), name="shop", curation=curation)
    assert [str(p) for p in curation.problems] == [
        "shop/curation.yaml:4: invalid-curation: operations.listPets.arguments.account: a path parameter is pinned to a string "
        "or number that is not '', '.' or '..' and has no '/', '\\' or control characters"
    ]
    spaced = run("operations:\n  listPets:\n    arguments:\n      account: {pin: 'acme corp ü'}\n")
    _, ops = imported(shop_spec(), name="shop", curation=spaced)
    assert ops["listPets"]["url"] == "https://api.test/v1/accounts/acme%20corp%20%C3%BC/pets"
    assert result.compiled is not None


def test_problems_are_located_in_the_overlay_and_recorded_for_the_check() -> None:
    overlay = textwrap.dedent("""\
        operations:
          listPets:
            name: createPet
            arguments:
              limit: {default: 500}
              sort: {description: Order.}
              api_version: {pin: "2025-01"}
              account: {default: acme}
          deletePet:
            hide: true
          GET /nowhere:
            description: Gone.
        """)
    curation = run(overlay)
    result = import_openapi(spec_from_data(shop_spec()), name="shop", curation=curation)
    assert sorted((p.line, p.code) for p in curation.problems) == [
        (3, "invalid-curation"),   # the name of another operation
        (5, "invalid-curation"),   # a default the schema refuses
        (6, "stale-curation"),     # an argument the operation does not have
        (7, "invalid-curation"),   # a pin the schema refuses
        (8, "invalid-curation"),   # a default for a required argument
        (9, "stale-curation"),     # no such operationId
        (11, "stale-curation"),    # no such route
    ]  # fmt: skip
    messages = {p.line: p.message for p in curation.problems}
    assert messages[3] == ("operations.listPets: name 'createPet' is taken by POST /accounts/{account}/pets (createPet); "
                           "choose another name (or rename that operation too)")  # fmt: skip
    assert messages[5] == ("operations.listPets.arguments.limit: default 500 is not allowed by the argument's schema: "
                           "500 is greater than the maximum of 100")  # fmt: skip
    assert messages[6] == ("operations.listPets.arguments.sort: the operation has no argument 'sort'; "
                           "its arguments: X_Tenant, account, api_version, limit")  # fmt: skip
    assert messages[9].startswith("operations.deletePet: the spec has no operation 'deletePet'")
    record = json.loads(result.files["curation.applied.json"])
    assert sorted(p["line"] for p in record["problems"]) == [3, 5, 6, 7, 8, 9, 11]
    assert "curation.yaml: 0 operations curated, 0 hidden, 7 problems" in result.report.lines()


def test_overlay_schema_errors_carry_their_lines() -> None:
    text = textwrap.dedent("""\
        operations:
          listPets:
            nmae: pets
            hide: yes please
            arguments:
              limit: {pin: 2024-01-01}
              account: {pin: a, default: b}
          createPet: []
          "FETCH /pets":
            description: x
        extras: 1
        """)
    curation, errors = read_curation("shop/curation.yaml", text)
    assert [(e.line, e.code) for e in errors] == [
        (11, "invalid-curation"), (3, "invalid-curation"), (4, "invalid-curation"), (6, "invalid-curation"),
        (7, "invalid-curation"), (8, "invalid-curation"), (9, "invalid-curation"),
    ]  # fmt: skip
    assert errors[1].message == "operations.listPets: unknown key 'nmae' (did you mean 'name'?); allowed: name, description, hide, consequential, arguments"
    assert "quote them" in errors[3].message
    assert curation.entries == ()
    broken, problems = read_curation("shop/curation.yaml", "operations:\n  listPets: {name: [\n")
    assert [(p.line, p.code) for p in problems] == [(3, "invalid-curation")] and broken.entries == ()


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def test_reimport_keeps_the_overlay_and_holds_it_against_the_updated_spec(tmp_path: Path) -> None:
    skill = tmp_path / "out" / "shop"
    skill.mkdir(parents=True)
    (skill / "curation.yaml").write_text(OVERLAY)  # written before the first import: the directory takes it
    first = CliRunner().invoke(app, ["import-openapi", str(write_spec(tmp_path / "v1.yaml", shop_spec())),
                                     "--out", str(tmp_path / "out"), "--name", "shop"])  # fmt: skip
    assert first.exit_code == 0, first.output
    assert "curation.yaml: 3 operations curated, 1 hidden, 0 problems" in first.stderr
    compiled, errors = compile_dir(skill)
    assert errors == [] and compiled is not None

    updated = copy.deepcopy(shop_spec())
    del updated["paths"]["/accounts/{account}/pets/{petId}"]  # the gated operation is removed
    updated["paths"]["/accounts/{account}/pets"]["get"]["parameters"].append({"name": "sort", "in": "query", "schema": {"type": "string"}})
    again = CliRunner().invoke(app, ["import-openapi", str(write_spec(tmp_path / "v2.yaml", updated)),
                                     "--out", str(tmp_path / "out"), "--name", "shop"])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert (skill / "curation.yaml").read_text() == OVERLAY
    located = f"{skill}/curation.yaml:14: stale-curation: operations.DELETE /accounts/{{account}}/pets/{{petId}}: the spec has no operation"
    assert located in again.stderr
    assert "NOT passing check: curation.yaml has problems" in again.stderr
    assert not (skill / "delete_accounts_account_pets_petId.md").exists()

    # the changed operation is still curated: renamed, pinned, and its new argument offered
    pets = yaml.safe_load((skill / "pets.md").read_text().split("---")[1])["operation"]
    assert pets["url"] == "https://api.test/v1/accounts/acme/pets?api-version=2024-01"
    assert sorted(json.loads(pets["schema"])["properties"]) == ["limit", "sort"]

    checked = CliRunner().invoke(app, ["check", str(skill)])
    assert checked.exit_code == 1
    assert located in checked.stderr
    listed = CliRunner().invoke(app, ["tools", str(skill)])  # no release was cached for a refused package
    assert listed.exit_code == 1
    assert located in listed.stderr

    # fixing the overlay is not enough: it has to be applied by a re-import
    (skill / "curation.yaml").write_text(OVERLAY.replace("  DELETE /accounts/{account}/pets/{petId}:\n    consequential: Deleting a pet cannot be undone.\n", ""))
    _, errors = compile_dir(skill)
    assert [(Path(e.file).name, e.line, e.code) for e in errors] == [("curation.yaml", 1, "stale-curation")]
    assert "changed since the skill was imported" in errors[0].message
    fixed = CliRunner().invoke(app, ["import-openapi", str(tmp_path / "v2.yaml"), "--out", str(tmp_path / "out"), "--name", "shop"])
    assert fixed.exit_code == 0, fixed.output
    assert compile_dir(skill)[1] == []


def test_reimport_without_an_overlay_removes_the_record(tmp_path: Path) -> None:
    skill = tmp_path / "out" / "shop"
    skill.mkdir(parents=True)
    (skill / "curation.yaml").write_text(OVERLAY)
    spec = write_spec(tmp_path / "v1.yaml", shop_spec())
    args = ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "shop"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert (skill / "curation.applied.json").is_file()
    (skill / "curation.yaml").unlink()
    assert CliRunner().invoke(app, args).exit_code == 0
    assert not (skill / "curation.applied.json").exists()
    assert (skill / "listPets.md").is_file() and (skill / "resetEverything.md").is_file()


def test_an_overlay_added_after_the_import_is_refused_until_applied(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "v1.yaml", shop_spec())
    assert CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "shop"]).exit_code == 0
    skill = tmp_path / "out" / "shop"
    (skill / "curation.yaml").write_text(OVERLAY)
    _, errors = compile_dir(skill)
    assert [(Path(e.file).name, e.line, e.code) for e in errors] == [("curation.yaml", 1, "stale-curation")]
    assert "has no record of being applied" in errors[0].message


def test_a_directory_holding_other_files_is_still_refused(tmp_path: Path) -> None:
    skill = tmp_path / "out" / "shop"
    skill.mkdir(parents=True)
    (skill / "curation.yaml").write_text(OVERLAY)
    (skill / "notes.txt").write_text("mine")
    spec = write_spec(tmp_path / "v1.yaml", shop_spec())
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "shop"])
    assert result.exit_code == 2
    assert "error: out-not-a-skill" in result.stderr


SCALARS = st.one_of(st.text(max_size=12), st.integers(-(10**6), 10**6), st.booleans())
PIN_SPEC = openapi({"/accounts/{account}/items": {"get": {"operationId": "listItems", "parameters": [
    {"name": "account", "in": "path", "required": True, "schema": {"type": "string"}},
    {"name": "filter[kind]", "in": "query", "schema": {"type": "string"}},
    {"name": "X-Tenant", "in": "header", "schema": {"type": "string"}},
]}}})  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(account=st.text(max_size=12), kind=st.text(max_size=12), tenant=st.text(max_size=12))
def test_a_pinned_call_is_the_request_of_the_same_call_with_the_argument_given(account: str, kind: str, tenant: str) -> None:
    _, plain = imported(PIN_SPEC, name="shop")
    given_all = {"account": account, "filter_kind": kind, "X_Tenant": tenant}
    try:
        expected = build_request(plain["listItems"], given_all)
    except InvalidArguments:
        expected = None
    overlay = yaml.safe_dump({"operations": {"listItems": {"arguments": {k: {"pin": v} for k, v in given_all.items()}}}})
    curation = run(overlay)
    result = import_openapi(spec_from_data(PIN_SPEC), name="shop", curation=curation)
    if expected is None:  # a value no call may send cannot be pinned either: refused at its line
        assert curation.problems and all(p.code == "invalid-curation" for p in curation.problems)
        return
    assert curation.problems == [], [str(p) for p in curation.problems]
    assert result.compiled is not None
    (pinned,) = result.compiled.document["operations"]
    assert pinned["schema"]["properties"] == {}
    assert build_request(pinned, {}) == expected


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.one_of(st.none(), SCALARS, st.floats()), lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["name", "hide", "pin", "arguments", "listPets", "x"]), inner, max_size=3)),
    max_leaves=12))  # fmt: skip
def test_any_overlay_reads_to_entries_or_located_errors(value: Any) -> None:
    text = yaml.safe_dump({"operations": value})
    curation, errors = read_curation("shop/curation.yaml", text)
    lines = text.count("\n") + 1
    assert all(e.code in ALL_CODES and 1 <= e.line <= lines for e in errors)
    # whatever the overlay says, the import applies what it can and locates the rest, never raising
    curated = CurationRun.of(curation, errors)
    result = import_openapi(spec_from_data(shop_spec()), name="shop", curation=curated)
    assert all(p.code in ALL_CODES and 1 <= p.line <= lines for p in curated.problems)
    assert result.compiled is not None


def test_an_operation_may_take_the_name_of_a_hidden_one() -> None:
    overlay = "operations:\n  listPets:\n    name: resetEverything\n    arguments:\n      account: {pin: acme}\n  resetEverything:\n    hide: true\n"
    curation = run(overlay)
    result, ops = imported(shop_spec(), name="shop", curation=curation)
    assert curation.problems == []
    assert ops["resetEverything"]["method"] == "GET" and "account" not in ops["resetEverything"]["schema"]["properties"]
    record = {op["operationId"]: op for op in json.loads(result.files["curation.applied.json"])["operations"]}
    assert record["listPets"]["file"] == "resetEverything.md"
    assert record["listPets"]["arguments"] == ["account", "limit", "api_version", "X_Tenant"]
    assert record["resetEverything"]["file"] is None


def test_a_route_is_suggested_only_under_its_own_method() -> None:
    curation = run("operations:\n  PATCH /accounts/{account}/pets:\n    consequential: true\n  GET /accounts/{account}/pet:\n    consequential: true\n")
    import_openapi(spec_from_data(shop_spec()), name="shop", curation=curation)
    messages = [p.message for p in sorted(curation.problems)]
    assert "did you mean" not in messages[0]  # the POST and GET on that route are other operations
    assert "(did you mean 'GET /accounts/{account}/pets'?)" in messages[1]


PETSTORE_OVERLAY = """
operations:
  findPetsByStatus:
    name: pets_by_status
    arguments:
      status: {default: sold}
  getPetById:
    consequential: true
  updatePetWithForm:
    arguments:
      status: {pin: pending}
  deleteUser:
    hide: true
"""


def test_an_overlay_on_a_corpus_spec_gives_requests_the_original_spec_accepts() -> None:
    # the vendored petstore, curated: the default and the pin land in requests openapi-core accepts
    from tests.corpus import corpus_spec
    from tests.openapi.request_judge import judge_of

    from skillhouse.openapi import load_spec

    spec = load_spec(corpus_spec("petstore-v3.yaml"))
    curation = run(PETSTORE_OVERLAY)
    result = import_openapi(spec, name="petstore", curation=curation)
    assert curation.problems == [] and result.compiled is not None
    ops = {op["name"]: op for op in result.compiled.document["operations"]}
    assert "deleteUser" not in ops and ops["getPetById"]["approval"] is not None
    judge = judge_of(spec.root)
    by_status = build_request(ops["pets_by_status"], {})
    assert by_status["url"] == "https://petstore3.swagger.io/api/v3/pet/findByStatus?status=sold"
    pinned = build_request(ops["updatePetWithForm"], {"petId": 7, "name": "Rex"})
    assert pinned["url"] == "https://petstore3.swagger.io/api/v3/pet/7?status=pending&name=Rex"
    for request in (by_status, pinned, build_request(ops["pets_by_status"], {"status": "available"})):
        judge(request)
