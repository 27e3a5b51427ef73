"""OpenAPI import + compile against FastMCP's ``from_openapi`` + tool listing, on the same specs.

Each measurement runs in a fresh subprocess, so its peak memory (max RSS) is its own. Both sides
start from the file on disk: parsing is part of the work for both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "openapi"
SPECS = ["stripe-2023-09.yaml", "stripe-2018-12.json", "openai.yaml", "jira-platform.json"]
TIMEOUT = float(os.environ.get("SKILLHOUSE_BENCH_TIMEOUT", "300"))

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


def _measure(script: str, spec: Path) -> dict[str, float] | str:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, str(spec)], capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired:
        return f"killed at {TIMEOUT:.0f} s"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"fails ({last[:80]})"
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def run() -> str:
    rows = []
    for name in SPECS:
        spec = CORPUS / name
        if not spec.exists():
            continue
        ours = _measure(OURS, spec)
        peer = _measure(FASTMCP, spec)
        rows.append((name, ours, peer))
    lines = [
        "## OpenAPI import + compile vs FastMCP",
        "",
        "skillhouse: `import_openapi` (parse, convert, fit to 24 KB, render and compile every operation). "
        "FastMCP: `FastMCP.from_openapi` + `list_tools`. One fresh process each; time includes the parse; "
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
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
