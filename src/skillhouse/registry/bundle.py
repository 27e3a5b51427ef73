"""Skill package files: from an upload (tar.gz or a JSON map) or generated from a skill spec.

A generated bundle is an Agent Skills directory: ``SKILL.md`` (frontmatter ``name``,
``description``, ``allowed-tools``, ``metadata``; body the spec's instructions) and ``tools.md``, a
plain document describing each allowed tool, readable by the model with ``read_object``. The YAML is
written by a YAML emitter, so no field value can break out of the frontmatter.

An uploaded archive is unpacked as a stream and bounded while it is read, whatever its headers
declare: the decompressed tar stream stops at :data:`MAX_UNPACKED_BYTES`, the entries at
:data:`MAX_MEMBERS`, a file at :data:`MAX_FILE_BYTES` and the package's files together at
:data:`MAX_PACKAGE_BYTES`. A small archive that would expand to hundreds of megabytes (a gzip bomb)
is refused after reading at most the cap, and nothing of it is stored.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zlib
from typing import TYPE_CHECKING

import yaml

from skillhouse.compiler import canonical_json
from skillhouse.json_types import JsonObject
from skillhouse.registry.errors import Invalid, problem
from skillhouse.registry.specs import SkillSpec, ToolSpec

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MAX_ARCHIVE_BYTES = 10 * 1024 * 1024
MAX_FILES = 1000
MAX_FILE_BYTES = 1024 * 1024
MAX_PACKAGE_BYTES = 8 * 1024 * 1024
"""The files of one package together, as uploaded (archive or JSON map)."""
MAX_MEMBERS = 2 * MAX_FILES
"""Entries of an archive, directories and links included."""
MAX_UNPACKED_BYTES = MAX_PACKAGE_BYTES + MAX_MEMBERS * 1536 + 20 * 512
"""The decompressed tar stream: the files plus a header and padding per entry and the end blocks."""


class _Unpacked(Exception):
    """The decompressed stream passed :data:`MAX_UNPACKED_BYTES`."""


class _CappedStream(io.RawIOBase):
    """The decompressed archive, counted as it is read; reading past ``limit`` bytes raises :class:`_Unpacked`."""

    def __init__(self, source: io.BufferedIOBase, limit: int) -> None:
        self.source, self.limit, self.total = source, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self.source.read(min(len(view), self.limit + 1 - self.total))
        self.total += len(data)
        if self.total > self.limit:
            raise _Unpacked
        view[: len(data)] = data
        return len(data)


def content_digest(files: dict[str, str], spec: JsonObject | None = None) -> str:
    """``sha256:`` of the canonical JSON of the version's content: what "identical" compares."""
    body: JsonObject = {"files": files} if spec is None else {"files": files, "spec": spec}
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
    if sum(len(text.encode("utf-8", "surrogatepass")) for text in files.values()) > MAX_PACKAGE_BYTES:
        problems.append(problem("files", "package-too-large", f"a package's files hold at most {MAX_PACKAGE_BYTES} bytes together"))
    if problems:
        raise Invalid("invalid-upload", "the uploaded files are not a valid skill package", problems)
    return dict(sorted(files.items()))


def files_from_archive(data: bytes) -> dict[str, str]:
    """The text files of a tar.gz package; a single top-level directory is stripped. Bounded while read."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise Invalid("invalid-upload", f"the archive is larger than {MAX_ARCHIVE_BYTES} bytes")
    try:
        raw = _unpack(data)
    except _Unpacked:
        raise Invalid(
            "archive-too-large", f"the archive unpacks to more than {MAX_UNPACKED_BYTES} bytes; refused before storing anything",
            [problem("body", "archive-too-large", f"a package holds at most {MAX_PACKAGE_BYTES} bytes of files")],
        ) from None
    except (tarfile.TarError, OSError, EOFError, ValueError, zlib.error) as exc:
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


def _unpack(data: bytes) -> dict[str, bytes]:
    """Every regular file's bytes, read as a stream with a running total (headers' sizes are not trusted to bound it)."""
    raw: dict[str, bytes] = {}
    total = 0
    stream = io.BufferedReader(_CappedStream(gzip.GzipFile(fileobj=io.BytesIO(data)), MAX_UNPACKED_BYTES))
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for count, member in enumerate(archive, start=1):
            name = member.name.removeprefix("./")
            if count > MAX_MEMBERS:
                raise Invalid("too-many-files", f"the archive holds more than {MAX_MEMBERS} entries",
                              [problem("body", "too-many-files", f"a package holds at most {MAX_FILES} files")])  # fmt: skip
            if not member.isfile():
                continue
            if member.size > MAX_FILE_BYTES:
                raise Invalid("file-too-large", f"{name} is larger than {MAX_FILE_BYTES} bytes",
                              [problem(f"files.{name}", "file-too-large", f"files are limited to {MAX_FILE_BYTES} bytes")])  # fmt: skip
            extracted = archive.extractfile(member)
            content = b"" if extracted is None else extracted.read(MAX_FILE_BYTES + 1)
            total += len(content)
            if total > MAX_PACKAGE_BYTES:
                raise _Unpacked
            raw[name] = content
    return raw


def files_from_skill_spec(spec: SkillSpec, tools: list[ToolSpec]) -> dict[str, str]:
    """The Agent Skills bundle of a skill spec; ``tools`` are its resolved allowed tools in order."""
    front: JsonObject = {
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
