"""One API on loopback with the Hollowbrook house behind it (tests/client/served.py) for the framework
integrations' tests, the Hollowbrook release published, and what a booking scenario checks afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.client.served import HOLLOWBROOK, Served, serving

from skillhouse.client import Client
from skillhouse.wire.skills import ReleaseOut


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("integrations")) as running:
        yield running


@pytest.fixture(scope="package")
def release(served: Served) -> ReleaseOut:
    with Client(served.url, served.tokens["admin"]) as admin:
        return admin.publish(HOLLOWBROOK)
