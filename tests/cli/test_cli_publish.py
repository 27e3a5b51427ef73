"""``skillhouse publish`` against a real API on loopback: it uploads through the typed client, prints the
release's digest, and prints a refusal as ``error: STATUS CODE: message`` (exit 1)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.api.served import free_port
from tests.client.served import HOLLOWBROOK, Served, serving
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.client import Client


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("publish")) as running:
        yield running


def publish(path: Path, server: str, token: str, data_dir: Path) -> tuple[int, str, str]:
    env = {"SKILLHOUSE_TOKEN": token, "SKILLHOUSE_DATA_DIR": str(data_dir)}
    ran = CliRunner().invoke(app, ["publish", str(path), "--server", server], env=env)
    return ran.exit_code, ran.stdout, ran.stderr


def test_publish_prints_the_release_and_publishing_it_again_prints_the_same_one(
    served: Served, tmp_path: Path
) -> None:
    code, out, err = publish(HOLLOWBROOK, served.url, served.tokens["admin"], tmp_path)
    assert code == 0, err
    name, version, digest = out.removeprefix("published ").split()
    with Client(served.url, served.tokens["admin"]) as client:
        assert (name, digest) == ("hollowbrook", client.release(name, version).digest)
    assert publish(HOLLOWBROOK, served.url, served.tokens["admin"], tmp_path) == (0, out, "")


def test_a_refusal_is_printed_with_its_status_and_code(served: Served, tmp_path: Path) -> None:
    code, out, err = publish(HOLLOWBROOK, served.url, served.tokens["run"], tmp_path)
    assert (code, out) == (1, "")
    assert err.startswith("error: 403 insufficient-scope: ")


def test_other_content_under_a_published_version_is_refused_as_a_conflict(
    served: Served, tmp_path: Path
) -> None:
    assert publish(HOLLOWBROOK, served.url, served.tokens["admin"], tmp_path)[0] == 0
    changed = tmp_path / "hollowbrook"
    shutil.copytree(HOLLOWBROOK, changed)
    (changed / "house_rules.md").write_text("Changed after publishing.\n", encoding="utf-8")
    code, out, err = publish(changed, served.url, served.tokens["admin"], tmp_path)
    assert (code, out) == (1, "")
    assert err.split(":")[:2] == ["error", " 409 release-conflict"]


def test_a_server_that_cannot_be_reached_is_said_so(tmp_path: Path) -> None:
    server = f"http://127.0.0.1:{free_port()}"
    code, out, err = publish(HOLLOWBROOK, server, "skh_unused", tmp_path)
    assert (code, out) == (1, "")
    assert err.startswith(f"error: cannot reach {server}: ")
