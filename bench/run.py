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
_MARK = "<!-- bench:"


def _sections(text: str) -> dict[str, str]:
    """The sections of an existing ``docs/benchmarks.md`` by module, from their markers."""
    found: dict[str, str] = {}
    for part in text.split(_MARK)[1:]:
        name, _, body = part.partition(" -->\n")
        found[name.strip()] = body.rstrip() + "\n"
    return found


def main(argv: list[str]) -> int:
    wanted = set(argv)
    target = ROOT / "docs" / "benchmarks.md"
    sections: dict[str, str] = {}
    for module in sorted(HERE.glob("bench_*.py")):
        short = module.stem.removeprefix("bench_")
        if wanted and short not in wanted:
            continue
        print(f"running {module.name} ...", flush=True)
        proc = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import {module.stem} as m; print(m.run())"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if proc.returncode != 0:
            sections[short] = f"## {module.stem}\n\nFailed:\n\n```\n{proc.stderr[-3000:]}\n```\n"
            print(proc.stderr[-3000:], file=sys.stderr)
        else:
            sections[short] = proc.stdout.strip() + "\n"
    header = (
        "# Benchmarks\n\n"
        f"Written by `make bench` (last run {datetime.date.today().isoformat()}), Python {platform.python_version()}, "
        f"{platform.machine()}, 2 cores. Ratios compare runs in the same process or run; absolute times only explain. "
        "`python bench/run.py NAME...` reruns some sections and keeps the others.\n"
    )
    target.parent.mkdir(exist_ok=True)
    if wanted and target.exists():
        # read just before writing, so sections another run wrote meanwhile are kept
        sections = {**_sections(target.read_text()), **sections}
    body = "\n".join(f"{_MARK}{name} -->\n{text}" for name, text in sorted(sections.items()))
    target.write_text(header + "\n" + body)
    print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
