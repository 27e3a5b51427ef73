"""An exception the wizard does not expect while converting one operation is a located converter-error.

The operation is skipped, the others are written and the skill compiles; the report names the
operation, its JSON pointer in the spec, the exception and the skillhouse line it came from, so a
test (the fuzz tests assert there is none) or a user filing a bug sees it instead of a quiet skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.openapi.specs import imported, openapi, outcome
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.openapi import schemas as converter
from skillhouse.openapi.report import ConverterError

MARKER = "^boom$"


def _failing_on_the_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The converter raises the first time it meets the marker pattern (a bug that strikes once)."""
    valid, met = converter._valid_regex, []

    def valid_regex(pattern: Any) -> bool:
        if pattern == MARKER and not met:
            met.append(pattern)
            raise ValueError("the converter met the marker")
        return valid(pattern)

    monkeypatch.setattr(converter, "_valid_regex", valid_regex)


def _spec() -> dict[str, Any]:
    # makeOdd converts the shared Thing first and raises inside it; putOther reaches Thing next
    thing = {"type": "object", "properties": {"name": {"type": "string"}, "code": {"type": "string", "pattern": MARKER}}}
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": {"thing": {"$ref": "#/components/schemas/Thing"}}}}}}
    return openapi(
        {
            "/things": {"get": {"operationId": "listThings"}},
            "/things/{id}/~odd": {"post": {"operationId": "makeOdd", "requestBody": body}},
            "/others": {"put": {"operationId": "putOther", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
        },
        {"Thing": thing},
    )


def test_a_converter_exception_is_a_located_converter_error_and_the_other_operations_are_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _failing_on_the_marker(monkeypatch)
    result, ops = imported(_spec())

    assert sorted(ops) == ["listThings", "putOther"]
    failed = outcome(result, "makeOdd")
    assert (failed.status, failed.kind) == ("skipped", "converter-error")
    assert failed.error is not None
    assert (failed.error.pointer, failed.error.exception, failed.error.message) == (
        "/paths/~1things~1{id}~1~0odd/post",
        "ValueError",
        "the converter met the marker",
    )
    # the innermost skillhouse line on the way: the schema converter that called the patched check
    assert failed.error.raised_at.startswith("openapi/schemas.py:")
    assert failed.notes == (failed.error.note(),)
    assert result.report.converter_errors() == [failed]
    assert [o.kind for o in result.report.outcomes] == ["written", "converter-error", "written"]
    # the shared type the failed operation was converting when it raised is not left half made: the
    # next operation that reaches it converts it whole, under its own name
    assert result.files["types.json"] and json.loads(result.files["types.json"]) == {
        "Thing": {"type": "object", "properties": {"name": {"type": "string"}, "code": {"type": "string", "pattern": MARKER}}}
    }
    assert ops["putOther"]["schema"]["properties"] == {"name": {"type": "string"}, "code": {"type": "string", "pattern": MARKER}}


def test_the_report_data_and_summary_carry_the_converter_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_on_the_marker(monkeypatch)
    result, _ = imported(_spec())
    failed = outcome(result, "makeOdd")

    data = result.report.as_dict()
    assert data["totals"] == {"operations": 3, "written": 2, "adapted": 0, "skipped": 1}
    assert data["operations"][1]["converter_error"] == {
        "pointer": "/paths/~1things~1{id}~1~0odd/post",
        "exception": "ValueError",
        "message": "the converter met the marker",
        "raised_at": failed.error.raised_at if failed.error else None,
    }
    assert all("converter_error" not in o for i, o in enumerate(data["operations"]) if i != 1)
    assert (
        "converter errors (bugs in skillhouse; please report them): makeOdd at /paths/~1things~1{id}~1~0odd/post (ValueError)"
    ) in result.report.summary_lines()


def test_the_cli_import_completes_and_its_report_file_names_the_converter_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _failing_on_the_marker(monkeypatch)
    spec, report = tmp_path / "spec.json", tmp_path / "report.json"
    spec.write_text(json.dumps(_spec()))
    run = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "things", "--report", str(report)])
    assert run.exit_code == 0, run.output
    assert "converter errors (bugs in skillhouse; please report them): makeOdd" in run.output
    operations = json.loads(report.read_text())["operations"]
    assert [o["converter_error"]["pointer"] for o in operations if "converter_error" in o] == ["/paths/~1things~1{id}~1~0odd/post"]
    assert sorted(p.name for p in (tmp_path / "out" / "things").glob("*.md")) == ["SKILL.md", "listThings.md", "putOther.md"]


def test_a_skip_the_wizard_expects_is_not_a_converter_error() -> None:
    spec = openapi({
        "/ok": {"get": {"operationId": "ok"}},
        "/bad": {"get": {"operationId": "bad", "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}}},
    })
    result, _ = imported(spec)
    assert [(o.kind, o.error) for o in result.report.outcomes] == [("written", None), ("skipped", None)]
    assert result.report.converter_errors() == []


def test_a_converter_error_note_says_where_and_that_it_is_a_bug() -> None:
    error = ConverterError("/paths/~1a/get", "KeyError", "'x'", "openapi/parameters.py:12")
    assert error.note() == (
        "converter-error at /paths/~1a/get: KeyError: 'x' (raised at openapi/parameters.py:12); "
        "this is a bug in skillhouse, please report it with the operation"
    )
