"""Fixtures for the wasm runner: the cache the suite shares, the Hollowbrook release, a probe component.

The cache directory is the one ``tests/conftest.py`` points ``SKILLHOUSE_GUEST_CACHE`` at (the repo's
``.data/guest``), so the components are built once per checkout, not once per run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skillhouse.compiler import compile_dir
from skillhouse.host.wasm_build import BuiltComponent, GuestApp, default_cache_dir, ensure_component
from skillhouse.host.wasm_runner import DEFAULT_MEMORY_LIMIT, WasmRunner

ROOT = Path(__file__).resolve().parents[3]
HOLLOWBROOK = ROOT / "examples" / "hollowbrook"
PROBE_APP = GuestApp(Path(__file__).resolve().parent / "probe_app.py")


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    return default_cache_dir()


@pytest.fixture(scope="session")
def agent_component(cache_dir: Path) -> BuiltComponent:
    return ensure_component(cache_dir=cache_dir)


@pytest.fixture(scope="session")
def probe_component(cache_dir: Path) -> BuiltComponent:
    return ensure_component(PROBE_APP, cache_dir)


@pytest.fixture(scope="session")
def hollowbrook() -> dict[str, Any]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, [str(e) for e in errors]
    return compiled.document


@dataclass
class ProbeHost:
    """Host functions for the probe: ``fetch_url`` echoes, ``complete`` may hold the guest a while."""

    hold: float = 0.0
    fail_complete: bool = False
    requests: list[str] = field(default_factory=list)
    logs: list[tuple[str, str]] = field(default_factory=list)

    def eager_tools(self) -> str:
        return json.dumps([{"name": "probe"}])

    def skill_operations(self) -> str:
        return "[]"

    def read_object(self, path: str) -> str:
        return json.dumps({"error": {"code": "not-found", "message": path}})

    def fetch_url(self, request: str) -> str:
        self.requests.append(request)
        return json.dumps({"status": 200, "headers": {}, "body": request})

    def complete(self, request: str) -> str:
        if self.fail_complete:
            raise ConnectionError("the model provider is down")
        # the host working for longer than the guest may run: an event nobody sets, with a timeout
        threading.Event().wait(self.hold)
        return json.dumps({"content": "done", "tool_calls": []})

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))


@pytest.fixture
def probe(
    probe_component: BuiltComponent, cache_dir: Path
) -> Iterator[Callable[..., tuple[WasmRunner, ProbeHost]]]:
    """``probe(timeout=..., memory_limit=..., hold=...)``: a wasm runner of the probe component and its host."""
    runners: list[WasmRunner] = []

    def make(timeout: float = 5.0, memory_limit: int = DEFAULT_MEMORY_LIMIT, **host_options: Any) -> tuple[WasmRunner, ProbeHost]:
        host = ProbeHost(**host_options)
        runner = WasmRunner(host, cache_dir=cache_dir, timeout=timeout, memory_limit=memory_limit, app=PROBE_APP)
        runners.append(runner)
        return runner, host

    yield make
    for runner in runners:
        runner.close()
