"""OpenAPI import + compile against FastMCP's ``from_openapi`` + tool listing, on every corpus spec.

Every spec of the vendored corpus (tests/data/openapi) is given to both; a spec FastMCP refuses or
does not finish in ``SKILLHOUSE_BENCH_TIMEOUT`` seconds is listed with what happened and has no ratio.
Targets (``bench/targets.py``): time ≤ 0.1 × FastMCP's; peak memory ≤ 0.1 × on specs of 100+
operations, ≤ 0.5 × on smaller ones; ≥ 99% of the operations become tools. Where a time ratio
misses, the import of that spec is profiled once in this run and its stages are reported.

Each measurement runs in a fresh subprocess, so its peak memory (VmHWM, see PEAK) is its own; each is the
median of ``SKILLHOUSE_BENCH_REPEAT`` runs (3) on this noisy machine, the two sides' runs taken in
turns. Both sides start from the file on disk: parsing and imports are part of the work for both.

The memory target is judged on the whole processes' peaks, as the target is stated. Beside it, in
brackets, the ratio of the peaks less the bare interpreter's (:data:`BARE`, measured in the same run):
both sides run in the same Python, whose own 8-10 MB neither can shrink, so that ratio says what the
libraries themselves take; it is context, never what a target is judged on.

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

from measuring import bytecode_env, corpus_specs
from targets import COVERAGE, IMPORT_MEMORY_LARGE, IMPORT_MEMORY_SMALL, IMPORT_TIME, LARGE_SPEC
from tests.corpus import unpacked_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = unpacked_corpus()
TIMEOUT = float(os.environ.get("SKILLHOUSE_BENCH_TIMEOUT", "300"))
REPEAT = int(os.environ.get("SKILLHOUSE_BENCH_REPEAT", "3"))
WARM_UP = CORPUS / "petstore-v3.yaml"

# The peak is the process's own high-water mark (VmHWM). Not ru_maxrss: Linux carries the launching
# process's peak into an exec'd child's ru_maxrss (subprocess starts children with vfork), so every
# figure would be at least the bench runner's own peak, whatever the child used.
PEAK = """
def _peak_kb():
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
"""

OURS = PEAK + """
import json, sys, time
start, started = time.process_time(), time.perf_counter()
from skillhouse.openapi import import_openapi
result = import_openapi(sys.argv[1])
tools = len(result.compiled.operations) if result.compiled is not None else 0
seconds, wall = time.process_time() - start, time.perf_counter() - started
print(json.dumps({"seconds": seconds, "wall": wall, "peak_kb": _peak_kb(), "tools": tools,
                  "operations": result.report.totals()["operations"]}))
"""

BARE = PEAK + """
import json, sys, time
print(json.dumps({"seconds": 0.0, "peak_kb": _peak_kb()}))
"""
"""The interpreter alone, with what both measuring scripts do before they start the clock."""

FLOOR = PEAK + """
import json, sys, time
start = time.process_time()
import skillhouse.openapi
print(json.dumps({"seconds": time.process_time() - start, "peak_kb": _peak_kb()}))
"""

HELD = PEAK + """
import json, sys
document = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps({"seconds": 0.0, "peak_kb": _peak_kb()}))
"""
"""The interpreter holding the parsed spec and nothing else: the least any import of it can peak at."""

FASTMCP = PEAK + """
import asyncio, json, sys, time
start, started = time.process_time(), time.perf_counter()
import yaml
from fastmcp import FastMCP
text = open(sys.argv[1], encoding="utf-8").read()
spec = json.loads(text) if sys.argv[1].endswith(".json") else yaml.load(text, Loader=yaml.CSafeLoader)
server = FastMCP.from_openapi(spec)
tools = asyncio.run(server.list_tools())
seconds, wall = time.process_time() - start, time.perf_counter() - started
print(json.dumps({"seconds": seconds, "wall": wall, "peak_kb": _peak_kb(), "tools": len(tools)}))
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
    return _medians(runs)


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def _measure_both(spec: Path, env: dict[str, str]) -> tuple[dict[str, float] | str, dict[str, float] | str]:
    """skillhouse's and FastMCP's medians for ``spec``, their ``REPEAT`` processes taken in turns.

    In turns, so a change of load on this shared machine falls on both sides alike: run as two blocks
    (all of one side, then all of the other), a load that came or went between them moved the ratio
    by up to a tenth between two runs of the same code. A side that fails is not run again.
    """
    ours: list[dict[str, float]] = []
    peers: list[dict[str, float]] = []
    failed: dict[str, str] = {}
    for _ in range(REPEAT):
        for side, script, runs, side_env in (("ours", OURS, ours, env), ("peer", FASTMCP, peers, None)):
            if side in failed:
                continue
            run = _once(script, spec, side_env)
            if isinstance(run, str):
                failed[side] = run
            else:
                runs.append(run)
    return failed.get("ours") or _medians(ours), failed.get("peer") or _medians(peers)


PROFILE = """
import cProfile, json, pstats, sys
from skillhouse.openapi import import_openapi
profile = cProfile.Profile()
profile.enable()
import_openapi(sys.argv[1])
profile.disable()
stats = pstats.Stats(profile).stats
print(json.dumps([[file, name, own, cumulative] for (file, _, name), (_, _, own, cumulative, _) in stats.items()]))
"""

STAGES = [
    ("the parse", "openapi/document.py", "load_spec"),
    ("converting and rendering the operations", "openapi/wizard.py", "_convert"),
    ("compiling the package", "openapi/wizard.py", "_compile_as_rendered"),
    ("of which the release hash", "compiler/release.py", "release_digest"),
    ("and the six-profile compatibility report", "compiler/profiles/__init__.py", "compatibility_report"),
]


def _profile(spec: Path, env: dict[str, str]) -> str:
    """Where one import of ``spec`` spends its time, from cProfile in a fresh process of this run."""
    proc = subprocess.run([sys.executable, "-c", PROFILE, str(spec)], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=TIMEOUT)  # fmt: skip
    if proc.returncode != 0:
        return f"{spec.name}: the profile failed ({(proc.stderr.strip().splitlines() or ['no output'])[-1][:80]})."
    entries = [(str(f), str(n), float(own), float(cum)) for f, n, own, cum in json.loads(proc.stdout.strip().splitlines()[-1])]
    total = sum(own for _, _, own, _ in entries)
    parts = []
    for label, file, name in STAGES:
        spent = max((cum for f, n, _, cum in entries if n == name and f.endswith(file)), default=0.0)
        parts.append(f"{label} {spent * 1000:.0f} ms")
    top = sorted(entries, key=lambda e: e[2], reverse=True)[:4]
    own = ", ".join(f"`{name}` ({Path(file).name}) {spent * 1000:.0f} ms" for file, name, spent, _ in top)
    return (f"{spec.name}, profiled once in this run (CPU under cProfile, whose overhead inflates every figure: compare them with one another): "
            f"{total * 1000:.0f} ms in all; {', '.join(parts)}. Most time of their own: {own}.")


def _held(spec: Path, directory: str) -> dict[str, float] | str:
    """The peak of a process that only holds ``spec`` parsed (a YAML spec as the same document in JSON)."""
    if spec.suffix == ".json":
        return _measure(HELD, spec)
    import yaml  # the bench's own reading, to give the held document as JSON

    document = yaml.load(spec.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    as_json = Path(directory) / (spec.stem + ".json")
    as_json.write_text(json.dumps(document, default=str), encoding="utf-8")
    return _measure(HELD, as_json)


def _memory_why(held: dict[str, float] | str | None, floor: dict[str, float] | str, allowed_kb: float) -> str:
    """Why a memory target is out of reach here: what the allowance must already cover before any import work.

    Two floors, both measured in this run: a process holding the parsed spec and nothing else (both sides
    parse the spec whole) and a process that has only imported ``skillhouse.openapi``.
    """
    over = []
    if isinstance(held, dict) and held["peak_kb"] > allowed_kb:
        over.append(f"a process that only holds the parsed spec (json.load) peaks at {held['peak_kb'] / 1024:.1f} MB")
    if isinstance(floor, dict) and floor["peak_kb"] > allowed_kb:
        over.append(f"one that has only imported `skillhouse.openapi` at {floor['peak_kb'] / 1024:.1f} MB")
    if not over:
        return ""
    return f"Not reachable in this interpreter: {' and '.join(over)}, above the {allowed_kb / 1024:.1f} MB the target allows."


def _interpreter(bare: dict[str, float] | str) -> str:
    return f"{bare['peak_kb'] / 1024:.1f} MB" if isinstance(bare, dict) else f"not measured: {bare}, so nothing is taken off"


def run() -> str:
    specs = corpus_specs()
    rows: list[tuple[str, dict[str, float] | str, dict[str, float] | str]] = []
    with tempfile.TemporaryDirectory(prefix="skillhouse-bench-pyc-") as cache:
        ours_env = bytecode_env(cache)
        if WARM_UP.exists():
            _once(OURS, WARM_UP, ours_env)
        for spec in specs:
            rows.append((spec.name, *_measure_both(spec, ours_env)))
        floor = _measure(FLOOR, WARM_UP, ours_env)
        bare = _measure(BARE, WARM_UP)
        slow = [CORPUS / name for name, ours, peer in rows
                if isinstance(ours, dict) and isinstance(peer, dict) and not IMPORT_TIME.met(ours["seconds"] / peer["seconds"])]
        profiles = [_profile(spec, ours_env) for spec in slow]
        held: dict[str, dict[str, float] | str] = {}
        for name, ours, peer in rows:
            if isinstance(ours, dict) and isinstance(peer, dict):
                target = IMPORT_MEMORY_LARGE if ours["operations"] >= LARGE_SPEC else IMPORT_MEMORY_SMALL
                if not target.met(ours["peak_kb"] / peer["peak_kb"]):
                    held[name] = _held(CORPUS / name, cache)
    lines = [
        "## OpenAPI import + compile vs FastMCP",
        "",
        "skillhouse: `import_openapi` (parse, convert, fit to 24 KB, render and compile every operation). "
        "FastMCP: `FastMCP.from_openapi` + `list_tools`. Every corpus spec; a fresh process each, medians of "
        f"{REPEAT}, the two sides' processes taken in turns; time is the process's CPU time from its first import (from bytecode caches on both sides) "
        f"through the parse to the tools; memory is the process's peak RSS (VmHWM), its ratio of the whole processes' peaks; in brackets "
        f"the ratio of the peaks less the bare interpreter's ({_interpreter(bare)}, the same on both sides), for context. Targets: time ratio ≤ {IMPORT_TIME.limit:g}; memory ratio ≤ {IMPORT_MEMORY_LARGE.limit:g} "
        f"on specs of {LARGE_SPEC}+ operations, ≤ {IMPORT_MEMORY_SMALL.limit:g} on smaller ones; ≥ {COVERAGE.limit:g}% "
        "of the operations become tools.",
        "",
        "Wall time is shown beside (same processes, medians): on this shared machine it also measures the "
        "scheduler, so the time target is judged on CPU time.",
        "",
        "| spec | tools / operations | ours CPU (wall) | FastMCP CPU (wall) | time ratio [wall] | ours peak | FastMCP peak | memory ratio (target) [above the interpreter] |",
        "|---|---|---:|---|---:|---:|---:|---:|",
    ]
    shortfalls: list[str] = []
    handled = 0
    for name, ours, peer in rows:
        if isinstance(ours, str):
            lines.append(f"| {name} | - | {ours} | - | - | - | - | - |")
            shortfalls.append(f"- Shortfall: {name}: skillhouse's import {ours}.")
            continue
        operations = ours["operations"]
        coverage = 100 * ours["tools"] / operations if operations else 100.0
        tools = f"{ours['tools']:.0f} / {operations:.0f}"
        mine = f"{ours['seconds']:.2f} s ({ours['wall']:.2f} s)"
        my_mem = f"{ours['peak_kb'] / 1024:.0f} MB"
        memory_target = IMPORT_MEMORY_LARGE if operations >= LARGE_SPEC else IMPORT_MEMORY_SMALL
        shortfalls.append(COVERAGE.shortfall(name, coverage) or "")
        if isinstance(peer, str):
            lines.append(f"| {name} | {tools} | {mine} | {peer} | - | {my_mem} | - | - |")
            continue
        handled += 1
        time_ratio = ours["seconds"] / peer["seconds"]
        base = bare["peak_kb"] if isinstance(bare, dict) else 0.0
        memory_ratio, whole_ratio = (ours["peak_kb"] - base) / (peer["peak_kb"] - base), ours["peak_kb"] / peer["peak_kb"]
        lines.append(
            f"| {name} | {tools} | {mine} | {peer['seconds']:.2f} s ({peer['wall']:.2f} s; {peer['tools']:.0f} tools) | "
            f"{IMPORT_TIME.figure(time_ratio, 3)} [{ours['wall'] / peer['wall']:.3f}] | {my_mem} | {peer['peak_kb'] / 1024:.0f} MB | "
            f"{memory_target.figure(whole_ratio, 3)} (≤ {memory_target.limit:g}) [{memory_ratio:.3f}] |"
        )
        shortfalls.append(IMPORT_TIME.shortfall(name, time_ratio) or "")
        why = _memory_why(held.get(name), floor, memory_target.limit * peer["peak_kb"])
        shortfalls.append(memory_target.shortfall(name, whole_ratio, why) or "")
    shortfalls = [line for line in shortfalls if line]
    lines += ["", f"FastMCP handled {handled} of the {len(rows)} specs; the ratios are for those."]
    lines += ["", *shortfalls] if shortfalls else ["", "Every figure is within its target."]
    if isinstance(floor, dict):
        lines += [
            "",
            f"Before any spec is read, importing `skillhouse.openapi` takes {floor['seconds'] * 1000:.0f} ms (counted, as "
            f"FastMCP's imports are in its time; CPU) and leaves a process with a peak RSS of {floor['peak_kb'] / 1024:.0f} MB.",
        ]
    if profiles:
        lines += ["", "Where the time goes on the specs whose time ratio misses:", "", *(f"- {p}" for p in profiles)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
