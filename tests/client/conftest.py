"""One API on loopback for the client's tests that need no server of their own (tests/client/served.py),
an admin client of it, and the Hollowbrook release published through that client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.client.served import HOLLOWBROOK, Served, serving

from skillhouse.client import Client
from skillhouse.wire.skills import ReleaseOut


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("client")) as running:
        yield running


@pytest.fixture(scope="package")
def admin(served: Served) -> Iterator[Client]:
    with Client(served.url, served.tokens["admin"]) as client:
        yield client


@pytest.fixture(scope="package")
def release(admin: Client) -> ReleaseOut:
    return admin.publish(HOLLOWBROOK)
