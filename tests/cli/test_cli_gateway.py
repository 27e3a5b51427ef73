"""``skillhouse approvals`` and ``skillhouse credentials`` on the store the settings name."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from tests.gateway.wire import fetch_json
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.cli.gateway_commands import request_summary
from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.registry.tokens import create_token
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
        answer = fetch_json(gateway, TurnContext("acme", "turn-cli", BoundReleases([compiled.document])), CHARGE)
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


def test_approvals_list_takes_the_tenant_from_the_token_and_shows_the_request_in_short(env: dict[str, str]) -> None:
    runner = CliRunner()
    approval_id = held_approval(env)
    database = open_database(env["SKILLHOUSE_DATABASE_URL"])
    with database.transaction() as session:
        acme_token, _ = create_token(session, "acme", "cli test")
        globex_token, _ = create_token(session, "globex", "cli test")
    database.dispose()
    listed = runner.invoke(app, ["approvals", "list"], env={**env, "SKILLHOUSE_TOKEN": acme_token})
    assert listed.exit_code == 0, listed.stderr
    fields = listed.stdout.rstrip("\n").split("\t")
    assert fields[:4] == [approval_id, "pending", "hollowbrook.charge",
                          'POST /charges amount_cents=19000 booking_id=b1 description="Two nights"']
    created, expires = (datetime.strptime(f.split(" ", 1)[1], "%Y-%m-%dT%H:%M:%SZ") for f in fields[4:])
    assert fields[4].startswith("created ") and fields[5].startswith("expires ") and expires > created
    assert runner.invoke(app, ["approvals", "list"], env={**env, "SKILLHOUSE_TOKEN": globex_token}).stdout == ""
    shown = runner.invoke(app, ["approvals", "show", approval_id], env={**env, "SKILLHOUSE_TOKEN": acme_token})
    assert json.loads(shown.stdout)["id"] == approval_id


def test_approvals_without_a_tenant_or_a_good_token_are_refused_with_a_code(env: dict[str, str]) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["approvals", "list"], env={**env, "SKILLHOUSE_TOKEN": ""})
    assert missing.exit_code == 2 and missing.stderr.startswith("error: no-tenant: ")
    unknown = runner.invoke(app, ["approvals", "list"], env={**env, "SKILLHOUSE_TOKEN": "skh_" + "x" * 43})
    assert unknown.exit_code == 2 and unknown.stderr.startswith("error: unknown-token: SKILLHOUSE_TOKEN: ")


@pytest.mark.parametrize(("request_", "summary"), [
    ({"method": "GET", "url": "https://api.test/v1/rooms?from=2030-05-01&to=2030-05-03"}, "GET /v1/rooms from=2030-05-01 to=2030-05-03"),
    ({"method": "POST", "url": "https://api.test/v1/charges", "body": {"text": "amount=2000&currency=eur&customer=cus_1&a=1&b=2"}},
     "POST /v1/charges amount=2000 currency=eur customer=cus_1 a=1 (+1 more)"),
    ({"method": "PUT", "url": "https://api.test/", "body": {"json": {"note": "x" * 40, "tags": ["a"], "ok": True}}},
     'PUT / note=' + "x" * 23 + "… ok=true"),
])
def test_a_held_request_is_summarized_on_one_line(request_: dict[str, Any], summary: str) -> None:
    assert request_summary(request_) == summary
