"""The layer contract in pyproject.toml is live: ``lint-imports`` keeps it on the code as it is, and breaks
on a copy of the code that imports upwards, even when the import sits inside a function.

``make lint`` runs ``lint-imports``; these tests run the same command the same way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with ``project``'s pyproject.toml, analysing the ``skillhouse`` found under ``project/src``."""
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=project, env=env, capture_output=True, text=True,
                          timeout=120)


def copy_of_the_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "src" / "skillhouse", project / "src" / "skillhouse",
                    ignore=shutil.ignore_patterns("__pycache__", "static", "templates", "wit", "wasm_app"))
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    return project


def add_function(project: Path, module: str, body: str) -> None:
    path = project / "src" / Path(*module.split(".")).with_suffix(".py")
    path.write_text(path.read_text() + f"\n\ndef _added_by_the_test() -> None:\n    {body}\n")


def test_the_code_keeps_every_import_contract() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: 7 kept, 0 broken\.", done.stdout), done.stdout


def test_an_unchanged_copy_keeps_them_too(tmp_path: Path) -> None:
    # the copy is analysed, not the installed checkout: the tests below rest on that
    done = lint_imports(copy_of_the_project(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_pure_core_importing_the_store_inside_a_function_breaks_the_layers(tmp_path: Path) -> None:
    project = copy_of_the_project(tmp_path)
    add_function(project, "skillhouse.compiler.naming", "from skillhouse.store import Database  # noqa")
    done = lint_imports(project)
    assert done.returncode == 1
    assert "One-way floors" in done.stdout and "BROKEN" in done.stdout
    assert "skillhouse.compiler.naming -> skillhouse.store" in done.stdout


def test_the_guest_importing_yaml_the_registry_the_guest_the_api_sqlalchemy_and_an_integration_the_gateway_each_break_a_contract(
    tmp_path: Path,
) -> None:
    project = copy_of_the_project(tmp_path)
    add_function(project, "skillhouse.guest.values", "import yaml  # noqa")
    add_function(project, "skillhouse.registry.turns", "from skillhouse.guest import Catalogue  # noqa")
    add_function(project, "skillhouse.api.routes_keys", "from sqlalchemy import select  # noqa")
    add_function(project, "skillhouse.integrations.common", "from skillhouse.gateway import pipeline  # noqa")
    done = lint_imports(project)
    assert done.returncode == 1
    assert "Contracts: 3 kept, 4 broken." in done.stdout
    assert "skillhouse.integrations.common -> skillhouse.gateway" in done.stdout
    assert "skillhouse.guest.values -> yaml" in done.stdout
    assert "skillhouse.registry.turns -> skillhouse.guest" in done.stdout
    assert "skillhouse.api.routes_keys -> sqlalchemy" in done.stdout


def test_the_error_root_importing_a_library_or_a_layer_breaks_its_contracts(tmp_path: Path) -> None:
    # every layer, the guest's component included, imports it: it must stay the standard library's alone
    project = copy_of_the_project(tmp_path)
    add_function(project, "skillhouse.errors", "import httpx  # noqa")
    add_function(project, "skillhouse.errors", "from skillhouse.settings import Settings  # noqa")
    done = lint_imports(project)
    assert done.returncode == 1
    # the floors, the root's own contract, and the guest's, which now reaches the settings through the root
    assert "Contracts: 4 kept, 3 broken." in done.stdout
    assert "skillhouse.errors -> httpx" in done.stdout
    assert "skillhouse.errors is not allowed to import skillhouse.settings" in done.stdout
    assert "skillhouse.guest is not allowed to import skillhouse.settings" in done.stdout


def test_make_lint_runs_the_import_contract() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe is not None
    assert "$(BIN)/lint-imports" in recipe.group(1)
