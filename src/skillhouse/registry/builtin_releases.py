"""The releases of the built-in skills, compiled from their specs, and the operation behind a built-in capability.

A built-in skill has no rows: its release is compiled from its spec and the operation files of the
tools it allows (:mod:`skillhouse.registry.builtin_operations`), deterministically, so it is cached.
:func:`compile_files` is the one compile step every release goes through, built-in or published.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

from skillhouse.compiler import compile_package
from skillhouse.json_types import OperationDocument, ReleaseDocument
from skillhouse.registry.builtin_operations import OPERATIONS, PROVIDER_SKILLS, operation_files
from skillhouse.registry.builtins import builtin_skill, builtin_tool
from skillhouse.registry.bundle import files_from_skill_spec
from skillhouse.registry.errors import Invalid, NotFound
from skillhouse.skill import read_package


@dataclass(frozen=True)
class ReleaseView:
    """A release: the canonical document (and its digest), the bundle files, when published."""

    skill: str
    version: str
    digest: str
    document: ReleaseDocument
    files: dict[str, str]
    created_at: dt.datetime | None
    builtin: bool = False


@lru_cache(maxsize=8)
def builtin_release(skill: str) -> ReleaseView:
    """The release of a built-in skill, compiled from its spec (deterministic, so cached)."""
    spec = builtin_skill(skill)
    if spec is None:
        raise NotFound("not-found", f"no built-in skill {skill}")
    tools = [tool for ref in spec.allowed_tools if (tool := builtin_tool(ref.tool_id, ref.version)) is not None]
    # a built-in's tools are ours, so their capabilities come with their HTTP operations
    files = {**files_from_skill_spec(spec, tools), **operation_files(tools)}
    compiled = compile_files(skill, str(spec.version), files)
    return ReleaseView(skill, str(spec.version), compiled["digest"], compiled, files, None, True)


def compile_files(skill: str, version: str, files: dict[str, str]) -> ReleaseDocument:
    """``files`` read as skill ``skill`` and compiled at ``version``: the release document, or ``Invalid``."""
    package, read_errors = read_package(skill, files, label="")
    compiled, errors = compile_package(package, version)
    if compiled is None or read_errors:
        found = sorted(set(read_errors) | set(errors))
        raise Invalid("check-failed", f"{skill} {version} does not compile", [dict(e.as_dict()) for e in found])
    return compiled.document


def capability_operation(provider: str, capability: str) -> tuple[ReleaseDocument, OperationDocument] | None:
    """The built-in release holding ``provider``'s operations and the operation of ``capability``."""
    skill = PROVIDER_SKILLS.get(provider)
    if skill is None or capability not in OPERATIONS.get(provider, {}):
        return None
    document = builtin_release(skill).document
    operation = next((op for op in document.get("operations", []) if op["name"] == capability), None)
    return None if operation is None else (document, operation)
