"""Keeping bound secrets out of what comes back, in every common spelling an upstream might echo them in.

An upstream that echoes a request (a debug endpoint, an error quoting the header, a redirect carrying
it in ``Location``) would hand the guest the credential the gateway injected. Every answer passes two
stages, over the body and every response header name and value:

1. **Redact** each precomputed spelling (:func:`forms_of`, cached per secret, so per answer the work
   is one substring search per spelling): raw; JSON string escaping (``ensure_ascii`` on and off,
   ``\\/``, every character as ``\\uXXXX`` in either case); HTML (``html.escape`` with ``&#x27;``,
   ``&#39;`` or ``&apos;``, every character as a decimal or hex entity); hex of the UTF-8 bytes in any
   case; base64 and base64url, padded or not, and, for a secret inside a larger base64 blob, the
   characters that depend only on the secret at each of the three byte alignments; percent-encoding
   (every byte, ``quote`` with and without ``/`` safe, ``encodeURIComponent``'s set, ``quote_plus``
   with ``+`` for space), upper- or lower-case hex. Each becomes ``[REDACTED]``.
2. **Withhold** an answer a spelling survived: the redacted text is decoded (JSON escapes, HTML
   entities, percent-escapes with and without ``+``, and the three in a chain), and if any decoded
   view still holds a spelling of a secret, e.g. a mixed or partial percent-encoding, the answer is
   replaced by ``response-withheld`` with the upstream's status and no body or headers. Mapping a
   match in a decoded view back to the bytes it came from is possible but fragile; withholding is
   simple, certain, and needed only for spellings no ordinary encoder produces.

Limits: one layer of the encodings above (or the JSON/HTML/percent chain), not e.g. base64 of a
percent-encoding, compressed or encrypted echoes, case-changed raw secrets, or text split by line
wrapping. In a base64 blob, the few bits of a secret that share a character with its neighbours are
not protected, and a secret under about six bytes has no spelling unique to it there.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from skillhouse.gateway.exchange import FetchAnswer, FetchRefusal, FetchResponse

REDACTED = "[REDACTED]"
WITHHELD = "response-withheld"
_MIN_BLOB_RUN = 6
"""Shortest run of base64 characters (36 bits) worth searching for inside a blob: shorter ones match by chance."""

_PERCENT = re.compile(r"%[0-9A-F]{2}")
_JSON_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\(.)", re.S
)
_JSON_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


@dataclass(frozen=True)
class SecretForms:
    """A secret's spellings: exact strings, and its hex as a pattern (hex digits in any case)."""

    literals: frozenset[str]
    hex: re.Pattern[str]
    underneath: frozenset[str]
    """The spellings looked for in decoded views: the secret and its base64 forms, whose characters (``/``,
    ``+``, ``=``) an outer JSON, HTML or percent layer may escape. A JSON, HTML or percent spelling
    showing in a view was escaped twice; the chained view undoes such pairs down to the secret itself."""


def _json_forms(secret: str) -> set[str]:
    forms = {json.dumps(secret, ensure_ascii=flag)[1:-1] for flag in (True, False)}
    forms |= {form.replace("/", "\\/") for form in forms}
    units = secret.encode("utf-16-be")
    escaped = [f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2)]
    return forms | {"".join(escaped), "".join(escaped).upper().replace("\\U", "\\u")}


def _html_forms(secret: str) -> set[str]:
    escaped = html.escape(secret, quote=True)
    forms = {escaped, escaped.replace("&#x27;", "&#39;"), escaped.replace("&#x27;", "&apos;"), html.escape(secret, quote=False)}
    forms.add("".join(f"&#{ord(c)};" for c in secret))
    forms |= {"".join(f"&#x{ord(c):x};" for c in secret), "".join(f"&#x{ord(c):X};" for c in secret)}
    return forms


def _percent_forms(secret: str) -> set[str]:
    raw = secret.encode()
    upper = {"".join(f"%{byte:02X}" for byte in raw), quote(secret, safe=""), quote(secret), quote_plus(secret),
             quote(secret, safe="!'()*~"), quote_plus(secret, safe="/")}  # fmt: skip
    return upper | {_PERCENT.sub(lambda m: m.group().lower(), form) for form in upper}


def _base64_forms(raw: bytes) -> set[str]:
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode()
        forms |= {whole, whole.rstrip("=")}
        for offset in (0, 1, 2):
            # inside a blob the secret starts at bit 8*offset of its 3-byte group: keep the characters
            # whose 6 bits all come from the secret; the rest depend on the neighbours
            text = encode(bytes(offset) + raw + bytes(3)).decode()
            first, end = -(-8 * offset // 6), (8 * (offset + len(raw))) // 6
            if end - first >= _MIN_BLOB_RUN:
                forms.add(text[first:end])
    return forms


@lru_cache(maxsize=1024)
def forms_of(secret: str) -> SecretForms:
    """Every spelling of ``secret`` the redactor looks for; computed once per secret."""
    in_base64 = _base64_forms(secret.encode())
    literals = {secret} | _json_forms(secret) | _html_forms(secret) | _percent_forms(secret) | in_base64
    hex_pattern = re.compile(re.escape(secret.encode().hex()), re.I)
    return SecretForms(frozenset(form for form in literals if form), hex_pattern, frozenset({secret} | in_base64))


def _covering(secrets: Iterable[str]) -> list[str]:
    """The secrets without those containing another (``Bearer <token>`` holds the token): every spelling of the
    longer one holds a spelling of the shorter, base64 through the blob forms, so searching for it is wasted."""
    distinct = sorted({s for s in secrets if s}, key=len)
    kept: list[str] = []
    for secret in distinct:
        if not any(len(shorter.encode()) >= _MIN_BLOB_RUN and shorter in secret for shorter in kept):
            kept.append(secret)
    return kept


def _json_decoded(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        high, low, unit, simple = match.groups()
        if high is not None:
            return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
        return chr(int(unit, 16)) if unit is not None else _JSON_SIMPLE.get(simple, simple)

    return _JSON_ESCAPE.sub(one, text) if "\\" in text else text


def _views(text: str) -> Iterator[str]:
    """What the text reads as once JSON, HTML and percent escapes are undone (each, then chained)."""
    if "\\" in text:
        yield _json_decoded(text)
    if "&" in text:
        yield html.unescape(text)
    if "%" in text:
        yield unquote(text)
        if "+" in text:
            yield unquote_plus(text)
    if sum(mark in text for mark in ("\\", "&", "%")) > 1:
        yield unquote(html.unescape(_json_decoded(text)))


class Redactor:
    """Scrubs every spelling of the given secrets from an answer, or withholds the answer (module docstring)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        literals: set[str] = set()
        underneath: set[str] = set()
        self._hex: list[re.Pattern[str]] = []
        for secret in _covering(secrets):
            forms = forms_of(secret)
            literals |= forms.literals
            underneath |= forms.underneath
            self._hex.append(forms.hex)
        # longest first, so a secret inside a longer spelling does not leave half of it behind
        self._forms = sorted(literals, key=len, reverse=True)
        self._underneath = sorted(underneath, key=len, reverse=True)
        self._bracketed = [form for form in self._forms if "[" in form or "]" in form]

    def __bool__(self) -> bool:
        return bool(self._forms)

    def text(self, value: str) -> str:
        """``value`` with every spelling replaced by ``[REDACTED]`` (stage 1 only)."""
        for form in self._forms:
            if form in value:
                value = value.replace(form, REDACTED)
        for pattern in self._hex:
            value = pattern.sub(REDACTED, value)
        return value

    def survives(self, value: str) -> bool:
        """Whether a spelling is still readable in ``value`` once its escapes are undone."""
        if any(form in value for form in self._bracketed) or any(p.search(value) for p in self._hex):
            return True  # a replacement completed a spelling that holds "[" or "]", next to "[REDACTED]"
        for view in _views(value):
            if any(form in view for form in self._underneath) or any(p.search(view) for p in self._hex):
                return True
        return False

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {self.text(name): self.text(value) for name, value in headers.items()}

    def answer(self, status: int, headers: Mapping[str, str], body: str) -> FetchAnswer:
        """The answer in the ``fetch_url`` contract, scrubbed, or ``response-withheld`` when scrubbing is not enough."""
        if not self:
            return FetchResponse(status, dict(headers), body)
        scrubbed_headers, scrubbed_body = self.headers(headers), self.text(body)
        if self.survives(scrubbed_body) or any(self.survives(f"{k}: {v}") for k, v in scrubbed_headers.items()):
            return FetchRefusal(
                WITHHELD,
                f"the upstream answered {status}, echoing a bound credential in a spelling that cannot be "
                "redacted in place; the answer is withheld (the request was sent and may have acted)",
                {"status": status},
            )
        return FetchResponse(status, scrubbed_headers, scrubbed_body)
