"""No circle in skillhouse's import graph, counting every import: at module level, under
``TYPE_CHECKING`` and inside functions (which ``import-linter``'s layers see too, but only between
layers; a circle inside one package is this test's to catch).

The graph is read from the source's AST, so a deferred import cannot hide a cycle; a failure prints
the circle, module by module.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

Graph = dict[str, set[str]]


def modules_under(root: Path) -> dict[str, Path]:
    """Dotted module name to file for every ``.py`` under ``root`` (a directory holding packages)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_names(module: str, path: Path, modules: Collection[str]) -> Iterator[str]:
    """Every dotted name an import statement anywhere in the module names, relative ones made absolute.

    ``from package import name`` names ``package.name`` when that is a module (as import-linter reads
    it), else ``package``.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def import_graph(root: Path) -> Graph:
    """Module to the modules of ``root`` it imports (the nearest existing module of each name)."""
    modules = modules_under(root)
    graph: Graph = {name: set() for name in modules}
    for module, path in modules.items():
        for name in imported_names(module, path, modules):
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                graph[module].add(target)
    return graph


def find_cycle(graph: Graph) -> list[str] | None:
    """A cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` when it has none."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" after
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_skillhouse_imports_no_module_that_imports_it_back() -> None:
    graph = import_graph(SRC)
    assert "skillhouse.guest.loop" in graph and "skillhouse.registry.releases" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_top_level_package_of_skillhouse_imports_one_that_imports_it_back() -> None:
    graph = import_graph(SRC)
    packages: Graph = {}
    for module, targets in graph.items():
        source = ".".join(module.split(".")[:2])
        packages.setdefault(source, set()).update(
            ".".join(t.split(".")[:2]) for t in targets if ".".join(t.split(".")[:2]) != source
        )
    cycle = find_cycle(packages)
    assert cycle is None, "package cycle: " + " -> ".join(cycle or [])


def test_an_import_inside_a_function_closes_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "house"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "walls.py").write_text("from house.roof import ROOF\n")
    (package / "roof.py").write_text(
        "ROOF = 1\n\n\ndef tiles() -> int:\n    from . import walls\n\n    return len(dir(walls))\n"
    )
    assert find_cycle(import_graph(tmp_path)) == ["house.roof", "house.walls", "house.roof"]


def test_an_import_under_type_checking_closes_a_cycle_too(tmp_path: Path) -> None:
    package = tmp_path / "house"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "guest.py").write_text("from house.loop import run\n")
    (package / "loop.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from house.guest import Guest\n\n\ndef run() -> None: ...\n"
    )
    assert find_cycle(import_graph(tmp_path)) == ["house.guest", "house.loop", "house.guest"]
