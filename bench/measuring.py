"""How the benchmarks measure: child processes' CPU time, and bytecode for the editable install.

Times of child processes are CPU seconds (user + system): on this shared machine they move far less
with the load than wall time. Imports are from bytecode caches, as an installed package's are: the
editable checkout under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile skillhouse's sources in
every process, which no user pays (``bytecode_env``; the caller warms the cache with one run).
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_cpu(command: list[str], env: Mapping[str, str], timeout: float = 600) -> float:
    """CPU seconds the command's process took (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=dict(env),
                   timeout=timeout)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bytecode_env(cache: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (this environment) with bytecode written to ``cache``, none into the source tree."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def load_average() -> float:
    """The 1-minute load average (runnable processes) of this machine."""
    return os.getloadavg()[0]


def corpus_specs() -> list[Path]:
    """The corpus specs (tests/data/openapi, unpacked); ``SKILLHOUSE_BENCH_SPECS=a.json,b.yaml`` picks some (trials)."""
    from tests.corpus import unpacked_corpus

    specs = sorted(unpacked_corpus().iterdir())
    chosen = [name for name in os.environ.get("SKILLHOUSE_BENCH_SPECS", "").split(",") if name]
    return [spec for spec in specs if spec.name in chosen] if chosen else specs
