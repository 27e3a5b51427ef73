"""Fetching a spec's remote ``$ref`` documents for ``import-openapi --allow-remote-refs``.

httpx is imported here, when the flag is given, never at start-up (the offline commands load none
of the server stack). A document is read as a stream and refused past the wizard's size cap; a
failure of any kind becomes :class:`OSError`, which the wizard reports as a located problem.
"""

from __future__ import annotations

from skillhouse.openapi.document import MAX_SPEC_BYTES

TIMEOUT_SECONDS = 20.0


def fetch_document(url: str) -> bytes:
    """The body of ``GET url`` (redirects followed); :class:`OSError` for any failure or a body over the cap."""
    import httpx  # here: only an import with --allow-remote-refs pays for it

    try:
        with httpx.Client(timeout=TIMEOUT_SECONDS, follow_redirects=True) as client, client.stream("GET", url) as response:
            if response.status_code != 200:
                raise OSError(f"the server answered {response.status_code}")
            chunks: list[bytes] = []
            total = 0
            for chunk in response.iter_bytes():
                total += len(chunk)
                if total > MAX_SPEC_BYTES:
                    raise OSError(f"the document is larger than {MAX_SPEC_BYTES} bytes")
                chunks.append(chunk)
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, ValueError) as exc:  # ValueError: a URL httpx cannot send
        raise OSError(f"{type(exc).__name__}: {exc}") from None
    return b"".join(chunks)
