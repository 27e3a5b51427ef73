"""SHA-256 for the digests the library takes, without loading OpenSSL.

``hashlib`` loads OpenSSL's libcrypto on import: about 3.5 MB of resident memory and 3.5 ms, which an
OpenAPI import paid only for its release digest and the short hashes in cut tool names (the release
cache's key, which need not be SHA-256, is CPython's BLAKE2b: :mod:`skillhouse.release_cache`).
CPython's own SHA-256 module gives the same digests. It is slower per byte (about 3.8 ms per MB against 0.6 ms),
which a Jira-sized release (1.9 MB of canonical JSON) pays back as ~6 ms; smaller releases come out
ahead, and every import peaks 3.5 MB lower (``docs/benchmarks.md``, the OpenAPI section).
"""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: typing is start-up time `skillhouse tools` never needs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # pragma: no cover - CPython 3.12 renamed it; other interpreters have hashlib only
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256

__all__ = ["sha256"]
