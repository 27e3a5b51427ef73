"""The guest is compiled into a WebAssembly component: it may import the standard library only.

And the root of the error tree (``skillhouse.errors``), which the component carries too and which is
held to the same rule."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "skillhouse"
GUEST = PACKAGE / "guest"
ALLOWED = ("skillhouse.guest", "skillhouse.errors")


def test_importing_the_guest_loads_no_module_outside_the_standard_library() -> None:
    script = (
        "import sys, json; before = set(sys.modules); import skillhouse.guest as guest; "
        "[getattr(guest, name) for name in guest.__all__]; "  # the names load on first use: load them all
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    )
    ours = ("skillhouse", *ALLOWED)
    outside = [
        name
        for name in loaded
        if name.split(".")[0] not in sys.stdlib_module_names
        and name not in ours
        and not name.startswith("skillhouse.guest.")
    ]
    assert outside == []


def test_no_guest_module_names_an_import_outside_the_standard_library() -> None:
    outside: list[str] = []
    for source in [*sorted(GUEST.glob("*.py")), PACKAGE / "errors.py"]:
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and not module.startswith(ALLOWED):
                    outside.append(f"{source.name}: {module}")
    assert outside == []
