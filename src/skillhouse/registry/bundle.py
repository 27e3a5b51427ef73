"""Skill package files: from an upload (tar.gz or a JSON map) or generated from a skill spec.

A generated bundle is an Agent Skills directory: ``SKILL.md`` (frontmatter ``name``,
``description``, ``allowed-tools``, ``metadata``; body the spec's instructions) and ``tools.md``, a
plain document describing each allowed tool, readable by the model with ``read_object``. The YAML is
written by a YAML emitter, so no field value can break out of the frontmatter.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from typing import Any

import yaml

from skillhouse.compiler import canonical_json
from skillhouse.registry.errors import Invalid, problem
from skillhouse.registry.specs import SkillSpec, ToolSpec

MAX_ARCHIVE_BYTES = 10 * 1024 * 1024
MAX_FILES = 1000
MAX_FILE_BYTES = 1024 * 1024


def content_digest(files: dict[str, str], spec: dict[str, Any] | None = None) -> str:
    """``sha256:`` of the canonical JSON of the version's content: what "identical" compares."""
    body: dict[str, Any] = {"files": files} if spec is None else {"files": files, "spec": spec}
    return "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()


def files_from_map(files: dict[str, str]) -> dict[str, str]:
    """Check an uploaded map of file paths to texts; every bad path reported at once."""
    problems = [problem(f"files.{name}", "invalid-path", "paths are relative, '/'-separated, without '..' or empty parts")
                for name in files if not _safe_path(name)]
    problems += [problem(f"files.{name}", "file-too-large", f"files are limited to {MAX_FILE_BYTES} bytes")
                 for name, text in files.items() if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES]
    problems += [problem(f"files.{name}", "invalid-text", "file text must not contain NUL characters or lone surrogates")
                 for name, text in files.items() if "\x00" in text or not _encodable(text)]
    if len(files) > MAX_FILES:
        problems.append(problem("files", "too-many-files", f"a package holds at most {MAX_FILES} files"))
    if problems:
        raise Invalid("invalid-upload", "the uploaded files are not a valid skill package", problems)
    return dict(sorted(files.items()))


def files_from_archive(data: bytes) -> dict[str, str]:
    """The text files of a tar.gz package; a single top-level directory is stripped."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise Invalid("invalid-upload", f"the archive is larger than {MAX_ARCHIVE_BYTES} bytes")
    raw: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive:
                if len(raw) > MAX_FILES:
                    break
                if not member.isfile() or member.size > MAX_FILE_BYTES:
                    continue
                extracted = archive.extractfile(member)
                if extracted is not None:
                    raw[member.name.removeprefix("./")] = extracted.read()
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise Invalid("invalid-archive", f"the body is not a readable tar.gz archive: {exc}") from exc
    tops = {name.split("/", 1)[0] for name in raw}
    if len(tops) == 1 and all("/" in name for name in raw):
        raw = {name.split("/", 1)[1]: content for name, content in raw.items()}
    files: dict[str, str] = {}
    problems = []
    for name, content in raw.items():
        try:
            files[name] = content.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            if name.endswith((".md", ".json")):
                problems.append(problem(f"files.{name}", "invalid-text", "the file is not UTF-8"))
    if problems:
        raise Invalid("invalid-upload", "the archive holds files that are not UTF-8", problems)
    return files_from_map(files)


def files_from_skill_spec(spec: SkillSpec, tools: list[ToolSpec]) -> dict[str, str]:
    """The Agent Skills bundle of a skill spec; ``tools`` are its resolved allowed tools in order."""
    front: dict[str, Any] = {
        "name": spec.skill_id,
        "description": spec.description.strip(),
        "allowed-tools": " ".join(f"{t.tool_id}@{t.version}" for t in spec.allowed_tools),
        "metadata": {"title": spec.name.strip(), "version": str(spec.version), "source": "skill-spec"},
    }
    if not spec.allowed_tools:
        del front["allowed-tools"]
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1_000_000)
    files = {"SKILL.md": f"---\n{header}---\n{spec.instructions_markdown.strip()}\n"}
    if tools:
        files["tools.md"] = _tools_document(tools)
    return files


def _tools_document(tools: list[ToolSpec]) -> str:
    lines = ["# Allowed tools", ""]
    for tool in tools:
        manifest = tool.integration_manifest
        lines += [
            f"## {tool.tool_id} (version {tool.version})",
            "",
            f"{tool.name.strip()}: {tool.description.strip()}",
            "",
            f"- tool pack: {tool.tool_pack}",
            f"- integration: {manifest.integration_id} ({manifest.provider}, {manifest.status})",
            f"- capabilities: {', '.join(manifest.capabilities)}",
            "",
        ]
    return "\n".join(lines)


def _safe_path(name: str) -> bool:
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and "\\" not in name and all(p not in ("", ".", "..") for p in parts) \
        and "\x00" not in name and len(name) <= 255


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
