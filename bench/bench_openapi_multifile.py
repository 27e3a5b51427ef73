"""OpenAPI import of multi-file specs: time and peak memory, and the cost of the many files.

Two specs: the hand-made multi-file test spec (tests/data/openapi/multifile: 10 operations over 18
files in 8 directories, three references broken on purpose), and the vendored stripe-2023-09.yaml
split into a file per path item and per component (as teams keep large specs), against the same spec
as one file. Each figure is the median of ``SKILLHOUSE_BENCH_REPEAT`` (3) fresh processes: time
includes the imports of Python modules, the parse of every file and the compile; memory is the
process's peak RSS. The split and the single spec give the same tools (tests/openapi/test_multifile.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.corpus import corpus_spec
from tests.openapi.split_spec import split_spec

from skillhouse.openapi import load_spec

ROOT = Path(__file__).resolve().parent.parent
SHELF = ROOT / "tests" / "data" / "openapi" / "multifile" / "api" / "openapi.yaml"
SPLIT = "stripe-2023-09.yaml"
REPEAT = int(os.environ.get("SKILLHOUSE_BENCH_REPEAT", "3"))
TIMEOUT = float(os.environ.get("SKILLHOUSE_BENCH_TIMEOUT", "300"))

IMPORT = """
import json, resource, sys, time
start = time.perf_counter()
from skillhouse.openapi import import_openapi
result = import_openapi(sys.argv[1])
totals = result.report.totals()
print(json.dumps({"seconds": time.perf_counter() - start, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "tools": totals["written"] + totals["adapted"], "operations": totals["operations"],
                  "problems": len(result.report.problems)}))
"""


def _measure(spec: Path, env: dict[str, str]) -> dict[str, float] | str:
    runs = []
    for _ in range(REPEAT):
        try:
            proc = subprocess.run([sys.executable, "-c", IMPORT, str(spec)], capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            return f"killed at {TIMEOUT:.0f} s"
        if proc.returncode != 0:
            return "fails (" + (proc.stderr.strip().splitlines() or ["no output"])[-1][:80] + ")"
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(float(r[key]) for r in runs) for key in runs[0]}


def _row(label: str, files: int, measured: dict[str, float] | str) -> str:
    if isinstance(measured, str):
        return f"| {label} | {files} | - | {measured} | - |"
    tools = f"{measured['tools']:.0f} / {measured['operations']:.0f} ({measured['problems']:.0f} refs not followed)"
    return f"| {label} | {files} | {tools} | {measured['seconds']:.2f} s | {measured['peak_kb'] / 1024:.0f} MB |"


def run() -> str:
    rows = []
    with tempfile.TemporaryDirectory(prefix="skillhouse-bench-multifile-") as scratch:
        # bytecode in a bench-owned cache, filled by a warm-up run: installed packages import from bytecode
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pyc")
        _measure(SHELF, env)
        shelf_files = sum(1 for p in SHELF.parent.rglob("*.yaml"))
        rows.append(_row("multifile test spec (api/openapi.yaml)", shelf_files, _measure(SHELF, env)))
        single = corpus_spec(SPLIT)
        root = split_spec(load_spec(single).root, Path(scratch) / "split")
        split_files = sum(1 for p in root.parent.rglob("*.yaml"))
        split = _measure(root, env)
        whole = _measure(single, env)
        rows.append(_row(f"{SPLIT} split into files", split_files, split))
        rows.append(_row(f"{SPLIT} as one file", 1, whole))
    lines = [
        "## OpenAPI import of multi-file specs",
        "",
        f"`import_openapi` on a spec whose references reach other files (parse every file, follow the references, "
        f"convert, fit, render and compile). A fresh process each, medians of {REPEAT}; time includes imports; "
        "memory is the process's peak RSS.",
        "",
        "| spec | files | tools / operations | time | peak |",
        "|---|---|---|---|---|",
        *rows,
    ]
    if isinstance(split, dict) and isinstance(whole, dict):
        lines += [
            "",
            f"Split / one file: time {split['seconds'] / whole['seconds']:.2f}, memory {split['peak_kb'] / whole['peak_kb']:.2f} "
            f"(the split spec is {split_files} YAML files; the same tools either way).",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
