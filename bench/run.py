"""``make bench``: run every ``bench/bench_*.py`` and write ``docs/benchmarks.md`` from that one run.

Each module exposes ``run() -> str`` returning a Markdown section. Modules run in their own
process so one's memory peak does not colour another's. The document carries only what this run
measured: the machine's load average is recorded around every section (the machine is shared, and
its load moves absolute times), and every shortfall line a section printed (see ``bench/targets.py``)
is gathered at the top.

``python bench/run.py NAME...`` runs only those sections (``openapi``, ``cli``, ...) and prints them
instead of writing the document, which always holds one whole run; ``--out FILE`` writes them there.
``SKILLHOUSE_BENCH_SPECS=a.json,b.yaml`` limits the OpenAPI and CLI sections to those corpus specs (a
trial, printed likewise); ``SKILLHOUSE_BENCH_REPEAT`` sets how many fresh processes their medians take.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from measuring import load_average
from targets import SHORTFALL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
_MARK = "<!-- bench:"


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return f"{head} with uncommitted changes" if git("status", "--porcelain", "--", "src", "bench") else head


def _section(module: Path) -> str:
    short = module.stem.removeprefix("bench_")
    print(f"running {module.name} ...", flush=True)
    load_before, started = load_average(), time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import {module.stem} as m; print(m.run())"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    minutes = (time.monotonic() - started) / 60
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        body = f"## {module.stem}\n\nFailed:\n\n```\n{proc.stderr[-3000:]}\n```\n"
    else:
        body = proc.stdout.strip() + "\n"
    return (
        f"{_MARK}{short} -->\n{body}\n"
        f"_{module.name}: {minutes:.1f} min; load average (1 min) {load_before:.1f} at its start, "
        f"{load_average():.1f} at its end._\n"
    )


def main(argv: list[str]) -> int:
    out: Path | None = None
    if "--out" in argv:
        at = argv.index("--out")
        out, argv = Path(argv[at + 1]), argv[:at] + argv[at + 2 :]
    wanted = set(argv)
    modules = [m for m in sorted(HERE.glob("bench_*.py")) if not wanted or m.stem.removeprefix("bench_") in wanted]
    unknown = wanted - {m.stem.removeprefix("bench_") for m in modules}
    if unknown:
        print(f"no such section: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    started = datetime.datetime.now(datetime.UTC)
    load_before = load_average()
    sections = [_section(module) for module in modules]
    shortfalls = [line for text in sections for line in text.splitlines() if line.startswith(SHORTFALL)]
    missed = (
        f"## Targets missed in this run ({len(shortfalls)})\n\n" + "\n".join(shortfalls) + "\n"
        if shortfalls
        else "## Targets missed in this run\n\nNone.\n"
    )
    header = (
        "# Benchmarks\n\n"
        f"Written by `make bench` from one run started {started:%Y-%m-%d %H:%M} UTC at commit {_commit()}: "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores shared with other work; "
        f"load average (1 min) {load_before:.1f} at the start, {load_average():.1f} at the end. Ratios compare runs "
        "made side by side in this run; absolute times only explain. Each section says what its numbers are; the "
        "targets it checks are in `bench/targets.py`.\n"
    )
    text = header + "\n" + missed + "\n" + "\n".join(sections)
    # a run of some sections or some specs is a trial: the document holds whole runs only
    if (wanted or os.environ.get("SKILLHOUSE_BENCH_SPECS")) and out is None:
        print(text)
        return 0
    target = out or ROOT / "docs" / "benchmarks.md"
    target.parent.mkdir(exist_ok=True)
    target.write_text(text)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
