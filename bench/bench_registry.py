"""Registry benchmark: publishing a 1,000-operation skill, and reading a release's tools.

Measured on SQLite (a file in a temporary directory) and, when ``SKILLHOUSE_TEST_POSTGRES_URL`` is
set, PostgreSQL (a fresh schema). Publish = compile + store the release of an already validated
version; upload = check report on upload. Reads = ``get_release`` + neutral tool list through the
registry, and ``GET .../tools`` through the HTTP app (in-process ASGI client) for the same release.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.registry.releases import get_release, publish_version, release_tools
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings
from skillhouse.store import Database

OPERATIONS = 1000
READ_SECONDS = 2.0


def generated_package(operations: int = OPERATIONS) -> dict[str, str]:
    """A skill package of ``operations`` operation files, each with path, query and body fields."""
    files = {"SKILL.md": "---\nname: bigshop\ndescription: A generated shop with many operations.\n---\nUse the tools.\n"}
    for index in range(operations):
        files[f"op_{index:04d}.md"] = (
            "---\noperation:\n  method: POST\n"
            f"  url: https://shop.example/items/{{item_id}}/op{index}\n"
            "  query: [dry_run]\n  body: [name, quantity, note]\n  optional: [note, dry_run]\n"
            "  integer: [quantity]\n  boolean: [dry_run]\n---\n"
            f"Operation number {index} on an item.\n"
        )
    return files


def _publish_once(database: Database, version: str, files: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    with database.transaction() as session:
        put_version(session, "bench", "bigshop", version, files)
        validate_version(session, "bench", "bigshop", version)
    uploaded = time.perf_counter()
    with database.transaction() as session:
        publish_version(session, "bench", "bigshop", version)
    return uploaded - started, time.perf_counter() - uploaded


def _reads(database: Database, version: str) -> float:
    count, deadline = 0, time.perf_counter() + READ_SECONDS
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        with database.transaction() as session:
            tools = release_tools(get_release(session, "bench", "bigshop", version, with_files=False))
        assert len(tools) == OPERATIONS
        count += 1
    return count / (time.perf_counter() - started)


def _http_reads(database: Database, directory: Path, version: str) -> float:
    app = create_app(Settings(data_dir=directory, database_url=database.url), database)
    with database.transaction() as session:
        secret, _ = create_token(session, "bench")
    client = TestClient(app, headers={"Authorization": f"Bearer {secret}"})
    url = f"/v1/skills/bigshop/releases/{version}/tools"
    count, deadline = 0, time.perf_counter() + READ_SECONDS
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        assert client.get(url).status_code == 200
        count += 1
    return count / (time.perf_counter() - started)


def _measure(kind: str, directory: Path, postgres_url: str | None) -> str:
    files = generated_package()
    with scratch_database(kind, directory, postgres_url) as database:
        with database.transaction() as session:
            create_token(session, "bench")
        uploads, publishes = [], []
        for run in range(3):
            upload, publish = _publish_once(database, f"1.0.{run}", files)
            uploads.append(upload)
            publishes.append(publish)
        reads = _reads(database, "1.0.0")
        http = _http_reads(database, directory, "1.0.0")
    return (f"| {kind} | {statistics.median(uploads) * 1000:.0f} ms | {statistics.median(publishes) * 1000:.0f} ms "
            f"| {reads:,.0f}/s | {http:,.1f}/s |")


def run() -> str:
    rows = []
    postgres_url = os.environ.get("SKILLHOUSE_TEST_POSTGRES_URL")
    for kind in ("sqlite", "postgresql"):
        if kind == "postgresql" and not postgres_url:
            rows.append("| postgresql | skipped: SKILLHOUSE_TEST_POSTGRES_URL not set | | | |")
            continue
        with tempfile.TemporaryDirectory() as directory:
            rows.append(_measure(kind, Path(directory), postgres_url))
    return "\n".join([
        "## Registry",
        "",
        f"A generated skill of {OPERATIONS:,} operations (path, query and body fields each). Upload = store the "
        "files with their check report and validate; publish = compile and insert the immutable release "
        "(medians of 3). Reads = the release's neutral tools through the registry (documents cached by digest) "
        f"and `GET /v1/skills/.../tools` through the app in process, each for {READ_SECONDS:.0f} s. Wall time: the "
        "database server's work is part of it.",
        "",
        "| database | upload + validate | publish | tool reads (registry) | tool reads (HTTP) |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ])


if __name__ == "__main__":
    print(run())
