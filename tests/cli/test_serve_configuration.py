"""``skillhouse serve`` on a bad configuration: one line naming the variable, exit status 2, no traceback;
on a good one: where its data is, the database, the console, the guest and what is disabled.

Each case runs the real command as a subprocess, as a person would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url
from tests.api.served import free_port, wait_until_serving
from tests.real_parts import postgres_url
from tests.scratch import postgres_schema_url, scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

SKILLHOUSE = Path(sys.executable).parent / "skillhouse"
Serve = Callable[..., tuple[str, "subprocess.Popen[str]"]]


def serve_env(tmp_path: Path, **variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLHOUSE_") or k == "SKILLHOUSE_GUEST_CACHE"}
    return {**env, "SKILLHOUSE_DATA_DIR": str(tmp_path / "data"), **variables}


def refused(tmp_path: Path, **variables: str) -> str:
    """What ``skillhouse serve`` printed on stderr when it refused to start (it must refuse)."""
    proc = subprocess.run([str(SKILLHOUSE), "serve", "--port", str(free_port())], env=serve_env(tmp_path, **variables),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def postgres_database(name: str) -> str:
    return make_url(postgres_url()).set(database=name).render_as_string(hide_password=False)


CASES = {
    "resolve": ({"SKILLHOUSE_RESOLVE": "hollowbrook.local=127.0.0.1"}, "SKILLHOUSE_RESOLVE", "host:port=address"),
    "unreachable-database": ({"SKILLHOUSE_DATABASE_URL": "postgresql://postgres@127.0.0.1:1/skillhouse"},
                             "SKILLHOUSE_DATABASE_URL", "check that the server is up"),
    "unknown-database-kind": ({"SKILLHOUSE_DATABASE_URL": "mysql://root@127.0.0.1/skillhouse"},
                              "SKILLHOUSE_DATABASE_URL", "use sqlite:///PATH or postgresql://"),
    "not-a-database-url": ({"SKILLHOUSE_DATABASE_URL": "skillhouse.db"}, "SKILLHOUSE_DATABASE_URL", "not a database URL"),
    "malformed-secret-key": ({"SKILLHOUSE_SECRET_KEY": "hunter2"}, "SKILLHOUSE_SECRET_KEY", "Fernet.generate_key()"),
    "unknown-guest": ({"SKILLHOUSE_GUEST": "docker"}, "SKILLHOUSE_GUEST", "inprocess, wasm"),
    "malformed-duration": ({"SKILLHOUSE_KEY_TTL_SECONDS": "a day"}, "SKILLHOUSE_KEY_TTL_SECONDS", "number of seconds"),
    "missing-ca-file": ({"SKILLHOUSE_UPSTREAM_CA": "/nonexistent/ca.pem"}, "SKILLHOUSE_UPSTREAM_CA", "PEM file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_setting_stops_serve_with_one_line_naming_the_variable(tmp_path: Path, case: str) -> None:
    variables, variable, advice = CASES[case]

    line = refused(tmp_path, **variables)

    assert variable in line and advice in line, line


def test_an_unwritable_data_directory_names_skillhouse_data_dir(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")

    line = refused(tmp_path, SKILLHOUSE_DATA_DIR=str(blocker / "data"))

    assert "SKILLHOUSE_DATA_DIR" in line and "can be created and written" in line


def test_an_unknown_postgres_database_names_the_variable_and_says_it_does_not_exist(tmp_path: Path) -> None:
    line = refused(tmp_path, SKILLHOUSE_DATABASE_URL=postgres_database("skillhouse_no_such_database"))

    assert "SKILLHOUSE_DATABASE_URL" in line and "does not exist" in line


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Serve]:
    """``serving(**variables)``: a ``skillhouse serve`` process answering HTTP, its URL; stopped at the end."""
    processes: list[subprocess.Popen[str]] = []

    def serve(**variables: str) -> tuple[str, subprocess.Popen[str]]:
        port = free_port()
        proc = subprocess.Popen([str(SKILLHOUSE), "serve", "--port", str(port)], env=serve_env(tmp_path, **variables),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        processes.append(proc)
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(url, proc)  # type: ignore[arg-type]
        return url, proc

    yield serve
    for proc in processes:
        proc.terminate()
        proc.communicate(timeout=15)


def stop(proc: subprocess.Popen[str]) -> list[str]:
    proc.terminate()
    _, stderr = proc.communicate(timeout=15)
    return stderr.splitlines()


def test_serve_says_where_its_data_is_the_database_the_console_the_guest_and_that_credentials_and_model_are_off(
    tmp_path: Path, serving: Serve, warm_guest_cache: Path
) -> None:
    url, proc = serving()

    home = httpx.get(f"{url}/", follow_redirects=False)
    lines = stop(proc)

    assert home.status_code == 303 and home.headers["location"] == "/console"
    said = {line.split(":", 1)[0].strip(): line for line in lines[:12] if line.startswith("  ")}
    assert str(tmp_path / "data") in said["data"]
    assert f"sqlite:///{tmp_path / 'data' / 'skillhouse.db'}" in said["database"]
    assert f"{url}/console" in said["console"]
    assert "WebAssembly component, ready" in said["guest"]  # the suite's guest cache is warm
    assert "DISABLED" in said["credentials"] and "SKILLHOUSE_SECRET_KEY" in said["credentials"]
    assert "model-not-configured" in said["model"] and "SKILLHOUSE_MODEL" in said["model"]
    assert not any("Traceback" in line for line in lines)


def test_a_postgres_url_simply_works(tmp_path: Path, serving: Serve) -> None:
    with postgres_schema_url(postgres_url()) as schema_url:
        spelled = "postgres://" + schema_url.split("://", 1)[1]  # as hosting providers hand it out
        url, proc = serving(SKILLHOUSE_DATABASE_URL=spelled, SKILLHOUSE_SECRET_KEY=Fernet.generate_key().decode())
        env = serve_env(tmp_path, SKILLHOUSE_DATABASE_URL=spelled)
        token = subprocess.run([str(SKILLHOUSE), "tokens", "create", "--tenant", "acme"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()

        skills = httpx.get(f"{url}/v1/skills", headers={"Authorization": f"Bearer {token}"})
        lines = stop(proc)

    assert skills.status_code == 200, skills.text
    database = next(line for line in lines if line.strip().startswith("database:"))
    assert "postgres://" in database and "(postgresql)" in database
    assert any("credentials: enabled" in line for line in lines)


def test_a_credential_route_without_a_secret_key_says_which_variable_to_set(tmp_path: Path) -> None:
    with scratch_database("sqlite", tmp_path) as database:
        client = TestClient(create_app(Settings(data_dir=tmp_path, database_url=database.url, guest="inprocess"),
                                       database))
        with database.transaction() as session:
            secret, _ = create_token(session, "acme", scope="admin")

        answer = client.put("/v1/credentials", headers={"Authorization": f"Bearer {secret}"},
                            json={"host": "api.example.com", "scheme": "bearer", "value": "sk-live-123"})

    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "secret-key-missing"
    assert "SKILLHOUSE_SECRET_KEY" in answer.json()["error"]["message"]


@pytest.mark.parametrize("argv", [["tokens", "create", "--tenant", "acme"], ["tokens", "list"], ["tokens", "revoke", "1"]])
def test_the_token_commands_refuse_a_bad_database_setting_the_same_way(tmp_path: Path, argv: list[str]) -> None:
    proc = subprocess.run([str(SKILLHOUSE), *argv], capture_output=True, text=True, timeout=60,
                          env=serve_env(tmp_path, SKILLHOUSE_DATABASE_URL="postgresql://postgres@127.0.0.1:1/skillhouse"))

    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "SKILLHOUSE_DATABASE_URL" in proc.stderr, proc.stderr
