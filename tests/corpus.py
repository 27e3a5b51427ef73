"""The OpenAPI corpus the tests and benchmarks read: real specs vendored in ``tests/data/openapi``.

Each spec is stored xz-compressed (``NAME.xz``; sources and licences in ``tests/data/openapi/NOTICE``)
and unpacked on first use into the repository's ignored ``.data/corpus``, again whenever its
compressed copy changes. Readers get plain files there, so a test reads a spec exactly as a user's
file is read. An empty corpus is an error, not an empty parametrization: a missing data directory
would otherwise turn every corpus test into nothing.
"""

from __future__ import annotations

import lzma
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "tests" / "data" / "openapi"
UNPACKED = ROOT / ".data" / "corpus"


def _unpack(packed: Path, target: Path) -> None:
    # written beside the folder and renamed into it: a concurrent reader never sees half a spec, and a
    # concurrent run's clean-up of the folder never removes one being written
    partial = target.parent.with_name(f".corpus-{target.name}.{os.getpid()}")
    partial.write_bytes(lzma.decompress(packed.read_bytes()))
    os.replace(partial, target)


def unpacked_corpus() -> Path:
    """The directory holding exactly the vendored specs, unpacked (done once per change)."""
    packed = sorted(VENDORED.glob("*.xz"))
    if not packed:
        raise RuntimeError(f"no corpus specs in {VENDORED}: the repository's test data is missing")
    UNPACKED.mkdir(parents=True, exist_ok=True)
    wanted = {p.name.removesuffix(".xz") for p in packed}
    for stale in UNPACKED.iterdir():
        if stale.name not in wanted:
            stale.unlink(missing_ok=True)
    for source in packed:
        target = UNPACKED / source.name.removesuffix(".xz")
        if not target.exists() or target.stat().st_mtime < source.stat().st_mtime:
            _unpack(source, target)
    return UNPACKED


def corpus_spec(name: str) -> Path:
    """One vendored spec by its file name (``petstore-v3.yaml``), as a plain file."""
    path = unpacked_corpus() / name
    if not path.exists():
        raise FileNotFoundError(f"{name} is not in the vendored corpus ({VENDORED})")
    return path


CORPUS = unpacked_corpus()
