"""Release documents cached by what they were compiled from, so the CLI compiles a package once.

``skillhouse import-openapi`` compiles the package it writes; ``skillhouse tools`` on that package
then reads the release instead of compiling a large spec's skill a second time. The key is BLAKE2b
over the compiler's fingerprint, the package directory's name and the files
:func:`~skillhouse.skill.read_package_dir` reads, so an edited package or a changed compiler never meets
a stale release.

The compiler's fingerprint is each source file of ``skillhouse.compiler`` and ``skillhouse.skill`` by
its path, size and modification time, with the package's version: the very rule by which the
interpreter decides that a module's bytecode cache is current (size and time, PEP 3147), so the key
changes whenever the compiler code that would run changes, a file added or removed included. It is
read by ``stat`` alone: reading and hashing the ~230 KB of sources cost each ``tools`` and
``import-openapi`` process three times as much (tests/cli/test_release_cache.py holds an edited, added
and removed source to a new key).

Beside a release, an entry may hold the package's neutral tool listing as ``skillhouse tools`` prints
it (``KEY.tools.json``, written by ``import-openapi``, which has the definitions at hand): ``tools`` then
prints that text without decoding the release, importing the compiler or encoding the listing again.
It is keyed exactly as the release, so it is as current as the release is. Entries live in the directory the caller names
(the CLI's is :attr:`Settings.release_cache <skillhouse.settings.Settings.release_cache>`,
``SKILLHOUSE_RELEASE_CACHE``); ``None`` is no cache. A damaged or unreadable entry counts as a miss:
the caller compiles, as without a cache.

A release is kept as :mod:`marshal` data (``KEY.marshal``), not JSON: ``import-openapi`` writes one for
every spec, and encoding Jira's release as JSON took 17 ms of it against 2 ms (Stripe's 2023 spec: 28
against 4), reading it back 8 ms against 3, and the encoder's chunks raised the command's peak memory.
marshal gives back the very dicts, lists, text, numbers, booleans and ``None`` it was given, in their
order. Its data is to be trusted no further than Python's own bytecode caches, which are marshal
data too, and it is: only the user writes to their cache directory. Data an interpreter cannot read
(damaged, or another Python's format) is a miss like any damaged entry.

Directories and packages are given as ``str`` or ``Path``. :func:`package_key` and :func:`cached_listing`,
all that ``tools`` on a kept listing runs, work on ``os`` alone: ``pathlib`` (with ``re``, ``fnmatch`` and
``urllib.parse``) is a quarter of that process's start-up.
"""

from __future__ import annotations

import os

# Not `from typing import TYPE_CHECKING`: typing is start-up time `skillhouse tools` on a cached listing never needs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import blake2b
    from pathlib import Path

    from skillhouse.json_types import ReleaseDocument

    StrPath = str | os.PathLike[str]

KEEP = 32
"""Entries kept; the oldest go when a write passes this (a large spec's release is a few MB)."""
_SOURCES = ("compiler", "skill")
_ALSO_READ = ("types.json", "curation.yaml", "curation.applied.json")
_RELEASE = ".marshal"
"""The suffix of an entry's release (see the module's docstring)."""
_LISTING = ".tools.json"
"""The suffix of an entry's neutral tool listing, beside its ``KEY.marshal`` release."""

if not TYPE_CHECKING:
    # BLAKE2b rather than SHA-256 for the key: every `tools` and `import-openapi` process hashes the package's
    # files, and CPython's own SHA-256 (skillhouse.sha256: hashlib's OpenSSL is ~3.5 ms to load) takes three
    # times as long as its own BLAKE2b. A key only has to tell packages and compilers apart; it is never a
    # release digest (still SHA-256).
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without CPython's _blake2
        from hashlib import blake2b

_fingerprint: bytes | None = None
"""The compiler's fingerprint, computed once per process (a module global: functools is start-up time)."""


def _hasher(data: bytes = b"") -> blake2b:
    return blake2b(data, digest_size=32)  # a 64-digit hex key, as long as a SHA-256 one


def _compiler_fingerprint() -> bytes:
    global _fingerprint
    if _fingerprint is None:
        _fingerprint = _fingerprint_sources()
    return _fingerprint


def _fingerprint_sources(base: str | None = None) -> bytes:
    """The compiler's fingerprint (see the module's docstring); ``base`` is the package's directory."""
    base = base or os.path.dirname(os.path.abspath(__file__))
    found: list[str] = []
    for folder in _SOURCES:
        _stat_sources(os.path.join(base, folder), f"{folder}/", found)
    from skillhouse import __version__

    lines = [__version__, *sorted(found)]
    return _hasher("\n".join(lines).encode("utf-8", "surrogateescape")).digest()


def _stat_sources(folder: str, relative: str, found: list[str]) -> None:
    # os.scandir rather than os.walk or Path.rglob: one listing per folder, its entries' types without a
    # stat each; the sources are stat'ed, not read (see the module's docstring)
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    _stat_sources(entry.path, f"{relative}{entry.name}/", found)
            elif entry.name.endswith(".py"):
                facts = entry.stat()
                found.append(f"{relative}{entry.name}\0{facts.st_size}\0{facts.st_mtime_ns}")


def package_key(path: StrPath, version: str | None = None) -> str | None:
    """The key of the package in directory ``path`` (None when it cannot be read)."""
    try:
        root = os.path.realpath(
            path
        )  # as Path.resolve() (not strict): the directory's own name, links followed
        digest = _hasher(_compiler_fingerprint())
        digest.update(f"{os.path.basename(root)}\0{version or ''}\0".encode())
        with os.scandir(root) as found:
            entries = sorted((entry.name, entry.is_file()) for entry in found)
        for name, is_file in entries:
            # the files read_package_dir reads: top-level .md files, types.json and the curation overlay
            # (".md": as Path.suffix reads it, which a name that is only ".md" has not)
            if is_file and ((name.endswith(".md") and name != ".md") or name in _ALSO_READ):
                with open(os.path.join(root, name), "rb") as file:
                    digest.update(name.encode() + b"\0" + file.read() + b"\0")
    except OSError:
        return None
    return digest.hexdigest()


def cached_release(
    directory: StrPath | None, path: StrPath, version: str | None = None
) -> ReleaseDocument | None:
    """The release compiled earlier from exactly this package, or None; ``directory`` is the cache's."""
    if directory is None:  # no cache: no key to compute
        return None
    key = package_key(path, version)
    if key is None:
        return None
    import marshal  # here: start-up time; `tools` printing a kept listing decodes no release

    try:
        with open(os.path.join(directory, f"{key}{_RELEASE}"), "rb") as file:
            document = marshal.loads(file.read())
    except (OSError, ValueError, EOFError):  # EOFError: data cut short; ValueError: not marshal data
        return None
    return document if isinstance(document, dict) and "operations" in document else None


def cached_listing(directory: StrPath | None, path: StrPath) -> str | None:
    """The neutral tool listing kept for exactly this package (the text ``tools`` prints), or None."""
    if directory is None:  # no cache: no key to compute
        return None
    key = package_key(path)
    if key is None:
        return None
    try:
        with open(os.path.join(directory, f"{key}{_LISTING}"), "rb") as file:
            return file.read().decode("utf-8")  # bytes: no newline translation
    except (OSError, ValueError):  # ValueError: not UTF-8, so not one this module wrote
        return None


def remember_release(
    directory: StrPath | None,
    path: StrPath,
    document: ReleaseDocument,
    version: str | None = None,
    listing: str | None = None,
) -> None:
    """Keep ``document`` (a release) for the package in ``path`` in ``directory``, and its neutral tool
    ``listing`` when given; a cache that cannot be written is skipped.

    Stored as marshal data, which keeps the document's own key order (a canonical form would sort it):
    what is read back then prints exactly as the compiled document does.
    """
    if directory is None:  # no cache: no key to compute
        return
    key = package_key(path, version)
    if key is None:
        return
    import marshal  # here: start-up time (see cached_release)
    from pathlib import Path  # here: start-up time (see the module's docstring)

    try:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder, f"{key}{_RELEASE}", marshal.dumps(document))
        if listing is not None and version is None:
            _write(folder, f"{key}{_LISTING}", listing.encode("utf-8"))
        _prune(folder)
    # ValueError: a document nested past marshal's limit; UnicodeError: a lone surrogate from the spec
    # has no UTF-8 (the listing is text). Either is not kept.
    except (OSError, ValueError, UnicodeError):
        return


def remember_listing(directory: StrPath | None, path: StrPath, listing: str) -> None:
    """Keep the neutral tool ``listing`` of the package in ``path``, once its release is kept."""
    from pathlib import Path  # here: start-up time (see the module's docstring)

    if directory is None:
        return
    key = package_key(path)
    if key is None or not Path(directory, f"{key}{_RELEASE}").is_file():
        return
    try:
        _write(Path(directory), f"{key}{_LISTING}", listing.encode("utf-8"))
    except (OSError, UnicodeError):
        return


def _write(directory: Path, name: str, data: bytes) -> None:
    partial = directory / f".{name}.{os.getpid()}"
    partial.write_bytes(data)
    os.replace(partial, directory / name)  # readers never see half an entry


def _prune(directory: Path) -> None:
    for legacy in directory.glob("*.json"):  # a release kept as JSON by an earlier version: never read again
        if not legacy.name.endswith(_LISTING):
            legacy.unlink(missing_ok=True)
    releases = list(directory.glob(f"*{_RELEASE}"))
    for old in sorted(releases, key=lambda p: p.stat().st_mtime)[:-KEEP]:
        old.unlink(missing_ok=True)
        old.with_name(old.name.removesuffix(_RELEASE) + _LISTING).unlink(missing_ok=True)
