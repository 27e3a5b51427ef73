"""Publish-time checks and compilation of skill packages into release documents."""

from pathlib import Path

from skillhouse.compiler.canonical import canonical_json
from skillhouse.compiler.expansion import SCHEMA_LIMIT, compact_size
from skillhouse.compiler.model import Argument, OperationDecl
from skillhouse.compiler.naming import tool_name
from skillhouse.compiler.release import (
    RELEASE_FORMAT,
    CompiledSkill,
    compile_package,
    neutral_tool,
    release_digest,
)
from skillhouse.skill import SkillError, read_package_dir


def compile_dir(path: str | Path, version: str | None = None) -> tuple[CompiledSkill | None, list[SkillError]]:
    """Read and compile the package in directory ``path``; every error of the package at once."""
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
