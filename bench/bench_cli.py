"""The command line's own cost: ``skillhouse --help``, and ``import-openapi`` + ``tools`` against the same
work done in one Python process, on every spec of the vendored corpus (tests/data/openapi).

Times are CPU seconds of the child processes (:mod:`measuring`), medians of 9 runs, or of
``SKILLHOUSE_BENCH_REPEAT`` when it asks for more: the start-up costs compared here are a few ms, within a
run's noise on this shared machine, so this section takes more runs than the others' 5. The two paths'
runs are interleaved so a change in the machine's load falls on both. Both import from bytecode caches,
as an installed package does. Each spec's first round of the two paths is run and discarded: it would
otherwise fall on the CLI, which runs first, alone paying to compile what the warm-up before it did not
load (the CLI's release cache modules, PyYAML and the YAML reader on the first YAML spec) and to read the
spec into the page cache.

The CLI path is two processes, as a user runs them: ``import-openapi SPEC --out DIR`` (parse, convert,
compile, write the skill and report, keep the release and its tool listing in the release cache) then
``tools DIR/NAME`` (the neutral tool list as JSON, the listing the import kept), each launched through the
installed ``skillhouse`` console script as a user runs it, not ``python -m skillhouse.cli`` (whose runpy costs
each process a few ms a user never pays). Both go through the fast entry (skillhouse.cli.fast), which runs
them without importing Typer. The in-process path is one fresh process doing the same work through the
library: ``import_openapi``, ``write_skill``, and the same JSON text of the tools. The difference is what the command line costs: a second interpreter, reading the settings
and the command modules in each process, the release cache's key (the compiler's fingerprint, a ``stat`` of
its sources, and a hash of the package) in each, and its reads and writes.

Each CLI process ends as the console script ends a fast command (``skillhouse.cli.fast.leave``): its exit
handlers run and its output is flushed, then it exits without the interpreter's teardown, which frees every
module and object one by one (a sixth of ``tools``' instructions on a kept listing, 8% of ``import-openapi``'s
on a small spec). The in-process script ends as a Python program does, teardown included. The start-up
floors below end as the CLI processes do, bar the bare interpreter's.
"""

from __future__ import annotations

import os
import statistics
import sys
import sysconfig
import tempfile
from pathlib import Path

from measuring import bytecode_env, child_cpu, corpus_specs
from targets import CLI_PATH, HELP_CPU

REPEAT = max(int(os.environ.get("SKILLHOUSE_BENCH_REPEAT", "5")), 9)
SCRIPT = Path(sysconfig.get_path("scripts"), "skillhouse")
"""The console script the bench venv's editable install made (``make .venv-bench/.installed``)."""
CLI = [str(SCRIPT)]

IN_PROCESS = """
import json, sys
from skillhouse.compiler import neutral_tool
from skillhouse.openapi import import_openapi, write_skill
result = import_openapi(sys.argv[1])
target = write_skill(result, sys.argv[2] + "/" + result.name)
definitions = [neutral_tool(op) for op in result.compiled.document["operations"]]
sys.stdout.write(json.dumps(definitions, indent=2, ensure_ascii=False) + "\\n")
"""

# What the CLI path pays over the in-process path before any work: the second process (``tools``) starts an
# interpreter (running the console script), imports what the fast entry loads and computes the release cache key
# (the compiler's fingerprint and a hash of the package, here an empty one, argv[1]) before printing the kept
# listing; the first does the same on top of what the library imports. The Settings dataclass and Typer are measured for reference: the
# fast entry imports neither (it reads the release cache through skillhouse.settings_env).
TOOLS_MODULES = ("skillhouse.cli, skillhouse.cli.fast, skillhouse.cli.hot_commands, skillhouse.cli.environment, "
                 "skillhouse.settings_env, skillhouse.release_cache")  # fmt: skip
CLI_MODULES = f"{TOOLS_MODULES}, skillhouse.cli.output"
KEY = "; skillhouse.release_cache.package_key(sys.argv[1])"
LEAVE = "; import os; sys.stdout.flush(); sys.stderr.flush(); os._exit(0)"
"""How a floor's process ends: as the CLI's do (``skillhouse.cli.fast.leave``, written out so that the library's
floor imports nothing of the CLI; no floor registers an exit handler)."""
FLOORS = {
    "bare": "pass",
    "tools": f"import sys, {TOOLS_MODULES}{LEAVE}",
    "tools + key": f"import sys, {TOOLS_MODULES}{KEY}{LEAVE}",
    "tools + settings": f"import sys, {TOOLS_MODULES}, skillhouse.settings{LEAVE}",
    "tools + typer": f"import sys, {TOOLS_MODULES}, typer{LEAVE}",
    "library": f"import sys, json, skillhouse.openapi{LEAVE}",
    "library + cli": f"import sys, json, skillhouse.openapi, {CLI_MODULES}{KEY}{LEAVE}",
}


def _skill_in(directory: Path) -> Path:
    return next(p for p in directory.iterdir() if p.is_dir())


def run() -> str:
    if not SCRIPT.is_file():
        raise SystemExit(f"{SCRIPT}: no skillhouse console script; install the package (make .venv-bench/.installed)")
    specs = corpus_specs()
    with tempfile.TemporaryDirectory(prefix="skillhouse-bench-cli-") as scratch:
        work = Path(scratch)
        env = bytecode_env(str(work / "pycache"), {**os.environ, "SKILLHOUSE_DATA_DIR": str(work / "data")})
        child_cpu([*CLI, "--help"], env)  # fills the bytecode cache
        child_cpu([sys.executable, "-c", IN_PROCESS, str(specs[0]), tempfile.mkdtemp(dir=work)], env)
        help_cpu = statistics.median(child_cpu([*CLI, "--help"], env) for _ in range(REPEAT))
        empty = work / "empty-package"
        empty.mkdir()
        floors = {name: statistics.median(child_cpu([sys.executable, "-c", code, str(empty)], env)
                                          for _ in range(REPEAT))
                  for name, code in FLOORS.items()}  # fmt: skip
        rows, misses = [], []
        for spec in specs:
            imports, tools, totals, inside = [], [], [], []
            for round_ in range(REPEAT + 1):
                out = Path(tempfile.mkdtemp(dir=work))
                cache = {**env, "SKILLHOUSE_RELEASE_CACHE": tempfile.mkdtemp(dir=work)}
                imported = child_cpu([*CLI, "import-openapi", str(spec), "--out", str(out)], cache)
                listed = child_cpu([*CLI, "tools", str(_skill_in(out))], cache)
                in_process = child_cpu([sys.executable, "-c", IN_PROCESS, str(spec), tempfile.mkdtemp(dir=work)], env)
                if round_ == 0:
                    continue  # the warm-up round: see the module's docstring
                imports.append(imported)
                tools.append(listed)
                totals.append(imported + listed)
                inside.append(in_process)
            total, alone = statistics.median(totals), statistics.median(inside)
            ratio = total / alone
            rows.append(
                f"| {spec.name} | {statistics.median(imports) * 1000:.0f} | {statistics.median(tools) * 1000:.0f} | "
                f"{total * 1000:.0f} | {alone * 1000:.0f} | {(total - alone) * 1000:.0f} | {CLI_PATH.figure(ratio)} |"
            )
            if not CLI_PATH.met(ratio):
                misses.append((spec.name, ratio, total, alone))
    typer_ms = (floors["tools + typer"] - floors["tools"]) * 1000
    settings_ms = (floors["tools + settings"] - floors["tools"]) * 1000
    key_ms = (floors["tools + key"] - floors["tools"]) * 1000
    key_text = f"{key_ms:.0f} ms" if key_ms >= 0.5 else "less than this measure tells apart"  # noise can beat it
    second_ms = floors["tools + key"] * 1000
    first_ms = (floors["library + cli"] - floors["library"]) * 1000
    fixed = second_ms + first_ms
    lines = [
        "## Command line: start-up, and CLI against in-process",
        "",
        f"`skillhouse --help`: {HELP_CPU.figure(help_cpu, 3)} s CPU (median of {REPEAT}); target ≤ "
        f"{HELP_CPU.limit:g} s: {HELP_CPU.verdict(help_cpu)}.",
        "",
        f"CPU milliseconds, medians of {REPEAT}. CLI = `skillhouse import-openapi SPEC --out DIR` + `skillhouse tools "
        "DIR/NAME`, two processes, each run through the installed `skillhouse` console script as a user runs it "
        "(not `python -m skillhouse.cli`, whose runpy a user never pays); in-process = `import_openapi` + "
        "`write_skill` + the same tools JSON in one fresh process.",
        "",
        "| spec | CLI import-openapi | CLI tools | CLI total | in-process | CLI − in-process | CLI / in-process (≤ 1.5) |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"Start-up measured in this run (CPU, medians of {REPEAT}): an interpreter importing the fast "
        f"entry's modules and computing the release cache key (a `stat` of the compiler's sources and a hash of "
        f"the package), as `tools` must before printing the kept listing, {second_ms:.0f} ms (of which a bare interpreter {floors['bare'] * 1000:.0f} ms "
        f"and the key {key_text}; the `Settings` dataclass, with the `dataclasses`, `functools`, `inspect`, "
        f"`typing` and `pathlib` it imports, would add {settings_ms:.0f} ms and Typer {typer_ms:.0f} ms: the fast "
        f"entry imports neither, it reads the release cache through `skillhouse.settings_env` and the kept listing "
        f"with `os` alone); the same modules and key on top of what the library imports, as `import-openapi` "
        f"pays, {first_ms:.0f} ms. So the CLI path costs at least about {fixed:.0f} ms more than the in-process path "
        "before any work; nothing is compiled or encoded twice (`tools` prints the tool listing `import-openapi` "
        "kept in the release cache).",
    ]
    lines += [""] if misses else []
    need = fixed / (CLI_PATH.limit - 1)  # the in-process time at which the floor alone is half of it
    for name, ratio, total, alone in misses:
        why = f"CLI {total * 1000:.0f} ms against {alone * 1000:.0f} ms in process, {(total - alone) * 1000:.0f} ms more"
        if alone * 1000 < need:
            why += (
                f"; with the {fixed:.0f} ms start-up floor above, 1.5× needs an in-process time of at least "
                f"{need:.0f} ms, so on a spec this small the start-up alone rules 1.5× out (the `tools` "
                "process's start-up is most of it)."
            )
        else:
            why += f" (start-up floor {fixed:.0f} ms)."
        lines.append(str(CLI_PATH.shortfall(name, ratio, why)))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
