"""``skillhouse limits list|set|delete`` on the store the settings name: a limit set here holds the gateway's calls."""

from __future__ import annotations

from tests.cli.test_cli_keys import BOOKING, HOLLOWBROOK, env  # noqa: F401 - the fixture
from tests.gateway.wire import fetch_json
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.store import open_database


def test_a_limit_set_with_the_cli_holds_calls_and_is_listed_and_deleted(env: dict[str, str]) -> None:  # noqa: F811
    runner = CliRunner()
    set_ = ["limits", "set", "--tenant", "acme", "--scope", "host", "--subject", "Hollowbrook.local",
            "--requests", "1", "--window", "60"]
    assert runner.invoke(app, set_, env=env).exit_code == 0
    listed = runner.invoke(app, ["limits", "list", "--tenant", "acme"], env=env)
    assert listed.exit_code == 0 and listed.stdout.splitlines() == ["host\thollowbrook.local\t1 per 60 s"]
    compiled, _ = compile_dir(HOLLOWBROOK)
    assert compiled is not None
    database = open_database(env["SKILLHOUSE_DATABASE_URL"])
    gateway = Gateway(database, GatewayConfig(resolve={("hollowbrook.local", 8084): "127.0.0.1:9"}))
    turn = TurnContext("acme", "turn-cli", BoundReleases([compiled.document]))
    try:
        fetch_json(gateway, turn, BOOKING)  # admitted (and refused by the closed port: nothing listens on 9)
        limited = fetch_json(gateway, turn, BOOKING)["error"]
        assert isinstance(limited, dict) and limited["code"] == "rate-limited"
    finally:
        gateway.close()
        database.dispose()
    delete = ["limits", "delete", "--tenant", "acme", "--scope", "host", "--subject", "hollowbrook.local"]
    assert runner.invoke(app, delete, env=env).exit_code == 0
    again = runner.invoke(app, delete, env=env)
    assert again.exit_code == 1 and "rate-limit-not-found" in again.stderr


def test_a_bad_limit_is_refused_with_its_code(env: dict[str, str]) -> None:  # noqa: F811
    bad = CliRunner().invoke(app, ["limits", "set", "--tenant", "acme", "--scope", "planet", "--requests", "1",
                                   "--window", "60"], env=env)
    assert bad.exit_code == 1 and bad.stderr.startswith("error: invalid-limit: ")
