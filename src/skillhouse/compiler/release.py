"""Compiling a skill package into its release document, and the document's canonical hash.

The release is the unit that is stored, hashed, served and exported. Its hash is SHA-256 over the
RFC 8785 canonical JSON of the document without its ``digest``, so the same package gives the same
bytes and the same hash on any machine, whatever the YAML formatting or key order.
"""

from __future__ import annotations

import re

from skillhouse.compiler.annotations import neutral_tool
from skillhouse.compiler.canonical import canonical_json, canonical_parts
from skillhouse.compiler.context import OperationContext
from skillhouse.compiler.eager_tools import EAGER_NAMES
from skillhouse.compiler.expansion import new_expansions
from skillhouse.compiler.metaschema import schema_problem
from skillhouse.compiler.model import Argument, OperationDecl
from skillhouse.compiler.naming import tool_name
from skillhouse.compiler.operation import (
    check_file_keys,
    compile_operation,
    parse_gate,
)
from skillhouse.compiler.profiles import compatibility_report
from skillhouse.records import record
from skillhouse.sha256 import sha256
from skillhouse.skill import errors as codes
from skillhouse.skill.errors import SkillError
from skillhouse.skill.package import SkillPackage

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject, OperationDocument, ReleaseDocument

RELEASE_FORMAT = "skillhouse.release/1"
DEFAULT_VERSION = "0.0.0"
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")


@record(frozen=True)
class CompiledSkill:
    """A package that compiled clean: its operations and the release document built from them."""

    operations: tuple[OperationDecl, ...]
    document: ReleaseDocument
    """The release document including its ``digest``."""

    @property
    def digest(self) -> str:
        return str(self.document["digest"])

    def canonical(self) -> bytes:
        return canonical_json(self.document)


def release_digest(document: ReleaseDocument) -> str:
    """``sha256:<hex>`` over the canonical JSON of ``document`` without its ``digest`` key."""
    body = {k: v for k, v in document.items() if k != "digest"}
    digest = sha256()
    for part in canonical_parts(body):  # never the whole text at once: it was the import's peak memory
        digest.update(part)
    return "sha256:" + digest.hexdigest()


def first_paragraph(markdown: str) -> str:
    """The first paragraph of prose (headings skipped), joined onto one line."""
    lines: list[str] = []
    for line in markdown.splitlines():
        if not line.strip():
            if lines:
                break
            continue
        if _HEADING.match(line) and not lines:
            continue
        lines.append(line.strip())
    return " ".join(lines)


def compile_package(package: SkillPackage, version: str | None = None) -> tuple[CompiledSkill | None, list[SkillError]]:
    """Compile ``package``; returns the compiled skill, or ``None`` and every error at once."""
    errors: list[SkillError] = []
    operations: list[OperationDecl] = []
    documents: list[OperationDocument] = []
    gates: list[JsonObject] = []
    names_taken: dict[str, str] = {name: "an eager tool" for name in EAGER_NAMES}
    expansions = new_expansions()  # each shared type expanded once for the whole package
    arguments: dict[tuple[object, ...], Argument] = {}  # and each distinct argument made once
    for type_name, type_schema in package.types.items():
        problem = schema_problem(type_schema)
        if problem is not None:
            line = package.type_line(type_name)
            errors.append(SkillError(package.where("types.json"), line, codes.INVALID_SCHEMA, f"type {type_name!r}: {problem}"))
    for md in package.files:
        front = md.frontmatter
        shown = package.where(md.path)
        body = front.body if front is not None else md.text
        prose = body.strip()
        if front is None:
            documents.append({"path": md.path, "text": prose})
            continue
        ctx = OperationContext(
            skill=package.name,
            file=md.path,
            shown=shown,
            front=front,
            text=md.text,
            types=package.types,
            expansions=expansions,
            arguments=arguments,
        )
        check_file_keys(ctx)
        if "operation" not in front.data:
            gate = parse_gate(ctx)
            if gate is not None:
                gates.append({"file": md.path, "matches": " ".join(gate), **_reason(front.data["approval"])})
            documents.append({"path": md.path, "text": prose})
            errors.extend(ctx.errors)
            continue
        stem = md.path.removesuffix(".md")
        name = tool_name(package.name, stem)
        description = first_paragraph(prose)
        decl = compile_operation(ctx, name, description, prose)
        if name in names_taken:
            ctx.error(
                codes.TOOL_NAME_COLLISION,
                f"tool name {name!r} is already taken by {names_taken[name]}; rename one of the files",
                "operation",
            )
            decl = None
        else:
            names_taken[name] = md.path
        errors.extend(ctx.errors)
        if decl is not None:
            operations.append(decl)
    if package.manifest is None or errors:
        return None, sorted(set(errors))
    manifest = package.manifest
    chosen = version or manifest.metadata.get("version") or DEFAULT_VERSION
    tools = [neutral_tool(op) for op in operations]
    document: ReleaseDocument = {
        "format": RELEASE_FORMAT,
        "skill": manifest.name,
        "version": chosen,
        "description": manifest.description,
        "instructions": manifest.instructions,
        "metadata": dict(sorted(manifest.metadata.items())),
        "license": manifest.license,
        "compatibility_note": manifest.compatibility,
        "operations": [op.document() for op in operations],
        "documents": documents,
        "gates": gates,
        "types": package.types,
        "compatibility": compatibility_report(tools),
    }
    document["digest"] = release_digest(document)
    return CompiledSkill(tuple(operations), document), []


def _reason(approval: Any) -> JsonObject:
    return {"reason": approval["reason"]} if isinstance(approval, dict) and "reason" in approval else {}

