"""Schemathesis against the app's own OpenAPI document, authenticated, with every check.

No 5xx and no response that breaks the document. The normal run keeps the number of examples
small; ``make fuzz`` (``SKILLHOUSE_FUZZ=long``) runs many more.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import positive_data_acceptance
from tests.real_parts import guest_cache
from tests.scratch import scratch_database

from skillhouse.api import create_app
from skillhouse.registry.tokens import create_token
from skillhouse.settings import Settings

LONG = os.environ.get("SKILLHOUSE_FUZZ") == "long"
EXAMPLES = 300 if LONG else 12


# the archive upload is raw bytes: random bytes (almost never a tar.gz) exercise the refusal paths
schemathesis.serializer.alias("application/gzip", "application/octet-stream")


def positive_data_meets_only_semantic_refusals(ctx: Any, response: Any, case: Any) -> bool | None:
    """Schema-valid data is never refused by request validation; it may meet a rule JSON Schema cannot state.

    Replaces schemathesis' ``positive_data_acceptance``: rules across stored rows (an allowed tool
    that does not exist, a package that does not compile, a manifest reference that resolves to
    another pack) answer 422 by design, but always with a registry error code and its problems,
    never the ``invalid-request`` of a body the document would have allowed.
    """
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    code = response.json()["error"]["code"]
    if code == "invalid-request":
        raise AssertionError(f"schema-valid request refused by request validation: {response.text}")
    return None


@pytest.fixture
def api_schema(tmp_path: Path) -> Iterator[tuple[Any, dict[str, str]]]:
    with scratch_database("sqlite", tmp_path) as database:
        app = create_app(Settings(data_dir=tmp_path, database_url=database.url, guest_cache=guest_cache()), database)
        with database.transaction() as session:
            secret, _ = create_token(session, "acme", scope="admin")
        yield schemathesis.openapi.from_asgi("/openapi.json", app), {"Authorization": f"Bearer {secret}"}


def test_fuzz_the_api_finds_no_server_error_and_no_response_outside_the_document(api_schema: tuple[Any, dict[str, str]]) -> None:
    # schemathesis' pytest plugin does not load under this pytest; each operation runs as its own
    # hypothesis test here, and every failing operation is reported together
    schema, auth = api_schema
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=not LONG,
                  database=None)
        def run(case: Any) -> None:
            case.call_and_validate(headers=dict(auth), excluded_checks=[positive_data_acceptance],
                                   additional_checks=[positive_data_meets_only_semantic_refusals])

        try:
            run()
        except Exception as exc:
            failures.append(f"{operation.label}: {exc}")
    assert failures == [], "\n\n".join(failures)
