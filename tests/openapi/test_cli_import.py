"""``skillhouse import-openapi``: writes a package that checks; exits non-zero only for an unreadable spec."""

from __future__ import annotations

import json
from pathlib import Path

from tests.openapi.specs import openapi
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir


def test_import_writes_a_package_that_compiles_and_a_json_report(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({"/a": {"get": {"operationId": "listA"}}, "/b": {"post": {"operationId": "makeB"}}})))
    report = tmp_path / "report.json"
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "things",
                                      "--exclude", "make*", "--report", str(report)])
    assert result.exit_code == 0, result.output
    compiled, errors = compile_dir(tmp_path / "out" / "things")
    assert compiled is not None, errors
    assert [op.name for op in compiled.operations] == ["listA"]
    assert json.loads(report.read_text())["totals"] == {"operations": 1, "written": 1, "adapted": 0, "skipped": 0}


def test_an_unreadable_spec_exits_non_zero(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("openapi: [unclosed\n")
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()
