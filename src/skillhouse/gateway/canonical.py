"""The one canonical request the gateway decides on, commits to and sends, read once from the guest's.

:func:`canonical_request` turns the ``fetch_url`` request (a :class:`~skillhouse.gateway.exchange.FetchRequest`,
read from the guest's ``{method, url, headers, body}``) into a :class:`CanonicalRequest`, or refuses it before anything is read from the store, claimed or sent.
Everything downstream (operation matching, gates, identity, egress, credentials, the commitment,
the audit and the approval a person reads) works on it, and the upstream receives exactly its bytes.

- Method: one of :data:`METHODS`, upper-cased.
- URL: :mod:`skillhouse.gateway.canonical_url` (its docstring has the rules); a raw ``;`` in the path
  is kept for :meth:`~skillhouse.gateway.matching.BoundReleases.match`, which refuses it unless it is the
  matched operation's matrix parameter.
- Headers: names must be HTTP tokens and are lower-cased; two names that differ only in case are
  refused (``duplicate-header``): which one an upstream reads is not ours to guess. Values are
  printable ASCII, space and tab; line breaks, other control characters and anything non-ASCII
  (``U+2028`` included) are refused; leading and trailing spaces are dropped (HTTP ignores them).
  Headers the transport or the gateway sets (:data:`GATEWAY_HEADERS`) are dropped from the guest's.
  At most :data:`MAX_HEADERS` headers of :data:`MAX_HEADER_BYTES` in all.
- Body: text, sent as UTF-8 exactly as given (a lone surrogate is refused). When ``Content-Type``
  names one JSON document (:func:`is_json`) it must parse as JSON without a key repeated in any object (``duplicate-json-key``: one
  parser reads the first, another the last, and the approver would see only one of them) and without
  ``NaN`` or infinite numbers. The commitment covers the text itself, so the approval shows the exact
  bytes that go out.

Every refusal is :class:`~skillhouse.gateway.errors.InvalidRequest` with ``field`` and ``reason``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from skillhouse.gateway.canonical_url import CanonicalURL, canonical_url
from skillhouse.gateway.egress import Target
from skillhouse.gateway.errors import DuplicateHeader, DuplicateJsonKey, GatewayError, InvalidRequest
from skillhouse.gateway.exchange import METHODS, FetchRequest
from skillhouse.json_types import JsonObject

MAX_HEADERS = 64
MAX_HEADER_BYTES = 16 * 1024
GATEWAY_HEADERS = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "upgrade", "te", "trailer",
     "accept-encoding", "idempotency-key", "proxy-authorization", "proxy-connection"}
)  # fmt: skip
"""Set by the transport or the gateway (or able to steer a proxy): a guest's value is dropped."""
ROUTING_OVERRIDES = frozenset(
    {"x-http-method-override", "x-http-method", "x-method-override", "x-original-method", "x-original-url",
     "x-rewrite-url"}
)  # fmt: skip
"""Headers many servers and frameworks read as the request's real method or path: a ``POST /bookings``
carrying ``X-HTTP-Method-Override: DELETE`` or ``X-Original-URL: /charges`` would be decided as one
request and run as another, past a gate. Refused (``reason: routing-override``), never dropped
silently."""

# fullmatch, never match with ``$``: ``$`` also matches before a final line break
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(r"[\t\x20-\x7e]*")


@dataclass(frozen=True)
class CanonicalRequest:
    """A request in its one canonical spelling: what is matched, approved and sent."""

    method: str
    url: CanonicalURL
    headers: tuple[tuple[str, str], ...]
    """Lower-case names, sorted, each once; without :data:`GATEWAY_HEADERS`."""
    body: str | None
    json_body: Any = None
    """The body parsed, when ``Content-Type`` says JSON (``None`` otherwise)."""

    @property
    def target(self) -> Target:
        return Target(self.url.scheme, self.url.host, self.url.port, self.url.path, self.url.query)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    def document(self, left_out: frozenset[str] = frozenset()) -> JsonObject:
        """The request as a person approves it and the commitment covers it: ``left_out`` are the
        headers the gateway injects (credentials), whose guest values are never sent."""
        headers = {name: value for name, value in self.headers if name not in left_out}
        body = None if self.body is None else {"text": self.body}
        return {"method": self.method, "url": self.url.text, "headers": headers, "body": body}


def canonical_request(request: FetchRequest) -> CanonicalRequest:
    """Read a ``fetch_url`` request into its canonical form, or raise the refusal saying why not."""
    method, url, body = request.method, request.url, request.body
    if method.upper() not in METHODS:
        raise InvalidRequest(f"method must be one of {', '.join(sorted(METHODS))}", field="method")
    if not url:
        raise InvalidRequest("url must be a non-empty string", field="url")
    canonical_headers = _headers(request.headers)
    if body is not None and not _utf8(body):
        raise InvalidRequest("body is not text that UTF-8 can carry (a lone surrogate)", field="body", reason="not-utf8")
    # a raw ';' is kept for operation matching, which accepts it only as a matrix parameter
    location = canonical_url(url, path_parameters=True)
    content_type = next((value for name, value in canonical_headers if name == "content-type"), "")
    parsed = json_body(body) if body is not None and is_json(content_type) else None
    return CanonicalRequest(method.upper(), location, canonical_headers, body, parsed)


def is_json(content_type: str) -> bool:
    """Whether a ``Content-Type`` names one JSON document (``application/json``, ``...+json``)."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type.endswith(("/json", "+json"))


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _headers(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    if len(headers) > MAX_HEADERS:
        raise InvalidRequest(f"at most {MAX_HEADERS} headers are accepted", field="headers", reason="too-many")
    if sum(len(k) + len(v) for k, v in headers) > MAX_HEADER_BYTES:
        raise InvalidRequest(f"headers are over {MAX_HEADER_BYTES} bytes in all", field="headers", reason="too-large")
    seen: dict[str, str] = {}
    for name, value in headers:
        where = f"headers.{name}" if name.isprintable() and len(name) <= 64 else "headers"
        if not _TOKEN.fullmatch(name):
            raise InvalidRequest(f"header name {name!r} is not an HTTP token", field=where, reason="invalid-name")
        if not _VALUE.fullmatch(value):
            bad = next(c for c in value if not _VALUE.fullmatch(c))
            raise InvalidRequest(
                f"header {name} has a character headers cannot carry (U+{ord(bad):04X}): line breaks, control "
                "characters and non-ASCII text are refused", field=where, reason="invalid-value",
            )  # fmt: skip
        lowered = name.lower()
        if lowered in ROUTING_OVERRIDES:
            raise InvalidRequest(f"header {name} would make the upstream run another method or path than the one "
                                 "the gateway decides on; send the request you mean", field=where,
                                 reason="routing-override")  # fmt: skip
        if lowered in seen:
            raise DuplicateHeader(f"header {name} is given twice (as {seen[lowered]} and {name})", field=where)
        seen[lowered] = name
    kept = ((name.lower(), value.strip(" \t")) for name, value in headers)
    return tuple(sorted(pair for pair in kept if pair[0] not in GATEWAY_HEADERS))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> JsonObject:
    found: JsonObject = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateJsonKey(f"the JSON body has the key {key!r} twice in one object", field="body", key=key)
        found[key] = value
    return found


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InvalidRequest(f"the JSON body has a number out of range ({text[:40]})", field="body", reason="number-out-of-range")
    return value


def _no_constant(name: str) -> Any:
    raise InvalidRequest(f"the JSON body has {name}, which is not a JSON number", field="body", reason="not-json")


def json_body(text: str) -> Any:
    """A JSON body parsed strictly: a repeated key, NaN or an infinite number is refused."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_finite, parse_constant=_no_constant)
    except GatewayError:
        raise
    except RecursionError:
        raise InvalidRequest("the JSON body is nested too deeply", field="body", reason="too-deep") from None
    except ValueError as exc:
        raise InvalidRequest(f"Content-Type says JSON but the body does not parse: {exc}", field="body",
                             reason="not-json") from None  # fmt: skip
