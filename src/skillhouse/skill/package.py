"""Reading a skill package: SKILL.md, operation files, plain documents and ``types.json``.

A package comes from a directory or from a mapping of file names to bytes (an upload); both give
the same :class:`SkillPackage`. Nothing here judges operations: that is the compiler's work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from skillhouse.records import field, record
from skillhouse.skill.errors import (
    INVALID_FRONTMATTER,
    INVALID_SCHEMA,
    INVALID_SKILL_MANIFEST,
    SkillError,
)
from skillhouse.skill.files import CURATION_FILE, RECORD_FILE
from skillhouse.skill.frontmatter import MarkdownFile, decode_utf8, split_markdown

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.json_types import JsonSchema

MANIFEST = "SKILL.md"
TYPES = "types.json"
SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MANIFEST_KEYS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
MAX_FILE_BYTES = 1_048_576
CURATION_FILES = (CURATION_FILE, RECORD_FILE)


@record(frozen=True)
class SkillManifest:
    """SKILL.md: Agent Skills frontmatter and the instructions below it."""

    name: str
    description: str
    instructions: str
    metadata: dict[str, str] = field(default_factory=dict)
    license: str | None = None
    compatibility: str | None = None


@record(frozen=True)
class SkillPackage:
    """A skill package as read from disk or an upload."""

    name: str
    """The directory name, which SKILL.md's ``name`` must equal."""
    label: str
    """How errors name the package's files (``examples/hollowbrook``)."""
    manifest: SkillManifest | None
    files: tuple[MarkdownFile, ...]
    """Every Markdown file but SKILL.md, sorted by name."""
    types: dict[str, JsonSchema]
    """``types.json`` (name to JSON Schema), empty when absent."""
    types_text: str = ""
    """``types.json`` as written, for locating a type when one is reported."""

    def type_line(self, name: str) -> int:
        """The line of type ``name`` in types.json (found only when an error needs it)."""
        return _line_of_key(self.types_text, name)

    def where(self, filename: str) -> str:
        return f"{self.label}/{filename}" if self.label else filename


def read_package_dir(path: str | Path) -> tuple[SkillPackage, list[SkillError]]:
    """Read the package in directory ``path`` (top-level files only)."""
    root = Path(path)
    label = str(path).rstrip("/") or "."
    if not root.is_dir():
        error = SkillError(label, 1, INVALID_SKILL_MANIFEST, "not a directory; give the skill package's directory")
        return SkillPackage(root.name, label, None, (), {}), [error]
    return read_package(root.resolve().name, package_files(root), label=label)


def package_files(path: str | Path) -> dict[str, bytes]:
    """The files of the package in directory ``path`` that a release is made of: the top-level Markdown
    files, ``types.json`` and the curation files (what a client uploads to publish it)."""
    files: dict[str, bytes] = {}
    for entry in sorted(Path(path).iterdir()):
        if entry.is_file() and (entry.suffix == ".md" or entry.name in (TYPES, *CURATION_FILES)):
            files[entry.name] = entry.read_bytes()
    return files


def read_package(
    name: str, files: Mapping[str, bytes | str], label: str | None = None, parsed: Mapping[str, MarkdownFile] | None = None
) -> tuple[SkillPackage, list[SkillError]]:
    """Read a package from ``files`` (file name to content). Returns the package and every error.

    ``parsed`` holds Markdown files of ``files`` already split and parsed by whoever wrote them (the
    wizard renders them from their data): their frontmatter is taken as given rather than parsed again.
    """
    label = name if label is None else label
    where = (lambda f: f"{label}/{f}") if label else (lambda f: f)
    errors: list[SkillError] = []
    manifest: SkillManifest | None = None
    markdown: list[MarkdownFile] = []
    types: dict[str, JsonSchema] = {}
    types_text = ""

    for filename in sorted(files):
        raw = files[filename]
        data = raw.encode("utf-8") if isinstance(raw, str) else raw
        shown = where(filename)
        if "/" in filename or filename.startswith("."):
            continue  # nested folders (scripts/, references/) are not part of the declaration
        if len(data) > MAX_FILE_BYTES:
            errors.append(SkillError(shown, 1, INVALID_FRONTMATTER, f"file is larger than {MAX_FILE_BYTES} bytes"))
            continue
        text = decode_utf8(shown, data)
        if isinstance(text, SkillError):
            errors.append(text)
            continue
        if "\r" in text:
            # a checkout with CRLF (or CR) line endings is the same package: same release, same digest
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if filename == TYPES:
            types, type_errors = _read_types(shown, text)
            types_text = text
            errors.extend(type_errors)
            continue
        if not filename.endswith(".md"):
            continue
        given = parsed.get(filename) if parsed is not None else None
        markdown_file, md_errors = (given, []) if given is not None else split_markdown(shown, text)
        errors.extend(md_errors)
        if markdown_file is None:
            if filename == MANIFEST:
                manifest = None
                errors.append(SkillError(shown, 1, INVALID_SKILL_MANIFEST, "SKILL.md could not be read (see above)"))
            continue
        if filename == MANIFEST:
            manifest, manifest_errors = _read_manifest(name, shown, markdown_file)
            errors.extend(manifest_errors)
        else:
            markdown.append(MarkdownFile(filename, markdown_file.text, markdown_file.frontmatter))

    if MANIFEST not in files:
        errors.append(
            SkillError(where(MANIFEST), 1, INVALID_SKILL_MANIFEST, "the package has no SKILL.md; add one with name and description")
        )
    # curation.yaml is not part of the declaration, but a package is not ready while it is stale
    if CURATION_FILE in files:
        from skillhouse.skill.curation import check_curation  # here: most packages have no overlay

        errors.extend(check_curation(files, where))
    return SkillPackage(name, label, manifest, tuple(markdown), types, types_text), errors


def _read_manifest(dirname: str, shown: str, parsed: MarkdownFile) -> tuple[SkillManifest | None, list[SkillError]]:
    front = parsed.frontmatter
    if front is None:
        return None, [SkillError(shown, 1, INVALID_SKILL_MANIFEST, "SKILL.md needs frontmatter with name and description")]
    errors: list[SkillError] = []
    data = front.data
    for key in data:
        if key not in MANIFEST_KEYS:
            errors.append(
                SkillError(
                    shown,
                    front.line_of(key),
                    INVALID_SKILL_MANIFEST,
                    f"unexpected key {key!r} in SKILL.md; allowed: {', '.join(sorted(MANIFEST_KEYS))}",
                )
            )
    name = data.get("name")
    if not isinstance(name, str) or not name:
        errors.append(SkillError(shown, front.line_of("name"), INVALID_SKILL_MANIFEST, "SKILL.md needs a 'name' string"))
    elif len(name) > 64 or not SKILL_NAME.match(name):
        errors.append(
            SkillError(
                shown,
                front.line_of("name"),
                INVALID_SKILL_MANIFEST,
                f"name {name!r} must be 1-64 lowercase letters, digits and single hyphens, not starting or ending with one",
            )
        )
    elif name != dirname:
        errors.append(
            SkillError(
                shown, front.line_of("name"), INVALID_SKILL_MANIFEST, f"name {name!r} must equal the directory name {dirname!r}"
            )
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        errors.append(
            SkillError(shown, front.line_of("description"), INVALID_SKILL_MANIFEST, "SKILL.md needs a non-empty 'description' string")
        )
    elif len(description) > 1024:
        errors.append(
            SkillError(
                shown,
                front.line_of("description"),
                INVALID_SKILL_MANIFEST,
                f"description is {len(description)} characters; the limit is 1024",
            )
        )
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        errors.append(
            SkillError(shown, front.line_of("metadata"), INVALID_SKILL_MANIFEST, "metadata must map strings to strings (quote numbers)")
        )
        metadata = {}
    compatibility = data.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or not 1 <= len(compatibility) <= 500):
        errors.append(
            SkillError(shown, front.line_of("compatibility"), INVALID_SKILL_MANIFEST, "compatibility must be a string of 1-500 characters")
        )
    license_ = data.get("license")
    if license_ is not None and not isinstance(license_, str):
        errors.append(SkillError(shown, front.line_of("license"), INVALID_SKILL_MANIFEST, "license must be a string"))
    if errors:
        return None, errors
    return (
        SkillManifest(
            name=str(name),
            description=str(description).strip(),
            instructions=front.body.strip(),
            metadata=dict(metadata),
            license=license_ if isinstance(license_, str) else None,
            compatibility=compatibility if isinstance(compatibility, str) else None,
        ),
        [],
    )


def _read_types(shown: str, text: str) -> tuple[dict[str, JsonSchema], list[SkillError]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, [SkillError(shown, exc.lineno, INVALID_SCHEMA, f"types.json is not valid JSON: {exc.msg}")]
    except RecursionError:
        return {}, [SkillError(shown, 1, INVALID_SCHEMA, "types.json is nested too deeply")]
    if not isinstance(data, dict):
        return {}, [SkillError(shown, 1, INVALID_SCHEMA, "types.json must be an object of type names to JSON Schemas")]
    errors = [
        SkillError(shown, _line_of_key(text, type_name), INVALID_SCHEMA, f"type {type_name!r} must be a JSON Schema object")
        for type_name, schema in data.items()
        if not isinstance(schema, dict | bool)
    ]
    return data, errors


def _line_of_key(text: str, key: str) -> int:
    index = text.find(json.dumps(key) + ":")
    if index < 0:
        index = text.find(json.dumps(key))
    return text.count("\n", 0, index) + 1 if index >= 0 else 1
