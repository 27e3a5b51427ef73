"""``style: {field: deepObject}`` on a field of a form body: lists and objects in brackets, list items indexed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guest.conftest import write_package

from skillhouse.compiler import compile_dir
from skillhouse.guest import build_request

CREATE = """
---
operation:
  method: POST
  url: https://api.test/people
  encoding: ENCODING
  style: {expand: STYLE}
  schema: {"type": "object", "properties": {"expand": {"type": "array", "items": {"type": "string"}}}}
---
Create a person.
"""


def compiled(tmp_path: Path, encoding: str, style: str) -> tuple[Any, list[str]]:
    text = CREATE.replace("ENCODING", encoding).replace("STYLE", style)
    result, errors = compile_dir(write_package(tmp_path, "shop", {"create.md": text}))
    return result, [e.message for e in errors]


def test_a_deep_object_form_field_is_sent_with_indexed_brackets(tmp_path: Path) -> None:
    result, errors = compiled(tmp_path, "form", "deepObject")
    assert errors == [] and result is not None
    operation = result.document["operations"][0]
    assert build_request(operation, {"expand": ["a", "b"]})["body"] == "expand%5B0%5D=a&expand%5B1%5D=b"


def test_a_form_field_takes_no_other_style_and_a_json_body_field_none(tmp_path: Path) -> None:
    assert compiled(tmp_path / "a", "form", "comma")[1] == ["style of form field 'expand' can only be deepObject"]
    assert compiled(tmp_path / "b", "json", "deepObject")[1] == [
        "style: 'expand' is not a query or path parameter (or a field of a form body)"
    ]
