"""``skillhouse credentials set`` takes an origin and refuses, with a code, a secret the transport cannot send."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner

from skillhouse.cli import app


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"SKILLHOUSE_DATABASE_URL": f"sqlite:///{tmp_path / 'skillhouse.db'}", "SKILLHOUSE_DATA_DIR": str(tmp_path),
            "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode()}


def _set(env: dict[str, str], secret: str, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["credentials", "set", "--tenant", "acme", *options], input=secret + "\n", env=env)
    return result.exit_code, result.stderr


@pytest.mark.parametrize("secret", ["tok\u00e9n-value", "token\u2028value", "token\x1bvalue", "t" * 9000])
def test_an_unsendable_secret_is_refused_with_its_code(env: dict[str, str], secret: str) -> None:
    code, stderr = _set(env, secret, "--origin", "https://api.example.com")
    assert code == 1 and ("secret-not-sendable" in stderr or "secret-too-long" in stderr) and secret not in stderr
    assert CliRunner().invoke(app, ["credentials", "list", "--tenant", "acme"], env=env).stdout == ""


def test_an_http_origin_needs_allow_http(env: dict[str, str]) -> None:
    code, stderr = _set(env, "s3cret-value", "--origin", "http://10.0.0.5:8080")
    assert code == 1 and "http-needs-opt-in" in stderr
    assert _set(env, "s3cret-value", "--origin", "http://10.0.0.5:8080", "--allow-http")[0] == 0
    assert _set(env, "s3cret-value", "--origin", "ftp://10.0.0.5")[1].startswith("error: origin-scheme-refused: ")
    listed = CliRunner().invoke(app, ["credentials", "list", "--tenant", "acme"], env=env)
    assert listed.stdout == "http://10.0.0.5:8080\tauthorization\tbearer\tallow-http\n"
    deleted = CliRunner().invoke(app, ["credentials", "delete", "--tenant", "acme", "--origin", "http://10.0.0.5:8080"], env=env)
    assert deleted.exit_code == 0


def test_an_oauth_client_is_bound_with_its_token_url_and_listed_without_its_secret(env: dict[str, str]) -> None:
    secret = "canary-cli-client-secret-91ab"
    oauth = ["--origin", "https://api.example.com", "--scheme", "oauth2-client-credentials", "--client-id", "app"]
    assert _set(env, secret, *oauth)[1].startswith("error: invalid-credential: ")  # no --token-url
    code, stderr = _set(env, secret, *oauth, "--token-url", "http://auth.example.com/token")
    assert code == 1 and "http-needs-opt-in" in stderr
    code, stderr = _set(env, secret, *oauth, "--token-url", "https://auth.example.com/token", "--scope", "read",
                        "--scope", "write")  # fmt: skip
    assert code == 0 and secret not in stderr
    listed = CliRunner().invoke(app, ["credentials", "list", "--tenant", "acme"], env=env)
    assert listed.stdout == ("https://api.example.com\tauthorization\toauth2-client-credentials\t"
                             "https://auth.example.com/token\tapp\n")  # fmt: skip
    code, stderr = _set(env, secret, "--origin", "https://api.example.com", "--token-url", "https://auth.example.com/t")
    assert code == 1 and "invalid-credential" in stderr  # OAuth options with a static scheme


def test_an_authorization_code_client_is_bound_and_its_connections_started_listed_and_revoked(env: dict[str, str]) -> None:
    from urllib.parse import parse_qs, urlsplit

    import httpx
    from tests.gateway.oauth_server import Client, authorization_server

    from skillhouse.gateway import make_gateway
    from skillhouse.settings import Settings
    from skillhouse.store import open_database

    secret, redirect = "canary-cli-code-secret-2d4f", "https://skillhouse.example/v1/connections/callback"
    with authorization_server([Client("app", secret, ("read",), (redirect,))]) as auth:
        env = {**env, "SKILLHOUSE_RESOLVE": f"auth.local:9400=127.0.0.1:{auth.port}"}
        code = ["--origin", "http://api.example.com", "--scheme", "oauth2-authorization-code", "--client-id", "app",
                "--token-url", "http://auth.local:9400/token", "--allow-http", "--scope", "read"]  # fmt: skip
        assert "--authorization-url" in _set(env, secret, *code)[1]  # and --redirect-uri: all four are needed
        bound = _set(env, secret, *code, "--authorization-url", f"http://127.0.0.1:{auth.port}/authorize",
                     "--redirect-uri", redirect, "--revocation-url", "http://auth.local:9400/revoke")  # fmt: skip
        assert bound[0] == 0 and secret not in bound[1]
        listed = CliRunner().invoke(app, ["credentials", "list", "--tenant", "acme"], env=env).stdout
        assert "oauth2-authorization-code\tallow-http\thttp://auth.local:9400/token\tapp" in listed
        start = ["credentials", "connections", "start", "--tenant", "acme", "--subject", "ada", "--origin", "http://api.example.com"]
        url = CliRunner().invoke(app, start, env=env).stdout.strip()
        back = httpx.get(url, headers={"X-Person": "ada"}, follow_redirects=False, timeout=10).headers["location"]
        query = {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}
        database = open_database(env["SKILLHOUSE_DATABASE_URL"])
        gateway = make_gateway(Settings.from_env(env), database)
        gateway.connections.complete(query["state"], query["code"])  # the callback, as the API runs it
        gateway.close()
        database.dispose()
        connections = CliRunner().invoke(app, ["credentials", "connections", "list", "--tenant", "acme"], env=env).stdout
        assert connections.startswith("ada\thttp://api.example.com\tread\texpires ") and "refreshable" in connections
        tokens = [t[k] for t in auth.issued.tokens for k in ("access_token", "refresh_token")]
        assert not any(token in connections for token in tokens)
        revoke = ["credentials", "connections", "revoke", "--tenant", "acme", "--subject", "ada", "--origin", "http://api.example.com"]
        revoked = CliRunner().invoke(app, revoke, env=env)
        assert revoked.exit_code == 0 and "revoked at the provider" in revoked.stderr
        assert len(auth.oauth.revocations) == 1
        assert CliRunner().invoke(app, revoke, env=env).exit_code == 1
