"""Path parameter styles: ``label`` segments carry the ``.`` the guest writes; ``matrix`` is refused where it is
declared (its ``;name=value`` needs a raw ``;`` in the path, which the gateway refuses), in a skill and in an
OpenAPI import, so no tool sends a segment no server reads as declared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.guest.conftest import write_package

from skillhouse.compiler import compile_dir
from skillhouse.guest import build_request
from skillhouse.openapi import import_openapi

GET_PART = """
---
operation:
  method: GET
  url: https://api.test/items/{item}/parts/{part}
  style: {item: STYLE}
---
Get a part of an item.
"""


def _compiled(tmp_path: Path, style: str) -> tuple[Any, list[Any]]:
    return compile_dir(write_package(tmp_path, "styles", {"get_part.md": GET_PART.replace("STYLE", style)}))


def test_a_label_segment_is_sent_behind_its_dot_with_the_value_encoded(tmp_path: Path) -> None:
    result, errors = _compiled(tmp_path, "label")
    assert errors == [] and result is not None
    (operation,) = result.document["operations"]
    assert operation["arguments"][0] == {"name": "item", "in": "path", "wire": "item", "style": "label"}
    request = build_request(operation, {"item": "a b,c", "part": "7"})
    assert request["url"] == "https://api.test/items/.a%20b%2Cc/parts/7"


def test_simple_is_the_default_and_writes_nothing(tmp_path: Path) -> None:
    result, errors = _compiled(tmp_path, "simple")
    assert errors == [] and result is not None
    (operation,) = result.document["operations"]
    assert "style" not in operation["arguments"][0]
    assert build_request(operation, {"item": "5", "part": "7"})["url"] == "https://api.test/items/5/parts/7"


def test_a_matrix_path_parameter_is_refused_with_the_reason(tmp_path: Path) -> None:
    result, (error,) = _compiled(tmp_path / "a", "matrix")
    assert result is None and error.code == "invalid-operation"
    assert "raw ';'" in error.message and "'item'" in error.message
    _, (other,) = _compiled(tmp_path / "b", "form")
    assert "must be one of simple, label" in other.message


def _spec(tmp_path: Path, style: str) -> Path:
    spec = tmp_path / f"{style}.json"
    spec.write_text(json.dumps({
        "openapi": "3.0.3", "info": {"title": "Styles", "version": "1.0.0"},
        "servers": [{"url": "https://api.test"}],
        "paths": {"/items/{item}": {"get": {
            "operationId": "getItem", "responses": {"200": {"description": "ok"}},
            "parameters": [{"name": "item", "in": "path", "required": True, "style": style, "schema": {"type": "integer"}}],
        }}},
    }))  # fmt: skip
    return spec


def test_an_imported_label_parameter_keeps_its_type_and_its_dot(tmp_path: Path) -> None:
    result = import_openapi(_spec(tmp_path, "label"))
    assert result.compiled is not None
    (operation,) = result.compiled.document["operations"]
    assert operation["schema"]["properties"]["item"]["type"] == "integer"
    assert build_request(operation, {"item": 42})["url"] == "https://api.test/items/.42"


def test_an_imported_matrix_operation_is_skipped_with_its_reason(tmp_path: Path) -> None:
    result = import_openapi(_spec(tmp_path, "matrix"))
    (outcome,) = result.report.outcomes
    assert outcome.status == "skipped" and "uses style matrix" in outcome.notes[0]
