"""The upstream HTTP client: the gateway's only way out, bounded in time and size, failures classified.

Every request goes through one seam, a transport chosen per checked address
(:attr:`UpstreamClient.transport_for`), which tests replace. The default transport
(``gateway/upstream_wire.py``) connects to the address the egress rule checked, never looking the
name up again, while the URL keeps its name: the ``Host`` header, TLS SNI and certificate
verification are all for the name. Redirects come back as responses and are never followed here.

The request goes straight to that transport, with no ``httpx.Client`` around it: a client keeps a
cookie jar, and the transports are shared by every tenant and turn calling the same address, so an
upstream's ``Set-Cookie`` to one tenant went out with the next tenant's request (and a request
carried a header no approval or commitment covered). The upstream receives the canonical request's
headers over :data:`DEFAULT_HEADERS`, nothing else; a client's redirect, auth and cookie machinery
was also most of the Python a call spent outside the wire.

Each call has an overall deadline (connect, send and every read together) and the answer is read
in chunks up to a byte cap. A call ends in one of four ways:

- an :class:`UpstreamResponse`: the answer, whole;
- :class:`NotSent`: nothing left the gateway (refused or timed-out connection, no pool slot, a
  request httpx or h11 would not put on the wire, the deadline passed before the first byte, any
  failure at all before the first write); the idempotency key is released;
- :class:`MaybeSent`: the first byte was written, then the call failed (connection lost, deadline
  passed while waiting for the answer): the upstream may have acted, so the key is left unresolved;
- :class:`Withheld`: the upstream answered (its status is known) but the answer is not handed on: it
  is larger than the cap, or encoded although we asked for ``identity``. The request is done, so the
  key is *completed* with this refusal as its stored answer: a duplicate replays the refusal and
  nothing is ever sent again, and no person has to resolve a key whose outcome is known. Reading
  stops at the cap and the connection is closed, never handed back to the pool half-read.

With a transport that does not report its writes (a test's), a failure counts as not sent only when
its type says so (connect, pool, or a request refused locally); anything else counts as maybe sent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import h11
import httpcore
import httpx

from skillhouse.errors import ExternalFailure
from skillhouse.gateway.egress import EgressDecision
from skillhouse.gateway.upstream_wire import CURRENT, Attempt, PinnedBackend, PinnedTransport
from skillhouse.json_types import JsonObject

__all__ = ["MaybeSent", "NotSent", "PinnedBackend", "PinnedTransport", "UpstreamClient", "UpstreamResponse", "Withheld"]

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
DEADLINE_SECONDS = 40.0
"""Below the idempotency lease (45 s): a call ends before a duplicate could judge its key abandoned."""
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)

# httpcore's debug trace writes raw request and response headers, which carry injected credentials
# and whatever an upstream echoes back: those records never reach a handler
_WIRE_TRACE = ("httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy", "httpcore.socks")


def _drop_wire_trace(record: logging.LogRecord) -> bool:
    return False


for _name in _WIRE_TRACE:
    logging.getLogger(_name).addFilter(_drop_wire_trace)

# failures that by their type happen before a byte is written, whatever the transport
_REFUSED_LOCALLY: tuple[type[BaseException], ...] = (
    httpx.InvalidURL, httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpcore.UnsupportedProtocol,
    httpcore.LocalProtocolError, h11.LocalProtocolError, UnicodeError, TypeError, ValueError,
)  # fmt: skip
_NOT_REACHED: tuple[type[BaseException], ...] = (
    httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpcore.ConnectError, httpcore.ConnectTimeout,
    httpcore.PoolTimeout,
)  # fmt: skip
_TIMEOUTS = (httpx.TimeoutException, httpcore.TimeoutException)


class NotSent(ExternalFailure):
    """Nothing reached the upstream; ``code`` says why (``upstream-unreachable``, ``upstream-request-refused``,
    ``upstream-deadline-exceeded``, ``tenant-busy``) and ``field`` where, when the request itself was at fault.
    The gateway hands it on as :class:`~skillhouse.gateway.errors.UpstreamFailed` with ``sent: false``."""

    code = "upstream-unreachable"

    def __init__(self, message: str, code: str = "upstream-unreachable", field: str | None = None) -> None:
        super().__init__(message, code=code)
        self.field = field


class MaybeSent(ExternalFailure):
    """The request may have reached the upstream; its outcome is unknown. ``cause``: ``deadline-exceeded``
    or ``failed`` (connection lost, protocol error). The gateway hands it on as ``upstream-unresolved``
    when the request has an idempotency key, else as :class:`~skillhouse.gateway.errors.UpstreamFailed`
    with ``sent: true``."""

    code = "upstream-failed"

    def __init__(self, message: str, cause: str = "failed") -> None:
        super().__init__(message, code="upstream-deadline-exceeded" if cause == "deadline-exceeded" else None)
        self.cause = cause


class Withheld(ExternalFailure):
    """The upstream answered with ``status``, but its answer is not handed on (``code`` says why:
    ``upstream-response-too-large``, ``upstream-encoding-refused``). The upstream acted."""

    code = "upstream-response-too-large"

    def __init__(self, message: str, code: str, status: int) -> None:
        super().__init__(message, code=code)
        self.status = status


@dataclass(frozen=True)
class UpstreamResponse:
    status: int
    headers: dict[str, str]
    body: str


TransportFactory = Callable[[EgressDecision], httpx.BaseTransport]

_SET_BY_HTTPX = frozenset({"host", "content-length", "transfer-encoding"})
"""Headers a caller setting them sends through httpx's own request (it spells them as httpx decides)."""
DEFAULT_HEADERS = (("Accept", "*/*"), ("Accept-Encoding", "identity"), ("Connection", "keep-alive"),
                   ("User-Agent", f"python-httpx/{httpx.__version__}"))
"""Sent unless the request sets them: those an ``httpx.Client`` sends, with only ``identity`` accepted as an encoding."""


def _field_of(exc: BaseException) -> str | None:
    if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol, httpcore.UnsupportedProtocol)):
        return "url"
    if isinstance(exc, (UnicodeError, httpx.LocalProtocolError, httpcore.LocalProtocolError, h11.LocalProtocolError)):
        return "headers"
    return None


def classify(exc: BaseException, attempt: Attempt, authority: str) -> NotSent | MaybeSent:
    """What an exception raised during ``attempt`` means: was anything sent, and why did it fail."""
    name = type(exc).__name__
    late = attempt.expired() and isinstance(exc, _TIMEOUTS)
    if attempt.wrote or (not attempt.watched and not isinstance(exc, _NOT_REACHED + _REFUSED_LOCALLY)):
        if late:
            return MaybeSent(f"{authority} did not answer within the call's deadline", cause="deadline-exceeded")
        return MaybeSent(f"{authority} failed after the request was sent ({name})")
    if late:
        return NotSent(f"{authority} was not reached within the call's deadline; nothing was sent",
                       code="upstream-deadline-exceeded")  # fmt: skip
    if isinstance(exc, _REFUSED_LOCALLY):
        field = _field_of(exc)
        return NotSent(f"the request to {authority} cannot be put on the wire ({name}: check its {field or 'request'}); "
                       "nothing was sent", code="upstream-request-refused", field=field)  # fmt: skip
    return NotSent(f"{authority} could not be reached ({name}); nothing was sent")


def _within(seconds: float | None, cap: float) -> float:
    return cap if seconds is None else min(seconds, cap)


class UpstreamClient:
    """Sends checked requests; one pooled transport per (scheme, name, checked address, port)."""

    def __init__(
        self, transport_for: TransportFactory | None = None, timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_response_bytes: int = MAX_RESPONSE_BYTES, deadline_seconds: float = DEADLINE_SECONDS,
    ) -> None:  # fmt: skip
        self._factory = transport_for or (lambda decision: PinnedTransport(decision.address, decision.port))
        # no single phase may outlast the whole call (the pool's wait for a connection included)
        self.timeout = httpx.Timeout(
            connect=_within(timeout.connect, deadline_seconds), read=_within(timeout.read, deadline_seconds),
            write=_within(timeout.write, deadline_seconds), pool=_within(timeout.pool, deadline_seconds),
        )  # fmt: skip
        self.max_response_bytes = max_response_bytes
        self.deadline_seconds = deadline_seconds
        self._transports: dict[tuple[str, str, str, int], httpx.BaseTransport] = {}
        self._extensions = {"timeout": self.timeout.as_dict()}
        self._lock = threading.Lock()

    def _transport(self, decision: EgressDecision) -> httpx.BaseTransport:
        key = (decision.target.scheme, decision.target.authority, str(decision.address), decision.port)
        with self._lock:
            transport = self._transports.get(key)
            if transport is None:
                transport = self._transports[key] = self._factory(decision)
            return transport

    def send(
        self, decision: EgressDecision, method: str, url: str, headers: dict[str, str], body: str | None,
        target: str | None = None,
    ) -> UpstreamResponse:
        """Send to the checked address; raises :class:`NotSent`, :class:`MaybeSent` or :class:`Withheld`.

        ``target``: the request line's target, sent verbatim (httpcore's ``target`` extension), so
        nothing between the gateway's decision and the wire re-spells the canonical URL.
        """
        authority = decision.target.authority
        try:
            content = None if body is None else body.encode()
        except UnicodeEncodeError:
            raise NotSent(f"the body for {authority} is not encodable as UTF-8 (a lone surrogate); nothing was sent",
                          code="upstream-request-refused", field="body") from None  # fmt: skip
        extensions = self._extensions if target is None else {**self._extensions, "target": target.encode("ascii")}
        # until the transport takes the request, everything is local: nothing can have been written
        attempt = Attempt(time.monotonic() + self.deadline_seconds, watched=True)
        scope = CURRENT.set(attempt)
        try:
            transport = self._transport(decision)
            if isinstance(transport, PinnedTransport) and target is not None and not _SET_BY_HTTPX & {n.lower() for n in headers}:
                # the gateway's own transport, without an httpx.Request and Response around httpcore's
                # (the same bytes on the wire: tests/gateway/test_upstream_wire.py)
                opened = transport.open(method, decision.target.scheme, decision.target.host, decision.target.port,
                                        target, _raw(_with_defaults(headers)), content, extensions)  # fmt: skip
                try:
                    return self._read(opened.status, httpx.Headers(opened.headers), opened.iter_stream(), attempt, authority)
                finally:
                    opened.close()  # before the end of the body: the connection is closed, not pooled
            request = httpx.Request(method, url, headers=_with_defaults(headers), content=content, extensions=extensions)
            attempt.watched = False  # a transport that reports its writes says so itself
            response = transport.handle_request(request)
            try:
                return self._read(response.status_code, response.headers, response.iter_raw(), attempt, authority)
            finally:
                response.close()
        except (NotSent, MaybeSent, Withheld):
            raise
        except Exception as exc:
            raise classify(exc, attempt, authority) from None
        finally:
            CURRENT.reset(scope)

    def _read(self, status: int, found: httpx.Headers, body: Iterable[bytes], attempt: Attempt, authority: str) -> UpstreamResponse:
        cap = self.max_response_bytes
        too_large = Withheld(f"{authority} answered {status} with more than the gateway accepts ({cap} bytes); "
                             "the request was done and is not resent", code="upstream-response-too-large", status=status)  # fmt: skip
        encoding = found.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise Withheld(f"{authority} answered {status} encoded as {encoding!r} although the gateway asked for "
                           "identity; the request was done and is not resent", code="upstream-encoding-refused",
                           status=status)  # fmt: skip
        declared = found.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        for chunk in body:
            if not chunk:
                continue
            size += len(chunk)
            if size > cap:
                raise too_large
            chunks.append(chunk)
            if attempt.expired():
                raise MaybeSent(f"{authority} did not finish its answer within the call's deadline", cause="deadline-exceeded")
        headers: dict[str, str] = {}
        for name, value in found.multi_items():
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return UpstreamResponse(status, headers, b"".join(chunks).decode("utf-8", "replace"))

    def close(self) -> None:
        with self._lock:
            for transport in self._transports.values():
                transport.close()
            self._transports.clear()


def _with_defaults(headers: dict[str, str]) -> list[tuple[str, str]]:
    """:data:`DEFAULT_HEADERS` with ``headers`` over them (names compared without case), in that order."""
    merged = {name.lower(): (name, value) for name, value in DEFAULT_HEADERS}
    for name, value in headers.items():
        merged[name.lower()] = (name, value)
    return list(merged.values())


def _raw(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """Header names and values as httpx encodes them for the wire (ASCII, or ``UnicodeEncodeError``: nothing sent)."""
    return [(name.encode("ascii"), value.encode("ascii")) for name, value in headers]


def failure_details(exc: NotSent | MaybeSent | Withheld) -> JsonObject:
    """What a refusal built from ``exc`` carries besides its code and message."""
    if isinstance(exc, NotSent):
        return {"sent": False, **({"field": exc.field} if exc.field else {})}
    if isinstance(exc, Withheld):
        return {"sent": True, "status": exc.status}
    return {"sent": True, "cause": exc.cause}
