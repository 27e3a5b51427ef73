"""Turn start: the tools of 500 bound operations against reading their release from the store.

The target: a turn's tools in ≤ 2 × the time to read the release. "Read" is the
release row fetched and its canonical JSON parsed (no cache); "tools" is what a turn start does with
the document: the provider's tool list (``Turn.tools()``), and the guest's catalogue (``list_tools``) in
a guest started for the turn, both in process and as the wasm component (the default guest; its
component cached, as on every start after the first).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_registry import generated_package
from sqlalchemy import select
from targets import TURN_START
from tests.scratch import scratch_database

from skillhouse.host.runner import InProcessRunner
from skillhouse.host.turn import TurnHost
from skillhouse.host.wasm_runner import WasmRunner
from skillhouse.registry.releases import publish_version
from skillhouse.registry.skills import put_version, validate_version
from skillhouse.registry.tokens import create_token
from skillhouse.registry.turns import Turn
from skillhouse.store.registry_tables import ReleaseRow

ROOT = Path(__file__).resolve().parents[1]
OPERATIONS = 500


def _median_ms(action: Callable[[], Any], rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        started = time.process_time()
        action()
        times.append(time.process_time() - started)
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
        read_ms = _median_ms(read, 15)
        steps: dict[str, Callable[[], Any]] = {
            f"tools for `{profile}` (`Turn.tools()`)": Turn("turn_bench", "bench", profile, [document], 0.0).tools
            for profile in ("openai", "anthropic", "openai-strict")
        }
        steps["guest catalogue, in process (new runner + `list_tools`)"] = (
            lambda: InProcessRunner(TurnHost([document], fetch=lambda request: {})).list_tools())
        # the cache the test suite warms (tests/conftest.py), unless SKILLHOUSE_GUEST_CACHE says otherwise
        cache_dir = Path(os.environ.get("SKILLHOUSE_GUEST_CACHE") or ROOT / ".data" / "guest")

        def wasm_catalogue() -> str:
            return WasmRunner(TurnHost([document], fetch=lambda request: {}), cache_dir=cache_dir).list_tools()

        wasm_catalogue()  # loads the cached component once, as a server does when it starts
        steps["guest catalogue, wasm, the default (new instance + `list_tools`)"] = wasm_catalogue
        rows = [f"| read the release (row + JSON parse) | {read_ms:.1f} | 1.00 |"]
        shortfalls = []
        for label, step in steps.items():
            spent = _median_ms(step)
            rows.append(f"| {label} | {spent:.1f} | {TURN_START.figure(spent / read_ms)} |")
            shortfalls.append(TURN_START.shortfall(f"turn start, {label}", spent / read_ms,
                                                   f"{spent:.1f} ms against {read_ms:.1f} ms to read the release."))
    missed = [line for line in shortfalls if line]
    return (
        f"## Turn start: {OPERATIONS} bound operations\n\n"
        f"CPU time, medians of 7 (the read: of 15), SQLite. Target: each step ≤ {TURN_START.limit:g} × the time to read the release.\n\n"
        "| step | ms | × read |\n|---|---:|---:|\n" + "\n".join(rows) + "\n"
        + ("\n" + "\n".join(missed) + "\n" if missed else "\nEvery step is within the target.\n")
    )


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    print(run())
