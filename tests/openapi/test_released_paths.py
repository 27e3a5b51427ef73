"""A spec read from a file drops each path item once its operations are converted; nothing else changes.

The import's memory peaks while every operation's files pile up beside the parsed spec, so path items
(most of many specs) are freed as they are done with. A reference that leads into ``paths`` (or to the
whole spec) after that reads the spec from its file again: these tests hold such imports to the import
of the same spec handed over as a document, where nothing is dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.openapi.specs import openapi

from skillhouse.openapi import import_openapi, load_spec
from skillhouse.openapi.document import SpecDocument

QUERY = {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}, "description": "At most this many."}
BODY = {"content": {"application/json": {"schema": {"type": "object", "properties": {"note": {"type": "string"}}}}}}


def _spec(later_ref: str) -> dict[str, Any]:
    return openapi(
        {
            "/first": {"get": {"operationId": "first", "parameters": [QUERY]}, "post": {"operationId": "make", "requestBody": BODY}},
            "/second": {"get": {"operationId": "second", "parameters": [{"$ref": later_ref}]}},
            "/third": {"post": {"operationId": "third", "requestBody": {"$ref": "#/paths/~1first/post/requestBody"}}},
        }
    )


@pytest.mark.parametrize("later_ref", ["#/paths/~1first/get/parameters/0", "#/paths/%7E1first/get/parameters/0", "#/paths"])
def test_a_reference_into_a_dropped_path_item_finds_what_it_always_would(tmp_path: Path, later_ref: str) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(_spec(later_ref)))
    from_file = import_openapi(spec)
    handed = import_openapi(load_spec(spec))
    assert from_file.files == handed.files
    assert {**from_file.report.as_dict(), "spec": "?"} == {**handed.report.as_dict(), "spec": "?"}  # labelled by path or "spec"
    assert from_file.compiled is not None and handed.compiled is not None
    assert from_file.compiled.digest == handed.compiled.digest
    if later_ref != "#/paths":
        assert "limit" in from_file.files["second.md"] and "note" in from_file.files["third.md"]


def test_path_items_are_dropped_from_a_spec_read_from_its_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({"/a": {"get": {"operationId": "a"}}, "/b": {"get": {"operationId": "b"}, "put": {"operationId": "c"}}})))
    released: list[str] = []
    original = SpecDocument.release_path_item
    monkeypatch.setattr(SpecDocument, "release_path_item", lambda self, path: (released.append(path), original(self, path)))
    import_openapi(spec)
    assert released == ["/a", "/b"]  # each once, after its last operation
    released.clear()
    document = load_spec(spec)
    import_openapi(document)  # a caller's document is left whole
    assert released == [] and set(document.root["paths"]) == {"/a", "/b"}
