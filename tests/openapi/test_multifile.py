"""Multi-file specs: references across files and directories are followed, within the spec's tree.

The spec in tests/data/openapi/multifile (see its README) splits path items, an operation object,
parameters, bodies, responses and schemas over files that refer to each other; three of its
references are broken on purpose. A reference that cannot be followed is a located problem in the
report and its operation is skipped (or adapted, for a schema): never a tool that silently lost
inputs. The vendored corpus split into files must import to exactly the same tools.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.openapi.specs import SPECS, import_of, openapi, spec_of
from tests.openapi.split_spec import split_spec

from skillhouse.openapi import ImportResult, RefPolicy, RefProblem, import_openapi, load_spec
from skillhouse.openapi.references import (
    BAD_POINTER,
    CYCLE,
    MISSING_FILE,
    OUTSIDE_TREE,
    REMOTE_FAILED,
    REMOTE_REFUSED,
    UNREADABLE_FILE,
    UNSUPPORTED,
)

SHELF = Path(__file__).resolve().parents[1] / "data" / "openapi" / "multifile"
SHELF_SPEC = SHELF / "api" / "openapi.yaml"
MIRROR_URL = "https://schemas.shelf.test/parameters.yaml"


def operations(result: ImportResult) -> dict[str, dict[str, Any]]:
    assert result.compiled is not None, result.report.lines(verbose=True)
    return {op["name"]: op for op in result.compiled.document["operations"]}


def outcomes(result: ImportResult) -> dict[str, Any]:
    return {o.name: o for o in result.report.outcomes}


def codes_of(result: ImportResult) -> list[str]:
    return [p.code for p in result.report.problems]


def test_operations_parameters_and_schemas_in_other_files_and_directories_become_full_tools() -> None:
    result = import_openapi(SHELF_SPEC)
    ops = operations(result)
    assert sorted(ops) == ["createBook", "deleteBook", "getAuthor", "getBook", "listBooks", "listExports", "updateAuthor"]
    # createBook and listBooks take the X-Trace-Id header, whose `not` (no CR or LF) the strict and Gemini profiles adapt away
    with_path_arguments = {"deleteBook", "getAuthor", "getBook", "updateAuthor", "listExports"}
    assert {o.name: o.status for o in result.report.outcomes if o.name in ops} == {
        name: "written" if name in with_path_arguments else "adapted" for name in ops
    }
    # path item in paths/, its parameter in parameters/common.yaml, the operation's from parameters/paging.yaml,
    # whose schema is in schemas/limits.yaml
    assert ops["listBooks"]["url"] == "https://shelf.test/v1/books"
    assert ops["listBooks"]["schema"]["properties"] == {
        "limit": {"default": 20, "maximum": 100, "minimum": 1, "type": "integer"},
        "cursor": {"type": "string", "description": "Where the previous page ended"},
        # an identifier-safe name (names: maps it to the wire) that cannot hold CR or LF
        "X_Trace_Id": {"type": "string", "not": {"type": "string", "pattern": "[^\\t\\u0020-\\u007e]"}},
    }
    # the body in bodies/, its schema in schemas/, the author in another file, the country two directories down
    create = ops["createBook"]["schema"]
    assert create["required"] == ["author", "title"]  # id is readOnly: left out, and out of required
    address = create["properties"]["author"]["properties"]["address"]
    assert address["properties"]["country"] == {"enum": ["FR", "DE", "NL"], "type": "string"}
    # book -> author -> book: the cycle across files stops at a bare object
    assert create["properties"]["author"]["properties"]["books"]["items"]["properties"]["author"] == {"type": "object"}


def test_an_operation_in_its_own_file_keeps_its_operation_id_servers_and_local_references() -> None:
    ops = operations(import_openapi(SHELF_SPEC))
    # operations/get-book.yaml: its own server, the path item's parameter and its own
    assert ops["getBook"]["url"] == "https://read.shelf.test/v1/books/{bookId}"
    assert [a["name"] for a in ops["getBook"]["arguments"]] == ["bookId", "fields"]
    assert ops["getBook"]["schema"]["properties"]["bookId"] == {
        "type": "string",
        "pattern": "^[0-9]{13}$",
        # what every path argument gets: not empty, not a dot segment, no "/", "\\" or control character
        "minLength": 1,
        "not": {"anyOf": [{"enum": [".", ".."]}, {"type": "string", "pattern": "[/\\\\\\u0000-\\u001f\\u007f]"}]},
    }
    # operations/delete-book.yaml: '#/x-parameters/Reason' is in that file; its schema points back at the root file
    assert ops["deleteBook"]["schema"]["properties"]["reason"] == {"type": "string"}
    assert ops["deleteBook"]["schema"]["required"] == ["bookId", "reason"]
    # paths/exports.yaml: the path item's server, with its variable's default
    assert ops["listExports"]["url"] == "https://exports.shelf.test/v2/exports"
    # paths/authors.yaml#/AuthorItem: a path item under a pointer
    assert ops["updateAuthor"]["schema"]["required"] == ["authorId", "name"]


def test_references_out_of_the_tree_to_the_network_or_to_a_missing_file_are_located_problems() -> None:
    result = import_openapi(SHELF_SPEC)
    found = outcomes(result)
    for name, code, ref in (
        ("getReport", OUTSIDE_TREE, "../outside/region.yaml"),
        ("listMirrors", REMOTE_REFUSED, MIRROR_URL + "#/Mirror"),
        ("get_archive", MISSING_FILE, "operations/archive.yaml"),
    ):
        assert found[name].status == "skipped"
        (note,) = found[name].notes
        assert note.endswith(f"[{code}]") and f"$ref {ref!r}" in note and "openapi.yaml" in note
    assert codes_of(result) == [OUTSIDE_TREE, REMOTE_REFUSED, MISSING_FILE]
    problems = result.report.as_dict()["problems"]
    assert problems[0] == {
        "code": OUTSIDE_TREE,
        "file": "openapi.yaml",
        "at": "/paths/~1reports/get/parameters/0",
        "ref": "../outside/region.yaml",
        "message": "leads outside the spec's directory, to ../outside/region.yaml; allow its directory with --allow-ref-root DIR",
    }
    summary = "\n".join(result.report.summary_lines())
    assert "3 reference(s) could not be followed" in summary and "[ref-missing-file]" in summary


def test_an_allowed_root_and_a_fetcher_let_those_references_be_followed() -> None:
    fetched: list[str] = []

    def fetch(url: str) -> bytes:
        fetched.append(url)
        return b"Mirror:\n  name: mirror\n  in: query\n  schema: {$ref: 'kinds.yaml#/Kind'}\n" if url == MIRROR_URL else b"Kind: {type: string, enum: [ftp, https]}\n"

    result = import_openapi(SHELF_SPEC, refs=RefPolicy(roots=(SHELF / "outside",), fetch=fetch))
    ops = operations(result)
    assert ops["getReport"]["schema"]["properties"]["region"] == {"type": "string", "enum": ["eu", "us"]}
    # the remote document's relative reference is resolved against its URL
    assert ops["listMirrors"]["schema"]["properties"]["mirror"] == {"type": "string", "enum": ["ftp", "https"]}
    assert fetched == [MIRROR_URL, "https://schemas.shelf.test/kinds.yaml"]
    assert codes_of(result) == [MISSING_FILE]


def write_spec(tmp_path: Path, paths: dict[str, Any], files: dict[str, Any]) -> Path:
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(data if isinstance(data, str) else json.dumps(data))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi(paths)))
    return spec


def body_op(ref: str) -> dict[str, Any]:
    return {"post": {"operationId": "send", "requestBody": {"content": {"application/json": {"schema": {"$ref": ref}}}}}}


def param_op(ref: str) -> dict[str, Any]:
    return {"get": {"operationId": "look", "parameters": [{"$ref": ref}]}}


def test_a_remote_document_cannot_reach_local_files_and_a_failed_fetch_is_located(tmp_path: Path) -> None:
    def fetch(url: str) -> bytes:
        if url.endswith("broken.yaml"):
            raise OSError("connection refused")
        return b'P: {$ref: "file:///etc/passwd"}\n'

    spec = write_spec(tmp_path, {"/a": param_op("https://x.test/p.yaml#/P"), "/b": param_op("https://x.test/broken.yaml#/P")}, {})
    result = import_openapi(spec, refs=RefPolicy(fetch=fetch))
    assert [o.status for o in result.report.outcomes] == ["skipped", "skipped"]
    assert codes_of(result) == [UNSUPPORTED, REMOTE_FAILED]
    assert result.report.problems[0].file == "https://x.test/p.yaml"
    assert "connection refused" in result.report.problems[1].message


def test_a_symlink_out_of_the_tree_is_refused_like_the_path_it_leads_to(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "p.json").write_text(json.dumps({"name": "q", "in": "query"}))
    tree = tmp_path / "tree"
    tree.mkdir()
    os.symlink(outside / "p.json", tree / "p.json")
    spec = write_spec(tree, {"/a": param_op("p.json")}, {})
    result = import_openapi(spec)
    assert codes_of(result) == [OUTSIDE_TREE]
    assert outcomes(result)["look"].status == "skipped"


def test_unreadable_files_bad_pointers_and_cycles_are_located_problems(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        {"/a": param_op("bad.yaml"), "/b": param_op("params/p.json#/Nope"), "/c": param_op("loop/a.json")},
        {"bad.yaml": "name: [unclosed\n", "params/p.json": {"P": {"name": "p", "in": "query"}},
         "loop/a.json": {"$ref": "b.json"}, "loop/b.json": {"$ref": "a.json"}},
    )
    result = import_openapi(spec)
    assert codes_of(result) == [UNREADABLE_FILE, BAD_POINTER, CYCLE]
    assert result.report.problems[1].message == "points at nothing: params/p.json has no 'Nope' on the way to '/Nope'"
    assert [o.status for o in result.report.outcomes] == ["skipped", "skipped", "skipped"]


def test_a_path_item_that_cannot_be_read_is_one_skipped_entry_naming_the_reference(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {"/gone": {"$ref": "paths/gone.yaml"}, "/here": {"get": {"operationId": "here"}}}, {})
    result = import_openapi(spec)
    gone = result.report.outcomes[0]
    assert (gone.name, gone.method, gone.path, gone.status) == ("any_gone", "*", "/gone", "skipped")
    assert gone.notes[0].startswith("path item '/gone': spec.json#/paths/~1gone: $ref 'paths/gone.yaml' names the file paths/gone.yaml")
    assert sorted(operations(result)) == ["here"]


def test_a_broken_schema_reference_is_noted_on_every_operation_that_reaches_it(tmp_path: Path) -> None:
    # the type is converted once; the second operation reaching it must not read as faithful
    shared = {"Order": {"type": "object", "properties": {"item": {"$ref": "items.json#/Item"}}}}
    spec = write_spec(tmp_path, {"/a": body_op("shared.json#/Order"), "/b": {"put": body_op("shared.json#/Order")["post"] | {"operationId": "resend"}}},
                      {"shared.json": shared})
    result = import_openapi(spec)
    for name in ("send", "resend"):
        (note,) = outcomes(result)[name].notes
        assert note.startswith("shared.json: $ref 'items.json#/Item' names the file items.json") and "accepts any value" in note
        assert outcomes(result)[name].status == "adapted"
    assert codes_of(result) == [MISSING_FILE]


def test_a_broken_response_reference_is_reported_and_the_tool_is_still_written(tmp_path: Path) -> None:
    op = {"get": {"operationId": "look", "responses": {"200": {"$ref": "responses.json#/Ok"}}}}
    result = import_openapi(write_spec(tmp_path, {"/a": op}, {}))
    (note,) = outcomes(result)["look"].notes
    assert note.startswith("response '200': spec.json#/paths/~1a/get/responses/200: $ref 'responses.json#/Ok'")
    assert note.endswith("(responses are not used by the tool)")
    assert sorted(operations(result)) == ["look"]


def test_a_file_reference_in_a_spec_given_as_data_has_no_directory_to_read_from() -> None:
    from skillhouse.openapi import spec_from_data

    result = import_openapi(spec_from_data(openapi({"/a": param_op("p.json")})))
    assert codes_of(result) == [UNSUPPORTED]


SPLITTABLE = [p for p in SPECS if spec_of(p).version != "2.0"]


@pytest.mark.parametrize("path", SPLITTABLE, ids=[p.name for p in SPLITTABLE])
def test_each_corpus_spec_split_into_files_imports_to_exactly_the_same_tools(path: Path) -> None:
    with tempfile.TemporaryDirectory() as directory:
        split = import_openapi(split_spec(spec_of(path).root, Path(directory), ".json"))
    single = import_of(path)
    assert split.report.problems == []
    assert operations(split) == operations(single)
    assert [(o.name, o.status) for o in split.report.outcomes] == [(o.name, o.status) for o in single.report.outcomes]


def test_problems_are_those_of_the_operations_selected(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {"/a": {"get": {"$ref": "ops/a.json"}}, "/b": param_op("b.json")}, {})
    assert codes_of(import_openapi(spec, exclude=["look"])) == [MISSING_FILE]
    assert codes_of(import_openapi(spec, include=["look"])) == [MISSING_FILE]
    assert [p.ref for p in import_openapi(spec).report.problems] == ["ops/a.json", "b.json"]


def test_a_relative_server_of_an_operation_or_path_is_taken_from_the_spec_server() -> None:
    from skillhouse.openapi import spec_from_data

    spec = openapi({
        "/a": {"get": {"operationId": "onV2", "servers": [{"url": "/v2"}]}},
        "/b": {"servers": [{"url": "https://other.test/x/"}], "get": {"operationId": "elsewhere"}},
    })  # fmt: skip
    result = import_openapi(spec_from_data(spec))
    ops = operations(result)
    assert (ops["onV2"]["url"], ops["elsewhere"]["url"]) == ("https://api.test/v2/a", "https://other.test/x/b")
    assert outcomes(result)["onV2"].notes == ("the operation's server '/v2' is relative; taken from the spec's server as https://api.test/v2",)


def test_a_credential_parameter_is_never_offered_when_its_security_scheme_is_in_another_file(tmp_path: Path) -> None:
    spec = openapi({"/a": {"get": {"operationId": "look", "parameters": [
        {"name": "key", "in": "query", "required": True, "schema": {"type": "string"}},
        {"name": "q", "in": "query", "schema": {"type": "string"}}]}}})  # fmt: skip
    spec["components"]["securitySchemes"] = {"k": {"$ref": "security/key.json"}}
    (tmp_path / "security").mkdir()
    (tmp_path / "security" / "key.json").write_text(json.dumps({"type": "apiKey", "in": "query", "name": "key"}))
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result = import_openapi(tmp_path / "spec.json")
    assert list(operations(result)["look"]["schema"]["properties"]) == ["q"]
    assert result.report.security == ["k (apiKey query key)"]


def test_a_missing_file_met_from_two_files_is_located_in_each(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        {"/a": param_op("gone.json"), "/b": {"get": {"$ref": "ops/b.json"}}},
        {"ops/b.json": {"operationId": "b", "parameters": [{"$ref": "../gone.json"}]}},
    )
    result = import_openapi(spec)
    assert [(p.file, p.at, p.ref, p.code) for p in result.report.problems] == [
        ("spec.json", "/paths/~1a/get/parameters/0", "gone.json", MISSING_FILE),
        ("ops/b.json", "/parameters/0", "../gone.json", MISSING_FILE),
    ]


# pieces of references, joined: separators, dot segments, escapes, schemes, the tree's own file, the file outside it
REF_PIECES = st.sampled_from(["a", "b.json", "/", ".", "..", "#", "#/", "x", "~1", "~0", "%2e%2e", "%00", "\x00", "\\", ":", " ",
                              "http://", "file:", "C:", "/etc/passwd", "../secret.json", "a/b.json", "spec.json"])
REF_TEXT = st.lists(REF_PIECES, max_size=8).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ref=REF_TEXT | st.text(max_size=40))
def test_any_reference_text_resolves_or_is_a_located_problem_and_never_reads_outside_the_tree(tmp_path: Path, ref: str) -> None:
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True, exist_ok=True)
    (tree / "a" / "b.json").write_text(json.dumps({"x": {"type": "string"}}))
    (tmp_path / "secret.json").write_text("{}")
    spec = write_spec(tree, {"/a": param_op(ref)}, {})
    document = load_spec(spec)
    found = document.locate(ref, "")
    if isinstance(found, RefProblem):
        assert found.code.startswith("ref-") and found.ref == ref
    for key in document.files:
        assert (tree / key).resolve().is_relative_to(tree.resolve())
    # and the import around it: the operation is written or skipped with a reason, nothing raises
    (result,) = import_openapi(document).report.outcomes
    assert result.status == "written" or result.notes
