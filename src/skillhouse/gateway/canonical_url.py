"""The canonical form of a request URL: one spelling per resource, or a refusal saying why not.

Gates, operation matching, identity, egress rules and credentials are all decided on this form, and
exactly its bytes are sent, so two spellings an upstream would read as one resource cannot be judged
as two. The rules (RFC 3986 section 6.2.2 normalization, plus refusals where servers disagree):

- Scheme ``http`` or ``https``, lowercased. A fragment (``#...``) is dropped: no client sends it.
- Host lowercased, one trailing dot dropped; a non-ASCII name becomes its IDNA A-label, refused when
  IDNA 2003 and IDNA 2008 spell it differently (``ß``, ``ς``, joiners); an IP literal in any spelling
  a resolver reads (``0x7f.1``, ``2130706433``) becomes its plain form (``127.0.0.1``, ``[::1]``).
  The default port (80 for http, 443 for https) is left out, any other is written plainly.
- Path and query (``compiler/url_form.py``, shared with the compiler's check of URL templates):
  ``.`` and ``..`` segments removed (RFC 3986 5.2.4); percent-escapes of unreserved characters
  (``A-Z a-z 0-9 - . _ ~``) decoded, every other escape written with upper-case hex; an empty path is ``/``.
  A trailing slash is kept (``/charges/`` is sent as written, and matched like ``/charges``).
- Query: the same escape normalization; parameters are never reordered, ``+`` is left alone, an
  empty query (a bare ``?``) is dropped.

Refused (:class:`~skillhouse.gateway.errors.InvalidRequest`, ``field: url`` and a ``reason``):
user information (``user@``), whitespace, control characters and non-ASCII characters outside the
host (percent-encode them), a raw ``\\``, ``%`` not followed by two hex digits, and in the path: an
encoded ``/`` or ``\\`` (``%2F``, ``%5C``), an encoded control character (``%00``-``%1F``, ``%7F``),
a dot segment spelled with escapes (``%2e%2e``), an empty segment (``//``) and a raw ``;`` (servers
that strip ``;parameters`` would route ``/charges;x`` to ``/charges``); a URL longer than
:data:`MAX_URL_LENGTH`. A request's URL may keep a raw ``;`` (``path_parameters``) for operation
matching to judge: it is accepted only as the matched operation's matrix parameter (``gateway/matrix.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from ipaddress import IPv6Address
from typing import Any

import idna

from skillhouse.compiler.url_form import NotCanonical, canonical_path, canonical_query
from skillhouse.gateway.addresses import literal_address
from skillhouse.gateway.egress import DEFAULT_PORTS
from skillhouse.gateway.errors import EgressRefused, InvalidRequest

MAX_URL_LENGTH = 8192
"""Characters in a request URL (it is ASCII, so also bytes), as most servers cap a request line."""

_HOST_RAW = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_REFUSED_CHARACTER = re.compile(r"[\x00-\x20\x7f-\x9f\u2028\u2029\ufeff\\]")
"""Whitespace, control characters, the line and paragraph separators, the byte-order mark, and ``\\``."""


@dataclass(frozen=True)
class CanonicalURL:
    """A URL in its canonical form; :attr:`text` is what is sent and shown."""

    scheme: str
    host: str
    """Lower-case name or A-label, or an IP address in plain form (IPv6 without brackets)."""
    port: int
    path: str
    query: str
    """Without the ``?``; empty when there is none."""

    @property
    def request_target(self) -> str:
        """The request line's target: exactly the bytes the upstream receives."""
        return f"{self.path}?{self.query}" if self.query else self.path

    @property
    def host_text(self) -> str:
        """The host as a URL or ``Host`` header writes it (brackets around IPv6), with a non-default port."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if DEFAULT_PORTS[self.scheme] == self.port else f"{host}:{self.port}"

    @property
    def text(self) -> str:
        return f"{self.scheme}://{self.host_text}{self.request_target}"


def refuse(reason: str, message: str, **details: Any) -> InvalidRequest:
    return InvalidRequest(f"url {message}", field="url", reason=reason, **details)


def canonical_url(url: str, path_parameters: bool = False) -> CanonicalURL:
    """The canonical form of ``url``; raises :class:`InvalidRequest` (or ``EgressRefused`` for a scheme).

    With ``path_parameters`` a raw ``;`` in the path is kept, not refused: the caller must refuse it
    wherever it is not a matrix parameter (``BoundReleases.match`` does).
    """
    if len(url) > MAX_URL_LENGTH:
        raise refuse("too-long", f"is {len(url)} characters long; at most {MAX_URL_LENGTH} are accepted")
    found = _REFUSED_CHARACTER.search(url)
    if found is not None:
        index, char = found.start(), found.group()
        if char == "\\":
            raise refuse("backslash", f"has a backslash at {index}; write / or %5C", at=index)
        raise refuse("control-character", f"has whitespace or a control character (U+{ord(char):04X}) at {index}; "
                     "percent-encode it", at=index)  # fmt: skip
    scheme_match = _SCHEME.match(url)
    if scheme_match is None:
        raise refuse("not-absolute", "must be an absolute http(s) URL (scheme://host/path)")
    scheme = scheme_match.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise EgressRefused(f"only http and https URLs may leave, not {scheme!r}")
    rest = url[scheme_match.end():].split("#", 1)[0]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path_and_query = rest[:cut], rest[cut:]
    raw_path, _, raw_query = path_and_query.partition("?")
    host, port = _authority(authority, scheme)
    try:
        return CanonicalURL(scheme, host, port, canonical_path(raw_path or "/", path_parameters), canonical_query(raw_query))
    except NotCanonical as exc:
        raise refuse(exc.reason, exc.message) from None


@lru_cache(maxsize=1024)
def _authority(authority: str, scheme: str) -> tuple[str, int]:
    """The canonical host and port of an authority as written (cached: a gateway calls few hosts, in few spellings)."""
    if "@" in authority:
        raise refuse("userinfo", "must not carry user information (credentials are bound by the gateway)")
    if authority.startswith("["):
        inner, closed, after = authority[1:].partition("]")
        if not closed or (after and not after.startswith(":")):
            raise refuse("invalid-host", "has a malformed IPv6 literal")
        try:
            address = IPv6Address(inner)
        except ValueError:
            raise refuse("invalid-host", f"has an IPv6 literal that is not an address: [{inner}]") from None
        return str(address), _port(after[1:] if after else "", scheme)
    name, colon, port_text = authority.rpartition(":")
    if not colon:
        name, port_text = authority, ""
    return _host(name), _port(port_text, scheme)


def _port(text: str, scheme: str) -> int:
    if not text:
        return DEFAULT_PORTS[scheme]
    if not text.isascii() or not text.isdigit() or len(text) > 5 or not 0 < int(text) < 65536:
        raise refuse("invalid-port", f"has a port that is not a number from 1 to 65535: {text!r}")
    return int(text)


def _host(name: str) -> str:
    host = name[:-1] if name.endswith(".") else name
    if not host:
        raise refuse("invalid-host", "has no host")
    if not host.isascii():
        host = _a_label(host)
    host = host.lower()
    if any(char not in _HOST_RAW for char in host) or "" in host.split("."):
        raise refuse("invalid-host", f"has a host that is not a name or an address: {name!r}")
    address = literal_address(host)
    return str(address) if address is not None else host


def _a_label(host: str) -> str:
    """The IDNA A-label of a non-ASCII name; refused when IDNA 2003 and 2008 differ (servers disagree)."""
    try:
        modern = idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise refuse("invalid-host", f"has a host that is not a valid internationalized name ({exc})") from None
    try:
        legacy: str | None = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        legacy = None
    if legacy != modern:
        raise refuse("ambiguous-host", f"has a host IDNA 2003 and 2008 spell differently ({legacy} or {modern}); "
                     "write the A-label you mean")  # fmt: skip
    return modern
