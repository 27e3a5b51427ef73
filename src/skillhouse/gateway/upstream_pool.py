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
from collections import deque
from collections.abc import AsyncIterable, Iterable, Iterator

import httpcore


class _Waiter:
    """A request waiting for a connection: it is handed an idle one, or a place to open one in (``None``)."""

    __slots__ = ("connection", "handed")

    def __init__(self) -> None:
        self.connection: httpcore.HTTPConnection | None = None
        self.handed = threading.Event()


class PinnedPool:
    """Keep-alive HTTP/1.1 connections through ``backend``, at most ``max_connections`` open at once.

    Requests that find none free are served first come, first served, as by httpcore's pool: a connection
    handed back, or the place of one closed, goes to the request that has waited longest, never to one that
    arrives meanwhile (with a wake-up to race for it instead, a request could lose its turn again and again
    under load, and time out while later ones went through).
    """

    def __init__(self, backend: httpcore.NetworkBackend, ssl_context: ssl.SSLContext | None, max_connections: int) -> None:
        self._backend, self._ssl_context, self._max = backend, ssl_context, max_connections
        self._idle: list[httpcore.HTTPConnection] = []
        self._open: set[httpcore.HTTPConnection] = set()
        self._opening = 0
        """Places taken for a connection not yet in ``_open`` (it is made outside the lock)."""
        self._waiting: deque[_Waiter] = deque()
        self._lock = threading.Lock()

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
        connection = self._claim(timeout)
        # outside the lock: has_expired polls the socket (a server that closed it, or wrote to it unasked)
        while connection is not None and not (connection.can_handle_request(origin) and connection.is_idle()
                                               and not connection.has_expired()):  # fmt: skip
            connection.close()
            with self._lock:
                self._open.discard(connection)
                if self._idle:  # another idle one; the closed one's place goes to whoever waits
                    self._hand_place()
                    connection = self._idle.pop()
                else:  # its place is this request's: a new connection in it
                    self._opening += 1
                    connection = None
        if connection is not None:
            return connection
        fresh = httpcore.HTTPConnection(origin, ssl_context=self._ssl_context, network_backend=self._backend)
        with self._lock:
            self._opening -= 1
            self._open.add(fresh)
        return fresh

    def _claim(self, timeout: float | None) -> httpcore.HTTPConnection | None:
        """An idle connection, or ``None`` with a place counted in ``_opening``, in turn; ``PoolTimeout`` when
        none comes in ``timeout``."""
        with self._lock:
            if not self._waiting:
                if self._idle:
                    return self._idle.pop()
                if len(self._open) + self._opening < self._max:
                    self._opening += 1
                    return None
            waiter = _Waiter()
            self._waiting.append(waiter)
        if not waiter.handed.wait(timeout):
            with self._lock:
                if waiter in self._waiting:  # nothing was handed over meanwhile
                    self._waiting.remove(waiter)
                    raise httpcore.PoolTimeout("no connection of the pool was free in time")
        return waiter.connection

    def _hand_place(self) -> None:
        """Under the lock: a free place to the request waiting longest, if any waits."""
        if self._waiting and len(self._open) + self._opening < self._max:
            self._opening += 1
            self._waiting.popleft().handed.set()

    def _give_back(self, connection: httpcore.HTTPConnection) -> None:
        if connection.is_idle() and not connection.is_closed():
            with self._lock:
                if connection in self._open:  # not closed with the pool meanwhile
                    if self._waiting:
                        waiter = self._waiting.popleft()
                        waiter.connection = connection
                        waiter.handed.set()
                    else:
                        self._idle.append(connection)
                    return
        self._drop(connection)

    def _drop(self, connection: httpcore.HTTPConnection) -> None:
        with self._lock:
            self._open.discard(connection)
            self._hand_place()
        connection.close()

    def close(self) -> None:
        """Close every connection, busy ones too (their answers fail, as httpcore's pool's do); requests that
        wait are handed the places, and open connections anew, as any later request does."""
        with self._lock:
            closing, self._open, self._idle = list(self._open), set(), []
            while self._waiting and self._opening < self._max:
                self._hand_place()
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
