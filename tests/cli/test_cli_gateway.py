"""``skillhouse approvals`` and ``skillhouse credentials`` on the store the settings name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.store import open_database

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"
CANARY = "canary-cli-5d1e-never-printed"
CHARGE = {"method": "POST", "url": "http://hollowbrook.local:8084/charges", "headers": {"Content-Type": "application/json"},
          "body": json.dumps({"amount_cents": 19000, "booking_id": "b1", "description": "Two nights"})}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"SKILLHOUSE_DATABASE_URL": f"sqlite:///{tmp_path / 'skillhouse.db'}", "SKILLHOUSE_DATA_DIR": str(tmp_path),
            "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode()}


def held_approval(env: dict[str, str]) -> str:
    compiled, _ = compile_dir(HOLLOWBROOK)
    assert compiled is not None
    database = open_database(env["SKILLHOUSE_DATABASE_URL"])
    # the name must pass the egress rule; the charge is held before anything is sent, so no server is needed
    gateway = Gateway(database, GatewayConfig(resolve={("hollowbrook.local", 8084): "127.0.0.1:9"}))
    try:
        answer = gateway.fetch(TurnContext("acme", "turn-cli", BoundReleases([compiled.document])), CHARGE)
    finally:
        gateway.close()
        database.dispose()
    return str(answer["error"]["approval_id"])


def test_approvals_are_listed_shown_and_decided_once(env: dict[str, str]) -> None:
    runner = CliRunner()
    approval_id = held_approval(env)
    listed = runner.invoke(app, ["approvals", "list", "--tenant", "acme", "--state", "pending"], env=env)
    assert listed.exit_code == 0 and listed.stdout.startswith(f"{approval_id}\tpending\thollowbrook.charge\tPOST ")
    shown = json.loads(runner.invoke(app, ["approvals", "show", approval_id, "--tenant", "acme"], env=env).stdout)
    assert shown["commitment"].startswith("sha256:") and shown["request"]["method"] == "POST"
    other = runner.invoke(app, ["approvals", "show", approval_id, "--tenant", "globex"], env=env)
    assert other.exit_code == 1 and "approval-not-found" in other.stderr
    assert runner.invoke(app, ["approvals", "deny", approval_id, "--tenant", "acme", "--by", "ops"], env=env).exit_code == 0
    again = runner.invoke(app, ["approvals", "approve", approval_id, "--tenant", "acme"], env=env)
    assert again.exit_code == 1 and "approval-not-pending" in again.stderr
    assert runner.invoke(app, ["approvals", "list", "--tenant", "acme", "--state", "pending"], env=env).stdout == ""
    assert runner.invoke(app, ["approvals", "list", "--tenant", "acme", "--state", "held"], env=env).exit_code == 1


def test_a_credential_is_set_from_stdin_listed_without_its_value_and_deleted(env: dict[str, str]) -> None:
    runner = CliRunner()
    put = runner.invoke(app, ["credentials", "set", "--tenant", "acme", "--host", "api.github.com"], input=CANARY + "\n",
                        env=env)
    assert put.exit_code == 0 and CANARY not in put.stdout + put.stderr
    listed = runner.invoke(app, ["credentials", "list", "--tenant", "acme"], env=env)
    assert listed.stdout == "https://api.github.com\tauthorization\tbearer\n"  # a bare host is https:443
    assert runner.invoke(app, ["credentials", "list", "--tenant", "globex"], env=env).stdout == ""
    bad = runner.invoke(app, ["credentials", "set", "--tenant", "acme", "--host", "x.test", "--scheme", "header"],
                        input=CANARY + "\n", env=env)
    assert bad.exit_code == 1 and "invalid-credential" in bad.stderr and CANARY not in bad.stderr
    assert runner.invoke(app, ["credentials", "delete", "--tenant", "acme", "--host", "api.github.com"], env=env).exit_code == 0
    gone = runner.invoke(app, ["credentials", "delete", "--tenant", "acme", "--host", "api.github.com"], env=env)
    assert gone.exit_code == 1 and "credential-not-found" in gone.stderr


def test_a_missing_secret_key_is_a_clear_error(env: dict[str, str]) -> None:
    refused = CliRunner().invoke(app, ["credentials", "set", "--tenant", "acme", "--host", "api.github.com"],
                                 input="x\n", env={**env, "SKILLHOUSE_SECRET_KEY": ""})
    assert refused.exit_code == 1 and "secret-key-missing" in refused.stderr
