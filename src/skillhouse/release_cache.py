"""Release documents cached by what they were compiled from, so the CLI compiles a package once.

``skillhouse import-openapi`` compiles the package it writes; ``skillhouse tools`` on that package
then reads the release instead of compiling a large spec's skill a second time. The key is SHA-256
over the compiler's own sources (``skillhouse.compiler`` and ``skillhouse.skill``), the package
directory's name and the files :func:`~skillhouse.skill.read_package_dir` reads, so an edited package
or a changed compiler never meets a stale release. Entries live in the directory the caller names
(the CLI's is :attr:`Settings.release_cache <skillhouse.settings.Settings.release_cache>`,
``SKILLHOUSE_RELEASE_CACHE``); ``None`` is no cache. A damaged or unreadable entry counts as a miss:
the caller compiles, as without a cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from skillhouse.json_types import ReleaseDocument

KEEP = 32
"""Entries kept; the oldest go when a write passes this (a large spec's release is a few MB)."""
_SOURCES = ("compiler", "skill")


@functools.cache
def _compiler_fingerprint() -> bytes:
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for folder in _SOURCES:
        for source in sorted((package / folder).rglob("*.py")):
            digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.digest()


def package_key(path: Path, version: str | None = None) -> str | None:
    """The key of the package in directory ``path`` (None when it cannot be read)."""
    try:
        root = path.resolve()
        digest = hashlib.sha256(_compiler_fingerprint())
        digest.update(f"{root.name}\0{version or ''}\0".encode())
        for entry in sorted(root.iterdir()):
            # the files read_package_dir reads: top-level .md files, types.json and the curation overlay
            if entry.is_file() and (entry.suffix == ".md" or entry.name in ("types.json", "curation.yaml", "curation.applied.json")):
                digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    except OSError:
        return None
    return digest.hexdigest()


def cached_release(directory: Path | None, path: Path, version: str | None = None) -> ReleaseDocument | None:
    """The release compiled earlier from exactly this package, or None; ``directory`` is the cache's."""
    key = package_key(path, version)
    if directory is None or key is None:
        return None
    try:
        document = json.loads((directory / f"{key}.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) and "operations" in document else None


def remember_release(directory: Path | None, path: Path, document: ReleaseDocument, version: str | None = None) -> None:
    """Keep ``document`` (a release) for the package in ``path`` in ``directory``; a cache that cannot be
    written is skipped.

    Stored as plain JSON in the document's own key order, not canonical JSON: what is read back
    then prints exactly as the compiled document does.
    """
    key = package_key(path, version)
    if directory is None or key is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{key}.{os.getpid()}"
        partial.write_text(json.dumps(document, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        os.replace(partial, directory / f"{key}.json")  # readers never see half an entry
        entries = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        return
