"""The offline commands start without the server stack: no SQLAlchemy, Alembic, FastAPI, uvicorn, httpx, OpenTelemetry or prometheus-client.

Each command runs in a fresh interpreter (the test process has loaded everything already) under a
wrapper that writes the names of the loaded modules to a file when the command exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import HOLLOWBROOK
from tests.openapi.specs import openapi

SERVER_STACK = {"sqlalchemy", "alembic", "fastapi", "uvicorn", "httpx", "starlette", "opentelemetry", "prometheus_client"}

# Runs the CLI as the `skillhouse` script does and records sys.modules at exit, whatever the exit code.
WRAPPER = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["skillhouse", *sys.argv[1:]]
from skillhouse.cli import main
main()
"""


def loaded_top_level_modules(args: list[str], tmp_path: Path) -> set[str]:
    record = tmp_path / "modules.json"
    env = {**os.environ, "MODULES_OUT": str(record), "SKILLHOUSE_DATA_DIR": str(tmp_path / "data")}
    env.pop("SKILLHOUSE_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", WRAPPER, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return {name.split(".")[0] for name in json.loads(record.read_text())}


def fast_commands(tmp_path: Path) -> dict[str, list[str]]:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({"/items/{id}": {"get": {"operationId": "getItem", "parameters": [
        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]}}})))
    return {
        "--help": ["--help"],
        "check": ["check", str(HOLLOWBROOK)],
        "compile": ["compile", str(HOLLOWBROOK), "--out", str(tmp_path / "release.json")],
        "tools": ["tools", str(HOLLOWBROOK), "--provider", "anthropic"],
        "translate": ["translate", str(HOLLOWBROOK), "cancel_booking", '{"booking_id": "b1"}'],
        "import-openapi": ["import-openapi", str(spec), "--out", str(tmp_path / "imported")],
        "export": ["export", str(HOLLOWBROOK), "--out", str(tmp_path / "exported")],
    }


@pytest.mark.parametrize("command", ["--help", "check", "compile", "tools", "translate", "import-openapi", "export"])
def test_the_offline_commands_import_none_of_the_server_stack(command: str, tmp_path: Path) -> None:
    args = fast_commands(tmp_path)[command]
    loaded = loaded_top_level_modules(args, tmp_path)
    assert "skillhouse" in loaded  # the record is real: the CLI ran in this interpreter
    assert loaded & SERVER_STACK == set()


def test_a_server_command_does_load_the_server_stack(tmp_path: Path) -> None:
    # the other side of the check: the wrapper sees server modules when a command does use them
    loaded = loaded_top_level_modules(["tokens", "list", "--tenant", "nobody"], tmp_path)
    assert "sqlalchemy" in loaded
