"""``make bench``: run every ``bench/bench_*.py`` and write ``docs/benchmarks.md``.

Each module exposes ``run() -> str`` returning a Markdown section. Modules run in their own
process so one's memory peak does not colour another's.
"""

from __future__ import annotations

import datetime
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    sections: list[str] = []
    for module in sorted(HERE.glob("bench_*.py")):
        if wanted and module.stem.removeprefix("bench_") not in wanted:
            continue
        print(f"running {module.name} ...", flush=True)
        proc = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import {module.stem} as m; print(m.run())"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if proc.returncode != 0:
            sections.append(f"## {module.stem}\n\nFailed:\n\n```\n{proc.stderr[-3000:]}\n```\n")
            print(proc.stderr[-3000:], file=sys.stderr)
        else:
            sections.append(proc.stdout.strip() + "\n")
    header = (
        "# Benchmarks\n\n"
        f"Written by `make bench` on {datetime.date.today().isoformat()}, Python {platform.python_version()}, "
        f"{platform.machine()}, 2 cores. Ratios compare runs in the same process or run; absolute times only explain.\n"
    )
    (ROOT / "docs").mkdir(exist_ok=True)
    (ROOT / "docs" / "benchmarks.md").write_text(header + "\n" + "\n".join(sections))
    print("wrote docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
