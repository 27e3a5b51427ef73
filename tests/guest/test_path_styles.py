"""Path parameter styles: ``label`` segments carry the ``.`` the guest writes; ``matrix`` segments are
``;name=value`` as OpenAPI (RFC 6570 ``{;name}``, ``{;name*}``) writes them, every value percent-encoded so
that no ``;``, ``=``, ``,`` or ``/`` inside one spells another parameter or segment, in a skill and in an
OpenAPI import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.guest.conftest import write_package

from skillhouse.compiler import compile_dir
from skillhouse.guest import InvalidArguments, build_request
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


def test_a_matrix_segment_is_the_parameter_name_and_its_encoded_value(tmp_path: Path) -> None:
    result, errors = _compiled(tmp_path, "matrix")
    assert errors == [] and result is not None
    (operation,) = result.document["operations"]
    assert operation["arguments"][0] == {"name": "item", "in": "path", "wire": "item", "style": "matrix"}
    assert build_request(operation, {"item": "5", "part": "7"})["url"] == "https://api.test/items/;item=5/parts/7"
    assert build_request(operation, {"item": "", "part": "7"})["url"] == "https://api.test/items/;item/parts/7"
    sneaky = build_request(operation, {"item": "1;part=2,x=..", "part": "7"})["url"]
    assert sneaky == "https://api.test/items/;item=1%3Bpart%3D2%2Cx%3D../parts/7"


MATRIX_SCHEMA = """
---
operation:
  method: GET
  url: https://api.test/items/{item}
  style: {item: matrix}
  EXPLODE
  schema: |
    {"type": "object", "properties": {"item": ITEM}, "required": ["item"], "additionalProperties": false}
---
Get items.
"""
LIST = '{"type": "array", "items": {"type": "string"}}'
OBJECT = '{"type": "object", "additionalProperties": {"type": "string"}}'


def _matrix_operation(tmp_path: Path, item: str, explode: bool) -> Any:
    text = MATRIX_SCHEMA.replace("ITEM", item).replace("EXPLODE", "explode: [item]" if explode else "")
    result, errors = compile_dir(write_package(tmp_path, "styles", {"get_items.md": text}))
    assert errors == [] and result is not None
    (operation,) = result.document["operations"]
    return operation


@pytest.mark.parametrize(
    ("item", "explode", "value", "segment"),
    [(LIST, False, ["3", "4", "5"], ";item=3,4,5"), (LIST, True, ["3", "4", "5"], ";item=3;item=4;item=5"),
     (LIST, False, ["a,b", "c"], ";item=a%2Cb,c"), (LIST, True, ["", "a;item=b"], ";item;item=a%3Bitem%3Db"),
     (LIST, False, [""], ";item="),
     (OBJECT, False, {"role": "admin", "firstName": "Alex"}, ";item=firstName,Alex,role,admin"),
     (OBJECT, True, {"role": "admin", "firstName": "Alex"}, ";firstName=Alex;role=admin"),
     (OBJECT, True, {"a=b": "", "c": "d,e"}, ";a%3Db;c=d%2Ce"), (OBJECT, False, {"k": "v;w"}, ";item=k,v%3Bw")],
)  # fmt: skip
def test_a_matrix_list_or_object_is_written_as_openapi_says(
    tmp_path: Path, item: str, explode: bool, value: Any, segment: str
) -> None:
    operation = _matrix_operation(tmp_path, item, explode)
    assert operation["arguments"][0].get("explode", False) is explode
    assert build_request(operation, {"item": value})["url"] == "https://api.test/items/" + segment


@pytest.mark.parametrize(
    ("item", "explode", "value"),
    [(LIST, False, []), (LIST, True, ["a/b"]), (OBJECT, False, {}), (OBJECT, True, {"": "x"}), (OBJECT, False, {"a": "x\\y"}),
     ('{"type": "string"}', False, "a/b"), ('{"type": "string"}', False, "line\nbreak"), ('{"type": "array"}', False, [["a"]]),
     ('{"type": "object"}', True, {"a": {"b": "c"}}), ("{}", False, {"a": "/"})],
)  # fmt: skip
def test_a_matrix_value_the_gateway_would_refuse_is_refused_by_the_schema_and_the_guest(
    tmp_path: Path, item: str, explode: bool, value: Any
) -> None:
    operation = _matrix_operation(tmp_path, item, explode)
    assert Draft202012Validator(operation["schema"]).is_valid({"item": value}) is False
    with pytest.raises(InvalidArguments) as refused:
        build_request(operation, {"item": value})
    assert [v.path for v in refused.value.violations] == ["$.item"]


def test_explode_names_a_matrix_parameter_and_matrix_takes_a_whole_segment(tmp_path: Path) -> None:
    text = MATRIX_SCHEMA.replace("ITEM", '{"type": "string"}').replace("EXPLODE", "explode: [item]").replace("style: {item: matrix}", "")
    _, (error,) = compile_dir(write_package(tmp_path / "a", "styles", {"get_items.md": text}))
    assert error.code == "unknown-qualifier" and "explode" in error.message
    text = MATRIX_SCHEMA.replace("ITEM", '{"type": "string"}').replace("EXPLODE", "").replace("{item}", "{item}.json")
    _, (error,) = compile_dir(write_package(tmp_path / "b", "styles", {"get_items.md": text}))
    assert error.code == "path-parameter" and "whole segment" in error.message
    _, (other,) = _compiled(tmp_path / "c", "form")
    assert "must be one of simple, label, matrix" in other.message
    _, (listed,) = compile_dir(write_package(tmp_path / "d", "styles", {"get_items.md": MATRIX_SCHEMA.replace("ITEM", LIST)
                               .replace("EXPLODE", "").replace("style: {item: matrix}", "")}))  # fmt: skip
    assert listed.code == "path-parameter" and "unless its style is matrix" in listed.message


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


def test_an_imported_matrix_parameter_keeps_its_type_and_its_name(tmp_path: Path) -> None:
    result = import_openapi(_spec(tmp_path, "matrix"))
    assert result.compiled is not None
    (operation,) = result.compiled.document["operations"]
    assert operation["schema"]["properties"]["item"]["type"] == "integer"
    assert build_request(operation, {"item": 42})["url"] == "https://api.test/items/;item=42"
