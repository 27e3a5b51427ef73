"""Turn start: the tools of 500 bound operations against reading their release from the store.

The target: a turn's tools in ≤ 2 × the time to read the release. "Read" is the
release row fetched and its canonical JSON parsed (no cache); "tools" is what a turn start does with
the document: the provider's tool list (``Turn.tools()``), and the guest's catalogue (``list_tools``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_registry import generated_package
from sqlalchemy import select
from tests.scratch import scratch_database

from skillhouse.host.runner import InProcessRunner
from skillhouse.host.turn import TurnHost
from skillhouse.registry.releases import publish_version
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.registry.turns import Turn
from skillhouse.store.registry_tables import ReleaseRow

OPERATIONS = 500


def _median_ms(action: Callable[[], Any], rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def run() -> str:
    with tempfile.TemporaryDirectory() as tmp, scratch_database("sqlite", Path(tmp), None) as database:
        with database.transaction() as session:
            create_token(session, "bench")  # creates the tenant
            put_version(session, "bench", "bigshop", "1.0.0", generated_package(OPERATIONS))
            validate_version(session, "bench", "bigshop", "1.0.0")
            publish_version(session, "bench", "bigshop", "1.0.0")

        def read() -> dict[str, Any]:
            with database.transaction() as session:
                row = session.scalars(select(ReleaseRow).where(ReleaseRow.skill == "bigshop")).one()
                document: dict[str, Any] = json.loads(row.document)
                return document

        document = read()
        rows = [f"| read the release (row + JSON parse) | {_median_ms(read):.1f} | 1.00 |"]
        read_ms = _median_ms(read)
        for profile in ("openai", "anthropic", "openai-strict"):
            turn = Turn("turn_bench", "bench", profile, [document], 0.0)
            spent = _median_ms(turn.tools)
            rows.append(f"| tools for `{profile}` (`Turn.tools()`) | {spent:.1f} | {spent / read_ms:.2f} |")

        def catalogue() -> str:
            return InProcessRunner(TurnHost([document], fetch=lambda request: {})).list_tools()

        spent = _median_ms(catalogue)
        rows.append(f"| guest catalogue (`list_tools`, in process) | {spent:.1f} | {spent / read_ms:.2f} |")
    return (
        f"## Turn start: {OPERATIONS} bound operations\n\n"
        "Medians of 7, SQLite. Target: the tools in ≤ 2 × the time to read the release.\n\n"
        "| step | ms | × read |\n|---|---:|---:|\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print(run())
