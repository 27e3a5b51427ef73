"""A spec read from a file drops each path item once its operations are converted; nothing else changes.

The import's memory peaks while every operation's files pile up beside the parsed spec, so path items
(most of many specs) are freed as they are done with. A reference that leads into ``paths`` (or to the
whole spec) after that reads the spec from its file again: these tests hold such imports to the import
of the same spec handed over as a document, where nothing is dropped.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.openapi.specs import openapi

from skillhouse.openapi import import_openapi, load_spec, wizard
from skillhouse.openapi.document import SpecDocument, SpecError

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


def test_a_spec_changed_on_disk_before_it_is_read_again_stops_the_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(_spec("#/paths/~1first/get/parameters/0")))

    def load_then_edit(path: Path, policy: Any = None) -> SpecDocument:
        document = load_spec(path, policy)
        spec.write_text(json.dumps(_spec("#/paths/~1first/get/parameters/0")).replace("At most", "No more than"))
        return document

    monkeypatch.setattr(wizard, "load_spec", load_then_edit)
    with pytest.raises(SpecError, match="changed while it was being imported"):
        import_openapi(spec)


def test_a_spec_read_from_a_pipe_keeps_its_path_items_and_imports_as_the_same_spec_handed_over(tmp_path: Path) -> None:
    text = json.dumps(_spec("#/paths/~1first/get/parameters/0"))
    (tmp_path / "spec.json").write_text(text)
    pipe = tmp_path / "spec.pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_text, args=(text,))
    writer.start()
    from_pipe = import_openapi(pipe)  # read once: a pipe cannot be read again for a reference into paths
    writer.join()
    handed = import_openapi(load_spec(tmp_path / "spec.json"))
    assert from_pipe.compiled is not None and handed.compiled is not None
    assert from_pipe.compiled.digest == handed.compiled.digest
    assert "limit" in from_pipe.files["second.md"]
