"""Publishing races decided by the database: two publishers of one version make one release."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import func, select

from skillhouse.registry.releases import ReleaseView, publish_version
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.store import Database
from skillhouse.store.registry_tables import ReleaseRow

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"


def _validated(database: Database) -> None:
    files = {p.name: p.read_text() for p in HOLLOWBROOK.iterdir() if p.is_file()}
    with database.transaction() as session:
        create_token(session, "acme")
        put_version(session, "acme", "hollowbrook", "1.0.0", files)
        validate_version(session, "acme", "hollowbrook", "1.0.0")


def test_two_concurrent_publishes_of_one_version_make_one_release(database: Database) -> None:
    _validated(database)
    start = threading.Barrier(2, timeout=30)
    results: list[tuple[ReleaseView, bool]] = []
    failures: list[BaseException] = []

    def publish() -> None:
        try:
            start.wait()
            with database.transaction() as session:
                results.append(publish_version(session, "acme", "hollowbrook", "1.0.0"))
        except BaseException as exc:  # reported below: a thread's exception would be lost
            failures.append(exc)

    threads = [threading.Thread(target=publish) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert sorted(created for _, created in results) == [False, True]
    assert len({release.digest for release, _ in results}) == 1
    with database.transaction() as session:
        assert session.scalar(select(func.count()).select_from(ReleaseRow)) == 1
