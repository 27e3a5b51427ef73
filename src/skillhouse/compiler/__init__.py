"""Publish-time checks and compilation of skill packages into release documents.

The names below load on first use (PEP 562): a command that only reads a compiled release, such as
``skillhouse tools`` on a cached release, then loads the neutral tool definition, not YAML and the
compiler proper.
"""

from __future__ import annotations

import importlib
from pathlib import Path

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.compiler.annotations import neutral_tool
    from skillhouse.compiler.canonical import canonical_json
    from skillhouse.compiler.expansion import SCHEMA_LIMIT, compact_size
    from skillhouse.compiler.model import Argument, OperationDecl
    from skillhouse.compiler.naming import tool_name
    from skillhouse.compiler.release import RELEASE_FORMAT, CompiledSkill, compile_package, release_digest
    from skillhouse.skill import SkillError

_FROM = {
    "neutral_tool": "skillhouse.compiler.annotations",
    "canonical_json": "skillhouse.compiler.canonical",
    "SCHEMA_LIMIT": "skillhouse.compiler.expansion",
    "compact_size": "skillhouse.compiler.expansion",
    "Argument": "skillhouse.compiler.model",
    "OperationDecl": "skillhouse.compiler.model",
    "tool_name": "skillhouse.compiler.naming",
    "RELEASE_FORMAT": "skillhouse.compiler.release",
    "CompiledSkill": "skillhouse.compiler.release",
    "compile_package": "skillhouse.compiler.release",
    "release_digest": "skillhouse.compiler.release",
}


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later lookups find it without coming here
    return value


def compile_dir(path: str | Path, version: str | None = None) -> tuple[CompiledSkill | None, list[SkillError]]:
    """Read and compile the package in directory ``path``; every error of the package at once."""
    from skillhouse.compiler.release import compile_package
    from skillhouse.skill import read_package_dir

    package, read_errors = read_package_dir(path)
    compiled, errors = compile_package(package, version)
    if read_errors:
        return None, sorted(set(read_errors) | set(errors))
    return compiled, errors


__all__ = [
    "RELEASE_FORMAT",
    "SCHEMA_LIMIT",
    "Argument",
    "CompiledSkill",
    "OperationDecl",
    "canonical_json",
    "compact_size",
    "compile_dir",
    "compile_package",
    "neutral_tool",
    "release_digest",
    "tool_name",
]
