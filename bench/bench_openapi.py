"""OpenAPI import + compile against FastMCP's ``from_openapi`` + tool listing, on the same specs.

Each measurement runs in a fresh subprocess, so its peak memory (max RSS) is its own; each is the
median of ``SKILLHOUSE_BENCH_REPEAT`` runs (3) on this noisy machine. Both sides start from the file
on disk: parsing and imports are part of the work for both.

Both sides import from bytecode caches, as installed packages do: FastMCP's come with its
site-packages install, and skillhouse (an editable install here, under ``PYTHONDONTWRITEBYTECODE``)
gets them in a bench-owned cache directory, filled by one warm-up run before measuring.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.corpus import unpacked_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = unpacked_corpus()
SPECS = ["stripe-2023-09.yaml", "stripe-2018-12.json", "openai.yaml", "jira-platform.json"]
TIMEOUT = float(os.environ.get("SKILLHOUSE_BENCH_TIMEOUT", "300"))
REPEAT = int(os.environ.get("SKILLHOUSE_BENCH_REPEAT", "3"))
WARM_UP = CORPUS / "petstore-v3.yaml"

OURS = """
import json, resource, sys, time
start = time.perf_counter()
from skillhouse.openapi import import_openapi
result = import_openapi(sys.argv[1])
tools = len(result.compiled.operations) if result.compiled is not None else 0
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "tools": tools,
                  "operations": result.report.totals()["operations"]}))
"""

FLOOR = """
import json, resource, sys, time
start = time.perf_counter()
import skillhouse.openapi
print(json.dumps({"seconds": time.perf_counter() - start, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

FASTMCP = """
import asyncio, json, resource, sys, time
start = time.perf_counter()
import yaml
from fastmcp import FastMCP
text = open(sys.argv[1], encoding="utf-8").read()
spec = json.loads(text) if sys.argv[1].endswith(".json") else yaml.load(text, Loader=yaml.CSafeLoader)
server = FastMCP.from_openapi(spec)
tools = asyncio.run(server.list_tools())
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "tools": len(tools)}))
"""


def _once(script: str, spec: Path, env: dict[str, str] | None) -> dict[str, float] | str:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, str(spec)], capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT, env=env
        )
    except subprocess.TimeoutExpired:
        return f"killed at {TIMEOUT:.0f} s"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"fails ({last[:80]})"
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _measure(script: str, spec: Path, env: dict[str, str] | None = None) -> dict[str, float] | str:
    """Medians of ``REPEAT`` fresh processes (time and peak separately); the first failure as is."""
    runs = []
    for _ in range(REPEAT):
        run = _once(script, spec, env)
        if isinstance(run, str):
            return run
        runs.append(run)
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def _bytecode_env(cache: str) -> dict[str, str]:
    """This environment with bytecode written to ``cache`` (none is written into the source tree)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def run() -> str:
    rows = []
    with tempfile.TemporaryDirectory(prefix="skillhouse-bench-pyc-") as cache:
        ours_env = _bytecode_env(cache)
        if WARM_UP.exists():
            _once(OURS, WARM_UP, ours_env)
        for name in SPECS:
            spec = CORPUS / name
            if not spec.exists():
                continue
            ours = _measure(OURS, spec, ours_env)
            peer = _measure(FASTMCP, spec)
            rows.append((name, ours, peer))
        floor = _measure(FLOOR, WARM_UP, ours_env)
    lines = [
        "## OpenAPI import + compile vs FastMCP",
        "",
        "skillhouse: `import_openapi` (parse, convert, fit to 24 KB, render and compile every operation). "
        "FastMCP: `FastMCP.from_openapi` + `list_tools`. A fresh process each, medians of "
        f"{REPEAT}; time includes imports (from bytecode caches on both sides) and the parse; "
        "memory is the process's peak RSS. Target: ratio ≤ 0.1 in both.",
        "",
        "| spec | tools (ours / operations) | ours | FastMCP | time ratio | ours peak | FastMCP peak | memory ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, ours, peer in rows:
        if isinstance(ours, str):
            lines.append(f"| {name} | - | {ours} | - | - | - | - | - |")
            continue
        tools = f"{ours['tools']:.0f} / {ours['operations']:.0f}"
        mine = f"{ours['seconds']:.2f} s"
        my_mem = f"{ours['peak_kb'] / 1024:.0f} MB"
        if isinstance(peer, str):
            lines.append(f"| {name} | {tools} | {mine} | {peer} | - | {my_mem} | - | - |")
            continue
        lines.append(
            f"| {name} | {tools} | {mine} | {peer['seconds']:.2f} s ({peer['tools']:.0f} tools) | "
            f"{ours['seconds'] / peer['seconds']:.3f} | {my_mem} | {peer['peak_kb'] / 1024:.0f} MB | "
            f"{ours['peak_kb'] / peer['peak_kb']:.3f} |"
        )
    lines.extend(["", *_shortfalls(rows, floor)])
    return "\n".join(lines) + "\n"


def _shortfalls(rows: list[tuple[str, dict[str, float] | str, dict[str, float] | str]], floor: dict[str, float] | str) -> list[str]:
    """Where a ratio is over 0.1: by how much, and the part no spec work can remove (imports, interpreter)."""
    out: list[str] = []
    for name, ours, peer in rows:
        if isinstance(ours, str) or isinstance(peer, str):
            continue
        for what, key in (("time", "seconds"), ("memory", "peak_kb")):
            ratio = ours[key] / peer[key]
            if ratio > 0.1:
                out.append(f"- {name}: {what} ratio {ratio:.3f}, {ratio / 0.1:.1f}× the target.")
    if not out:
        return ["Every ratio is within the target."]
    if isinstance(floor, dict):
        out.append(
            f"\nBefore any spec is read, importing `skillhouse.openapi` takes {floor['seconds'] * 1000:.0f} ms (counted, as "
            f"FastMCP's imports are in its time) and the process then has a peak RSS of {floor['peak_kb'] / 1024:.0f} MB "
            "(the interpreter alone is about 8 MB; PyYAML, the compiler and the provider profiles make the rest)."
        )
    out.append(WHY)
    return out


WHY = (
    "\nWhy, from a profile of the import in one process (CPU time, quiet machine): the rest is Python work per "
    "operation, spread thin. openai.yaml: the YAML parse of its 3 MB ~0.13 s, fitting 16 over-size schemas ~0.075 s, "
    "the wizard's size check (a full expansion; 8 schemas of 150-240 KB expanded make most of it) ~0.07 s, compiling "
    "~0.04 s, the six-profile compatibility report ~0.03 s, the release hash ~0.045 s, rendering ~0.03 s. "
    "jira-platform.json: ~0.16 s over some ten steps of 0.01-0.03 s each (the release hash, 1.9 MB of canonical JSON, "
    "and the compatibility report, ~0.025 s each, are the largest). Memory: the import floor above plus the parsed spec (freed before the compile) and the release; "
    "FastMCP's peaks on these specs are small enough that the floor alone is 0.08-0.15 of them."
)


if __name__ == "__main__":
    print(run())
