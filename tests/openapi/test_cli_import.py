"""``skillhouse import-openapi``: writes a package that checks; exits non-zero only for an unreadable spec."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

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


def spec_with_a_skipped_operation(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.json"
    # a GET with a required body cannot be sent as declared, so it is skipped with a reason
    spec.write_text(json.dumps(openapi({
        "/a": {"get": {"operationId": "listA"}},
        "/b": {"get": {"operationId": "getB", "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}}},
    })))
    return spec


def test_the_report_is_a_summary_by_default_and_per_operation_with_verbose(tmp_path: Path) -> None:
    spec = spec_with_a_skipped_operation(tmp_path)
    quiet = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "q"), "--name", "things"])
    assert quiet.exit_code == 0, quiet.output
    assert "2 operations: 1 written, 0 adapted, 1 skipped (50.0% became tools)" in quiet.stderr
    assert "skipped: getB" in quiet.stderr
    assert "written  listA" not in quiet.stderr and "skipped  getB" not in quiet.stderr
    assert "--verbose, or --report FILE" in quiet.stderr
    loud = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "v"), "--name", "things", "--verbose"])
    assert loud.exit_code == 0, loud.output
    assert "written  listA (GET /a)" in loud.stderr
    assert "skipped  getB (GET /b)\n         - " in loud.stderr


def test_progress_goes_to_stderr_as_plain_lines_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({f"/r{i}": {"get": {"operationId": f"get{i}"}} for i in range(30)})))
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "many"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("parsing spec.json (") and lines[0].endswith(" KB)")
    steps = [line for line in lines if line.startswith("importing operations: ")]
    assert steps[0] == "importing operations: 1/30" and steps[-1] == "importing operations: 30/30"
    assert len(steps) <= 11  # a line per tenth, not per operation
    assert result.stdout == ""


def test_out_is_the_parent_and_the_skill_goes_to_out_slash_name_every_time(tmp_path: Path) -> None:
    spec = spec_with_a_skipped_operation(tmp_path)
    parent = tmp_path / "skills"
    for _ in range(2):  # a second import rewrites the skill in place
        result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(parent), "--name", "things"])
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in parent.iterdir()) == ["things"]
    # --out naming the skill itself is still a parent: the skill goes one level down
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(parent / "things"), "--name", "things"])
    assert result.exit_code == 0, result.output
    assert (parent / "things" / "things" / "SKILL.md").is_file()
    assert compile_dir(parent / "things")[0] is not None


def test_import_refuses_a_non_empty_directory_that_is_not_a_skill(tmp_path: Path) -> None:
    spec = spec_with_a_skipped_operation(tmp_path)
    (tmp_path / "out" / "things").mkdir(parents=True)
    (tmp_path / "out" / "things" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out"), "--name", "things"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith("error: out-not-a-skill: ")
    assert sorted(p.name for p in (tmp_path / "out" / "things").iterdir()) == ["notes.txt"]
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "file"), "--name", "things"])
    assert result.exit_code == 2 and "error: out-not-a-directory: " in result.stderr


def test_on_a_terminal_the_progress_is_a_live_bar_and_the_import_completes(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({f"/r{i}": {"get": {"operationId": f"get{i}"}} for i in range(30)})))
    controller, terminal = os.openpty()
    seen = bytearray()

    def read() -> None:  # drained while the command runs, so a full terminal buffer never blocks it
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal's other end closed
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        done = subprocess.run([sys.executable, "-m", "skillhouse.cli", "import-openapi", str(spec), "--out", str(tmp_path / "out"),
                               "--name", "many"], stderr=terminal, stdout=subprocess.PIPE, timeout=120, check=False)
    finally:
        os.close(terminal)
        reader.join(timeout=30)
        os.close(controller)
    text = seen.decode(errors="replace")
    assert done.returncode == 0, text
    assert "importing operations: " not in text  # the plain lines are for logs, not terminals
    assert "30 operations: 30 written" in text and "wrote " in text
    assert compile_dir(tmp_path / "out" / "many")[0] is not None


SHELF_SPEC = Path(__file__).resolve().parents[1] / "data" / "openapi" / "multifile" / "api" / "openapi.yaml"


def test_a_multi_file_spec_imports_and_the_references_it_cannot_follow_are_printed_and_in_the_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = CliRunner().invoke(app, ["import-openapi", str(SHELF_SPEC), "--out", str(tmp_path / "out"), "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "10 operations: 5 written, 2 adapted, 3 skipped" in result.stderr
    assert "3 reference(s) could not be followed" in result.stderr
    assert "[ref-outside-tree]" in result.stderr and "[ref-remote-refused]" in result.stderr
    assert [p["code"] for p in json.loads(report.read_text())["problems"]] == ["ref-outside-tree", "ref-remote-refused", "ref-missing-file"]
    compiled, errors = compile_dir(tmp_path / "out" / "shelf-api")
    assert compiled is not None, errors
    assert len(compiled.operations) == 7


class _Documents(BaseHTTPRequestHandler):
    documents: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.documents.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_allow_remote_refs_fetches_them_and_allow_ref_root_opens_a_directory(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Documents)
    _Documents.documents = {"/params.yaml": b"Mirror:\n  name: mirror\n  in: query\n  schema: {type: string}\n"}
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        spec = tmp_path / "api" / "spec.json"
        spec.parent.mkdir()
        spec.write_text(json.dumps(openapi({
            "/mirrors": {"get": {"operationId": "listMirrors", "parameters": [{"$ref": f"{url}/params.yaml#/Mirror"}]}},
            "/gone": {"get": {"operationId": "gone", "parameters": [{"$ref": f"{url}/missing.yaml#/Mirror"}]}},
            "/regions": {"get": {"operationId": "listRegions", "parameters": [{"$ref": "../common/region.json"}]}},
        })))  # fmt: skip
        (tmp_path / "common").mkdir()
        (tmp_path / "common" / "region.json").write_text(json.dumps({"name": "region", "in": "query", "schema": {"type": "string"}}))
        refused = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "a"), "--name", "m"])
        assert refused.exit_code == 0, refused.output
        assert "3 operations: 0 written, 0 adapted, 3 skipped" in refused.stderr
        allowed = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "b"), "--name", "m",
                                           "--allow-remote-refs", "--allow-ref-root", str(tmp_path / "common")])
        assert allowed.exit_code == 0, allowed.output
        assert "3 operations: 2 written, 0 adapted, 1 skipped" in allowed.stderr
        assert "the server answered 404 [ref-remote-failed]" in allowed.stderr
    finally:
        server.shutdown()
        server.server_close()


def test_an_allowed_root_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["import-openapi", str(SHELF_SPEC), "--out", str(tmp_path / "out"), "--allow-ref-root", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "--allow-ref-root" in result.stderr and "not a directory" in result.stderr
    assert not (tmp_path / "out").exists()
