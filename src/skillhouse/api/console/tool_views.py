"""What the registry pages show of tools: a version's document, a tool per profile, two versions' diff.

A published version is shown from its release (the stored, hashed document); a draft or validated
one is compiled from its stored files, so its tools can be looked at and compared before publishing.
A release's tools are shown a page at a time, filtered by words in their names and descriptions
(:func:`tools_page`). The diff compares tools by name: added, removed, and for a tool in both, every change to its method,
URL, description, approval gate, identity and schema, each with the JSON Pointer of what changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skillhouse.compiler import compile_package, neutral_tool
from skillhouse.compiler.profiles import PROFILES, adapt
from skillhouse.gateway.audit_queries import Direction, Page
from skillhouse.json_types import JsonObject, OperationDocument, ReleaseDocument
from skillhouse.registry.errors import NotFound
from skillhouse.registry.releases import ReleaseView, get_release
from skillhouse.registry.skills import VersionView, get_version
from skillhouse.skill import read_package
from skillhouse.store import Session

TOOLS_PER_PAGE = 50
COMPARED = ("method", "url", "description", "approval", "identity", "encoding", "headers")


@dataclass(frozen=True)
class VersionDocument:
    """A version, its release if published, and its compiled document (``None`` if it does not compile)."""

    version: VersionView
    release: ReleaseView | None
    document: ReleaseDocument | None

    def operations(self) -> dict[str, OperationDocument]:
        """Operation documents by tool name."""
        if self.document is None:
            return {}
        return {str(op["tool_name"]): op for op in self.document.get("operations", [])}


@dataclass(frozen=True)
class Change:
    """One difference: where (a field or a JSON Pointer into the schema), what kind, before and after."""

    where: str
    kind: str
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class ToolDiff:
    name: str
    changes: list[Change] = field(default_factory=list)


@dataclass(frozen=True)
class VersionsDiff:
    added: list[str]
    removed: list[str]
    changed: list[ToolDiff]
    unchanged: list[str]


def version_document(session: Session, tenant: str, skill: str, version: str) -> VersionDocument:
    """``skill@version`` of ``tenant`` (or a built-in); :class:`NotFound` when it is neither."""
    view = get_version(session, tenant, skill, version)
    try:
        release: ReleaseView | None = get_release(session, tenant, skill, version)
    except NotFound:
        release = None
    if release is not None:
        return VersionDocument(view, release, release.document)
    package, read_errors = read_package(skill, dict(view.files or {}), label="")
    compiled, errors = compile_package(package, version)
    document = compiled.document if compiled is not None and not read_errors and not errors else None
    return VersionDocument(view, None, document)


def tool_per_profile(operation: OperationDocument, profile: str) -> JsonObject:
    """The neutral tool and what ``profile`` makes of it: wire form, changes, or why it is refused."""
    neutral = neutral_tool(operation)
    adapted = adapt(neutral, profile)
    return {"neutral": neutral, "profile": profile, "status": adapted.status, "wire": adapted.tool,
            "changes": list(adapted.changes), "refusal": adapted.refusal}


def profiles() -> tuple[str, ...]:
    return PROFILES


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def schema_changes(before: Any, after: Any, path: str = "") -> list[Change]:
    """Every difference between two schemas, property by property, as JSON Pointers."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes: list[Change] = []
        for key in sorted(set(before) | set(after)):
            where = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key not in after:
                changes.append(Change(where, "removed", _show(before[key]), None))
            elif key not in before:
                changes.append(Change(where, "added", None, _show(after[key])))
            elif key == "required" and isinstance(before[key], list) and isinstance(after[key], list):
                now, was = set(map(str, after[key])), set(map(str, before[key]))
                changes += [Change(f"{path}/properties/{name}", "now required") for name in sorted(now - was)]
                changes += [Change(f"{path}/properties/{name}", "now optional") for name in sorted(was - now)]
            else:
                changes += schema_changes(before[key], after[key], where)
        return changes
    if before != after:
        return [Change(path or "/", "changed", _show(before), _show(after))]
    return []


def diff_versions(old: VersionDocument, new: VersionDocument) -> VersionsDiff:
    """The tools of ``new`` compared with those of ``old``."""
    before, after = old.operations(), new.operations()
    changed: list[ToolDiff] = []
    unchanged: list[str] = []
    for name in sorted(set(before) & set(after)):
        changes = [
            Change(key, "changed", _show(before[name].get(key)), _show(after[name].get(key)))
            for key in COMPARED if before[name].get(key) != after[name].get(key)
        ]
        changes += schema_changes(before[name].get("schema", {}), after[name].get("schema", {}), "/schema")
        if changes:
            changed.append(ToolDiff(name, changes))
        else:
            unchanged.append(name)
    return VersionsDiff(sorted(set(after) - set(before)), sorted(set(before) - set(after)), changed, unchanged)


def tool_matches(name: str, operation: OperationDocument, words: list[str]) -> bool:
    """Whether every word (case-insensitive) is in the tool's name, operation name or description."""
    text = f"{name} {operation.get('name', '')} {operation.get('description', '')}".lower()
    return all(word in text for word in words)


def tools_page(operations: dict[str, OperationDocument], query: str, cursor: str = "", direction: Direction = "older",
               size: int = TOOLS_PER_PAGE) -> Page[tuple[str, OperationDocument]]:
    """The tools matching ``query`` in name order, ``size`` at a time: those after ``cursor`` (a tool name;
    ``direction`` ``older`` is the next page, ``newer`` the previous), with how many match in all."""
    words = query.lower().split()
    names = sorted(name for name, op in operations.items() if tool_matches(name, op, words))
    if cursor and direction == "newer":
        end = sum(1 for name in names if name < cursor)
        start = max(0, end - size)
    else:
        start = sum(1 for name in names if name <= cursor) if cursor else 0
        end = start + size
    shown = names[start:end]
    return Page([(name, operations[name]) for name in shown], len(names),
                shown[0] if shown and start > 0 else None, shown[-1] if shown and end < len(names) else None)
