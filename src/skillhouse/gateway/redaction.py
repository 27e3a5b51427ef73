"""Removing secret values from what comes back, in the spellings an upstream might echo them in.

An upstream that echoes a request back (a debug endpoint, an error that quotes the header) would hand
the guest the credential the gateway injected. Every response body and header value is scrubbed of the
secret itself and of its common encodings: base64 (standard and URL-safe, padded or not), percent-
encoding (upper and lower hex, ``+`` for spaces) and JSON string escaping.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"


def spellings(secret: str) -> set[str]:
    """The secret and the encodings of it that an echo might carry."""
    raw = secret.encode()
    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    forms |= {form.lower() for form in (quote(secret, safe=""), quote_plus(secret)) if "%" in form}
    for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        forms |= {encoded, encoded.rstrip("=")}
    return {form for form in forms if form}


class Redactor:
    """Replaces every spelling of the given secrets with ``[REDACTED]``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        found: set[str] = set()
        for secret in secrets:
            if secret:
                found |= spellings(secret)
        # longest first, so a secret inside a longer encoded form does not leave half of it behind
        self._forms = sorted(found, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._forms)

    def text(self, value: str) -> str:
        for form in self._forms:
            if form in value:
                value = value.replace(form, REDACTED)
        return value

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {name: self.text(value) for name, value in headers.items()}
