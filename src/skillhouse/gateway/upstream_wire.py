"""One upstream attempt on the wire: where it connects, when its first byte leaves, when its time is up.

:class:`PinnedTransport` is the default transport: a pool of httpcore connections
(``gateway/upstream_pool.py``) whose every connection goes to the address the egress rule checked (:class:`PinnedBackend`), whatever host the URL names. Each
connection's stream is a :class:`WatchedStream`, which reports to the current :class:`Attempt`
(a context variable set by the upstream client around one call):

- the first bytes handed to the socket mark the attempt as having sent. In httpcore's HTTP/1.1
  connection every byte of a request goes out through ``NetworkStream.write`` (held there and sent
  at the first read, see :class:`WatchedStream`); before it, only local work happens
  (httpx building the request: ``InvalidURL``, ``UnicodeEncodeError`` on a header; the pool waiting
  for a slot: ``PoolTimeout``; connecting and TLS: ``ConnectError``, an ``ssl.SSLError``; h11
  refusing a header: ``LocalProtocolError``). So "did anything leave?" is answered by this flag, not
  guessed from the exception's type;
- every read, write and connect waits at most until the attempt's deadline, so an upstream that
  trickles a byte a second cannot hold a call past it (a per-read timeout alone would let it).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from skillhouse.gateway.addresses import IPAddress
from skillhouse.gateway.egress import DEFAULT_PORTS
from skillhouse.gateway.upstream_pool import PinnedPool


@dataclass
class Attempt:
    """One call's progress: its deadline (monotonic seconds) and whether a byte was handed to the socket."""

    deadline: float
    wrote: bool = False
    watched: bool = False
    """Whether every write so far would have been seen: true before a transport takes the call, and
    while a transport that reports its writes (:class:`PinnedTransport`) carries it."""

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def expired(self) -> bool:
        return self.left() <= 0

    def wait(self, timeout: float | None, late: type[httpcore.TimeoutException]) -> float:
        """``timeout`` cut to what is left of the deadline; ``late`` is raised when nothing is left."""
        left = self.left()
        if left <= 0:
            raise late("the call's deadline passed")
        return left if timeout is None else min(timeout, left)


HELD_BYTES = 64 * 1024
"""A request's bytes held back to go out in one write (:class:`WatchedStream`); a longer one goes out in pieces."""

CURRENT: ContextVar[Attempt | None] = ContextVar("skillhouse_upstream_attempt", default=None)


def _wait(timeout: float | None, late: type[httpcore.TimeoutException]) -> float | None:
    attempt = CURRENT.get()
    return timeout if attempt is None else attempt.wait(timeout, late)


class WatchedStream(httpcore.NetworkStream):
    """A connection's stream that reports writes to the current attempt and keeps to its deadline.

    A request's writes are held until its first read (or until they pass :data:`HELD_BYTES`), then sent
    together: httpcore writes the head and the body separately, and one ``send`` instead of two is one
    system call, one TCP segment and one wake-up of the upstream fewer. Nothing held has left: the
    attempt counts as having sent from the moment the held bytes are handed to the socket."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner
        self._held = b""

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            self._send(timeout)
        return self._inner.read(max_bytes, _wait(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held += buffer
        if len(self._held) > HELD_BYTES:
            self._send(timeout)

    def _send(self, timeout: float | None) -> None:
        held, self._held = self._held, b""
        attempt = CURRENT.get()
        if attempt is not None:
            attempt.wrote = True  # before the write: a partial write has still sent something
        self._inner.write(held, _wait(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._held = b""  # never sent
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        # the handshake writes through the inner stream: TLS records are not the request
        return WatchedStream(self._inner.start_tls(ssl_context, server_hostname, _wait(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """Opens every TCP connection to one fixed address, whatever host the URL names."""

    def __init__(self, address: IPAddress, port: int, inner: httpcore.NetworkBackend | None = None) -> None:
        self.address, self.port = address, port
        self._inner = inner or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _wait(timeout, httpcore.ConnectTimeout)
        return WatchedStream(self._inner.connect_tcp(str(self.address), self.port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not an egress route")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Body(httpx.SyncByteStream):
    """The answer's body as httpcore streams it; closing it early closes the connection (never pooled half-read)."""

    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        yield from self._response.iter_stream()

    def close(self) -> None:
        self._response.close()


class PinnedTransport(httpx.BaseTransport):
    """An httpx transport over a pool of httpcore connections that all go to the checked address.

    The answer is streamed (its body is read by the caller, chunk by chunk); httpcore's exceptions
    pass through unchanged and the upstream client classifies them by the current :class:`Attempt`.
    """

    def __init__(
        self, address: IPAddress, port: int, backend: httpcore.NetworkBackend | None = None,
        ssl_context: ssl.SSLContext | None = None, max_connections: int = 64,
    ) -> None:
        # ssl_context: certificates to verify against instead of the default bundle (a private CA)
        self._pool = PinnedPool(PinnedBackend(address, port, backend), ssl_context, max_connections)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        attempt = CURRENT.get()
        if attempt is not None:
            attempt.watched = True
        # the gateway's canonical target, verbatim when it gives one (httpx would re-spell the path)
        target = request.extensions.get("target", request.url.raw_path)
        url = httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port, target=target)
        content = request.read()
        core = httpcore.Request(request.method, url, headers=request.headers.raw, content=content, extensions=request.extensions)
        response = self._pool.handle_request(core)
        return httpx.Response(response.status, headers=response.headers, stream=_Body(response), request=request)

    def open(
        self, method: str, scheme: str, host: str, port: int, target: str, headers: list[tuple[bytes, bytes]],
        content: bytes | None, extensions: dict[str, Any],
    ) -> httpcore.Response:  # fmt: skip
        """Send a request as :meth:`handle_request` would send the ``httpx.Request`` for it, without building one:
        ``Host`` first, then ``headers`` (which carry none of ``Host``, ``Content-Length``, ``Transfer-Encoding``),
        then the body's length. The answer is httpcore's, streamed: the caller reads its body and closes it."""
        attempt = CURRENT.get()
        if attempt is not None:
            attempt.watched = True
        default = DEFAULT_PORTS.get(scheme) == port
        bracketed = f"[{host}]" if ":" in host else host
        netloc = (bracketed if default else f"{bracketed}:{port}").encode("ascii")
        method = method.upper()
        if content:
            sent = [(b"Host", netloc), *headers, (b"Content-Length", str(len(content)).encode("ascii"))]
        elif method in ("POST", "PUT", "PATCH"):
            sent = [(b"Host", netloc), (b"Content-Length", b"0"), *headers]
        else:
            sent = [(b"Host", netloc), *headers]
        url = httpcore.URL(scheme=scheme.encode("ascii"), host=host.encode("ascii"), port=None if default else port,
                           target=target.encode("ascii"))  # fmt: skip
        core = httpcore.Request(method.encode("ascii"), url, headers=sent, content=content or b"", extensions=extensions)
        return self._pool.handle_request(core)

    def close(self) -> None:
        self._pool.close()
