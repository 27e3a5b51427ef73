"""What a credential binding may be, checked when it is set: its origin and a value the transport can send.

An origin is scheme + host + port (RFC 6454): ``https://api.example.com``, ``http://10.0.0.5:8080``.
A bare ``host`` or ``host:port`` is read as ``https`` (port 443 unless given), which is what a binding
meant before origins existed and the only reading that never sends a secret over plain http by default.
Schemes other than http and https are refused, and so is an ``http`` origin without the binding's
``allow_http`` opt-in.

The value is refused at set time when the upstream client could not put it in a header: anything
outside printable ASCII (non-ASCII, non-latin-1, control characters, CR/LF, U+2028), leading or
trailing spaces (HTTP strips them), or a header value over :data:`MAX_HEADER_VALUE` bytes. Each
refusal names the field (``origin``, ``allow_http``, ``value``) and never quotes the secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from skillhouse.gateway.canonical_url import canonical_url
from skillhouse.gateway.egress import DEFAULT_PORTS
from skillhouse.gateway.errors import CredentialError, GatewayError

MAX_HEADER_VALUE = 8192
"""Bytes of one header value; servers commonly refuse a header line much beyond 8 KiB."""

_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?)*$")
_IPV6 = re.compile(r"^[0-9a-f:.]+$")


@dataclass(frozen=True)
class Origin:
    """Where a credential may be sent: scheme, lower-case host (IPv6 without brackets), port."""

    scheme: str
    host: str
    port: int

    @property
    def text(self) -> str:
        """``scheme://host[:port]``, the port left out when it is the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"


def _invalid(origin: str, why: str, code: str = "invalid-origin") -> CredentialError:
    return CredentialError(f"origin {origin!r}: {why}", code=code, field="origin")


def parse_origin(text: str) -> Origin:
    """``https://host[:port]``, ``http://host[:port]``, or a bare ``host[:port]`` (read as https)."""
    written = text.strip()
    if not written.isascii() or not written.isprintable():
        raise _invalid(written[:80], "write the host in ASCII (punycode for an international name)")
    lowered = written.lower()
    if "://" in lowered:
        scheme = lowered.partition("://")[0]
        if scheme not in DEFAULT_PORTS:
            raise _invalid(written, f"only http and https origins take credentials, not {scheme!r}", "origin-scheme-refused")
        try:
            parts = urlsplit(lowered)
            port = parts.port
        except ValueError:
            raise _invalid(written, "the port must be a number from 1 to 65535") from None
        if parts.username is not None or parts.password is not None:
            raise _invalid(written, "an origin carries no user information")
        if parts.path not in ("", "/") or parts.query or parts.fragment or lowered.endswith(("?", "#")):
            raise _invalid(written, "an origin is scheme://host[:port] with no path, query or fragment")
        host, explicit = parts.hostname or "", port
    else:
        scheme = "https"
        host, explicit = _bare(written, lowered)
    host = host.rstrip(".")
    if not host or not (_NAME.fullmatch(host) or (":" in host and _IPV6.fullmatch(host))):
        raise _invalid(written, "the host must be a DNS name, an IPv4 address or a bracketed IPv6 address")
    if explicit is not None and not 0 < explicit < 65536:
        raise _invalid(written, "the port must be a number from 1 to 65535")
    # the host as requests spell it after canonicalization (``0x7f.1`` is 127.0.0.1, an IPv6 address in
    # its compressed form), or a binding would silently never match the requests it was made for
    literal = f"[{host}]" if ":" in host else host
    try:
        canonical = canonical_url(f"{scheme}://{literal}:{explicit or DEFAULT_PORTS[scheme]}/")
    except GatewayError as exc:
        raise _invalid(written, f"the host is not one a request can name ({exc.message})") from None
    return Origin(scheme, canonical.host, canonical.port)


def _bare(written: str, lowered: str) -> tuple[str, int | None]:
    """A bare ``host``, ``host:port`` or ``[v6]:port``: (host, port or None)."""
    if lowered.startswith("["):
        host, _, rest = lowered[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise _invalid(written, "write an IPv6 address as [address] or [address]:port")
        port_text = rest[1:] if rest else None
    elif lowered.count(":") == 1:
        host, _, port_text = lowered.partition(":")
    elif ":" in lowered:
        raise _invalid(written, "write an IPv6 address in brackets, [address]:port")
    else:
        host, port_text = lowered, None
    if port_text is None:
        return host, None
    if not port_text.isdigit() or len(port_text) > 5:
        raise _invalid(written, "the port must be a number from 1 to 65535")
    return host, int(port_text)


def check_opt_in(origin: Origin, allow_http: bool) -> None:
    """Refuse an http origin without ``allow_http``, and ``allow_http`` on an https origin (it would mean nothing)."""
    if origin.scheme == "http" and not allow_http:
        raise CredentialError(
            f"{origin.text} is plain http: the secret would cross the network readable; set allow_http to bind it anyway",
            code="http-needs-opt-in", field="allow_http",
        )
    if origin.scheme == "https" and allow_http:
        raise CredentialError(
            f"allow_http applies to an http:// origin only; {origin.text} is https and is never sent over http",
            code="allow-http-mismatch", field="allow_http",
        )


def unsendable(value: str) -> tuple[str, str] | None:
    """(code, why) when ``value`` cannot be an HTTP header value as the upstream client sends it (ASCII)."""
    if not value:
        return "secret-not-sendable", "is empty"
    for position, character in enumerate(value, start=1):
        if not character.isascii():
            return "secret-not-sendable", f"has character {position} outside ASCII; header values are sent as ASCII (encode the secret first)"
        if not " " <= character <= "~":
            return "secret-not-sendable", (
                f"has a control character (U+{ord(character):04X}) at character {position}; a header value is one printable line"
            )
    if value[0] == " " or value[-1] == " ":
        return "secret-not-sendable", "begins or ends with a space, which HTTP strips from header values"
    if len(value) > MAX_HEADER_VALUE:
        return "secret-too-long", f"makes a header value of {len(value)} bytes; at most {MAX_HEADER_VALUE} are sent"
    return None


def check_sendable(secret: str, header_value: str) -> None:
    """Refuse a secret, or the header value built from it, that the transport cannot send."""
    for checked in (secret, header_value):
        found = unsendable(checked)
        if found is not None:
            raise CredentialError(f"the credential's value {found[1]}", code=found[0], field="value")
