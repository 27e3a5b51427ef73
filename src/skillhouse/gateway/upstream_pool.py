"""The pool of keep-alive connections behind one :class:`~skillhouse.gateway.upstream_wire.PinnedTransport`.

A transport serves one origin at one checked address, so its pool is a stack of idle HTTP/1.1
connections (the most recently used on top) and a count of the open ones, where httpcore's
``ConnectionPool`` serves any origin: on every request and every answer closed it went over all its
connections (polling each idle one's socket, and counting them once per idle connection) and all
its queued requests, under one lock. With the benchmark's 16 client threads that was some 500
``is_idle`` calls and 30 ``poll`` system calls per request. Here a request polls only the connection
it takes, and its answer is the connection's own (httpcore's pool built a second ``Response``, checking
every header again). Measured in a reduced ``bench/bench_gateway.py`` loop (SQLite, 16 threads, medians
of interleaved runs): about 880 µs of CPU per fresh request before, 690 with this pool, 650 without the
second ``Response``.

What the pool does is httpcore's, connection for connection: at most ``max_connections`` open at
once (idle or busy; a request that finds none free waits up to the ``pool`` timeout, then
``PoolTimeout``: nothing was sent); an idle connection the server closed or wrote to unasked is
closed, not used; an answer's connection goes back to the stack when its body is closed, unless it
was closed (an error, ``Connection: close``, a body not read to its end); no retries.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import AsyncIterable, Iterable, Iterator

import httpcore


class PinnedPool:
    """Keep-alive HTTP/1.1 connections through ``backend``, at most ``max_connections`` open at once."""

    def __init__(self, backend: httpcore.NetworkBackend, ssl_context: ssl.SSLContext | None, max_connections: int) -> None:
        self._backend, self._ssl_context, self._max = backend, ssl_context, max_connections
        self._idle: list[httpcore.HTTPConnection] = []
        self._open: set[httpcore.HTTPConnection] = set()
        self._freed = threading.Condition()

    def handle_request(self, request: httpcore.Request) -> httpcore.Response:
        if request.url.scheme not in (b"http", b"https"):
            raise httpcore.UnsupportedProtocol(f"unsupported protocol {request.url.scheme!r}")
        timeouts = request.extensions.get("timeout", {})
        connection = self._take(request.url.origin, timeouts.get("pool"))
        try:
            response = connection.handle_request(request)
        except BaseException:
            self._give_back(connection)  # httpcore closed it unless nothing was sent
            raise
        # the connection's own answer, its body wrapped: a new httpcore.Response would check every header again
        response.stream = _Returned(response.stream, connection, self)
        return response

    def _take(self, origin: httpcore.Origin, timeout: float | None) -> httpcore.HTTPConnection:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._freed:
                while not self._idle and len(self._open) >= self._max:
                    left = None if deadline is None else deadline - time.monotonic()
                    if (left is not None and left <= 0) or not self._freed.wait(left):
                        raise httpcore.PoolTimeout("no connection of the pool was free in time")
                if not self._idle:
                    connection = httpcore.HTTPConnection(origin, ssl_context=self._ssl_context,
                                                         network_backend=self._backend)  # fmt: skip
                    self._open.add(connection)
                    return connection
                connection = self._idle.pop()
            # outside the lock: has_expired polls the socket (a server that closed it, or wrote to it unasked)
            if connection.can_handle_request(origin) and connection.is_idle() and not connection.has_expired():
                return connection
            self._drop(connection)

    def _give_back(self, connection: httpcore.HTTPConnection) -> None:
        if connection.is_idle() and not connection.is_closed():
            with self._freed:
                if connection in self._open:  # not closed with the pool meanwhile
                    self._idle.append(connection)
                    self._freed.notify()
                    return
        self._drop(connection)

    def _drop(self, connection: httpcore.HTTPConnection) -> None:
        with self._freed:
            self._open.discard(connection)
            self._freed.notify()
        connection.close()

    def close(self) -> None:
        """Close every connection, busy ones too (their answers fail, as httpcore's pool's do)."""
        with self._freed:
            closing, self._open, self._idle = list(self._open), set(), []
        for connection in closing:
            connection.close()


class _Returned:
    """An answer's body; closing it hands its connection back to the pool (or closes a connection that cannot be reused)."""

    def __init__(self, stream: Iterable[bytes] | AsyncIterable[bytes], connection: httpcore.HTTPConnection,
                 pool: PinnedPool) -> None:  # fmt: skip
        assert isinstance(stream, Iterable), "a synchronous connection streams synchronously"
        self._stream, self._connection, self._pool = stream, connection, pool
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._stream
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                close = getattr(self._stream, "close", None)
                if close is not None:
                    close()
            finally:
                self._pool._give_back(self._connection)
