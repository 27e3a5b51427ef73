"""The pinned transport's connection pool, against a real server on loopback: connections kept alive and
reused, never one the server closed or one whose answer was not read to its end, at most as many open
as allowed (a request waits for a free one, or is not sent), and none left open when it closes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from ipaddress import IPv4Address
from typing import Any

import httpcore
import pytest

from skillhouse.gateway.upstream_pool import PinnedPool
from skillhouse.gateway.upstream_wire import PinnedBackend

BODY = "ünïcode body " * 50


class Server:
    """Answers every request on a connection with :data:`BODY`; ``close_after`` answers per connection, then closes it."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self.close_after: int | None = None
        self.hold = threading.Event()
        self.hold.set()
        self.ended = threading.Semaphore(0)
        """Released each time the server has closed a connection."""
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        body = BODY.encode()
        answered, buffered = 0, b""
        with conn:
            while self.close_after is None or answered < self.close_after:
                while b"\r\n\r\n" not in buffered:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buffered += chunk
                _, buffered = buffered.split(b"\r\n\r\n", 1)
                self.hold.wait(10)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                answered += 1
        self.ended.release()

    def close(self) -> None:
        self.listener.close()


class CountingBackend(httpcore.NetworkBackend):
    """The real backend; counts connections, and fails the first ``failing`` of them."""

    def __init__(self, failing: int = 0) -> None:
        self.inner = httpcore.SyncBackend()
        self.streams: list[httpcore.NetworkStream] = []
        self.failing = failing

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        if self.failing:
            self.failing -= 1
            raise httpcore.ConnectError("refused, as asked")
        stream = self.inner.connect_tcp(host, port, *args, **kwargs)
        self.streams.append(stream)
        return stream


@pytest.fixture
def server() -> Iterator[Server]:
    found = Server()
    yield found
    found.hold.set()
    found.close()


def pool_for(server: Server, backend: CountingBackend, max_connections: int = 4) -> PinnedPool:
    return PinnedPool(PinnedBackend(IPv4Address("127.0.0.1"), server.port, backend), None, max_connections)


def request(scheme: bytes = b"http", pool_timeout: float = 5.0) -> httpcore.Request:
    url = httpcore.URL(scheme=scheme, host=b"api.test", port=None, target=b"/rooms")
    return httpcore.Request(b"GET", url, headers=[(b"Host", b"api.test")], extensions={"timeout": {"pool": pool_timeout}})


def fetch(pool: PinnedPool, pool_timeout: float = 5.0) -> str:
    response = pool.handle_request(request(pool_timeout=pool_timeout))
    try:
        return b"".join(response.iter_stream()).decode()
    finally:
        response.close()


def queued_in_turn(waits: Callable[[str], None], names: tuple[str, ...]) -> list[threading.Thread]:
    """A thread per name running ``waits(name)``, each given time to queue for a connection before the next starts."""
    threads = []
    for name in names:
        thread = threading.Thread(target=waits, args=(name,))
        thread.start()
        threads.append(thread)
        thread.join(0.1)
    return threads


def test_one_connection_answers_request_after_request(server: Server) -> None:
    backend = CountingBackend()
    pool = pool_for(server, backend)
    assert [fetch(pool) for _ in range(5)] == [BODY] * 5
    assert server.accepted == 1 and len(backend.streams) == 1
    pool.close()


def test_a_connection_the_server_closed_while_idle_is_not_used(server: Server) -> None:
    server.close_after = 1
    backend = CountingBackend()
    pool = pool_for(server, backend)
    for _ in range(3):
        assert fetch(pool) == BODY
        assert server.ended.acquire(timeout=10)  # closed by the server while idle in the pool
    assert server.accepted == 3
    pool.close()


def test_a_connection_whose_answer_was_not_read_to_its_end_is_closed_not_reused(server: Server) -> None:
    backend = CountingBackend()
    pool = pool_for(server, backend)
    response = pool.handle_request(request())
    next(iter(response.iter_stream()), None)  # part of the body at most
    response.close()
    assert fetch(pool) == BODY
    assert len(backend.streams) == 2
    pool.close()


def test_a_request_waits_for_the_only_connection_and_then_uses_it(server: Server) -> None:
    backend = CountingBackend()
    pool = pool_for(server, backend, max_connections=1)
    first = pool.handle_request(request())
    answers: list[str] = []
    waiting = threading.Thread(target=lambda: answers.append(fetch(pool)))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()  # no second connection is opened
    assert b"".join(first.iter_stream()).decode() == BODY
    first.close()
    waiting.join(10)
    assert answers == [BODY] and len(backend.streams) == 1
    pool.close()


def test_a_request_that_finds_no_free_connection_in_time_times_out_of_the_pool(server: Server) -> None:
    pool = pool_for(server, CountingBackend(), max_connections=1)
    first = pool.handle_request(request())
    with pytest.raises(httpcore.PoolTimeout):
        pool.handle_request(request(pool_timeout=0.05))
    first.close()
    assert fetch(pool) == BODY
    pool.close()


def test_a_failed_connection_frees_its_place(server: Server) -> None:
    backend = CountingBackend(failing=1)
    pool = pool_for(server, backend, max_connections=1)
    with pytest.raises(httpcore.ConnectError):
        fetch(pool, pool_timeout=0.05)
    assert fetch(pool, pool_timeout=0.05) == BODY
    pool.close()


def test_many_threads_share_at_most_the_allowed_connections(server: Server) -> None:
    backend = CountingBackend()
    pool = pool_for(server, backend, max_connections=3)
    answers: list[str] = []

    def client() -> None:
        answers.extend(fetch(pool) for _ in range(20))

    clients = [threading.Thread(target=client) for _ in range(8)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(30)
    assert answers == [BODY] * 160
    assert 1 <= len(backend.streams) <= 3
    pool.close()


def test_closing_the_pool_closes_its_idle_connections(server: Server) -> None:
    backend = CountingBackend()
    pool = pool_for(server, backend)
    assert fetch(pool) == BODY
    pool.close()
    assert backend.streams[0].get_extra_info("socket").fileno() == -1
    assert fetch(pool) == BODY  # a closed pool still opens new connections, as httpcore's does
    pool.close()


def test_a_scheme_other_than_http_is_refused_before_connecting(server: Server) -> None:
    backend = CountingBackend()
    with pytest.raises(httpcore.UnsupportedProtocol):
        pool_for(server, backend).handle_request(request(scheme=b"ftp"))
    assert backend.streams == []


def test_requests_that_wait_are_served_first_come_first_served_never_overtaken(server: Server) -> None:
    # one connection, held; three requests wait in order, and a fourth arrives as the connection comes back:
    # each waiting one gets it in its turn, the late one only after them
    pool = pool_for(server, CountingBackend(), max_connections=1)
    held = pool.handle_request(request())
    served: list[str] = []
    lock = threading.Lock()

    def waits(name: str) -> None:
        response = pool.handle_request(request(pool_timeout=10))
        with lock:
            served.append(name)
        b"".join(response.iter_stream())
        response.close()

    waiting = queued_in_turn(waits, ("first", "second", "third"))
    b"".join(held.iter_stream())
    held.close()  # handed to "first", not left for whoever asks first
    waits("late")  # at once, in this thread: before "first" has even woken
    for thread in waiting:
        thread.join(10)
    assert served == ["first", "second", "third", "late"]
    pool.close()


def test_a_request_that_timed_out_waiting_leaves_the_queue_and_the_next_one_is_served(server: Server) -> None:
    pool = pool_for(server, CountingBackend(), max_connections=1)
    held = pool.handle_request(request())
    with pytest.raises(httpcore.PoolTimeout):
        pool.handle_request(request(pool_timeout=0.05))
    answers: list[str] = []
    patient = threading.Thread(target=lambda: answers.append(fetch(pool, pool_timeout=10)))
    patient.start()
    patient.join(0.1)
    b"".join(held.iter_stream())
    held.close()
    patient.join(10)
    assert answers == [BODY]
    pool.close()


def test_the_place_of_a_connection_closed_goes_to_the_request_waiting_longest(server: Server) -> None:
    # the held answer is not read to its end, so its connection is closed, not reused: its place is handed
    # to the request waiting longest, which opens a new connection; the others follow on that one, in turn
    backend = CountingBackend()
    pool = pool_for(server, backend, max_connections=1)
    held = pool.handle_request(request())
    served: list[str] = []

    def waits(name: str) -> None:
        served.append(name + ":" + fetch(pool, pool_timeout=10)[:6])

    waiting = queued_in_turn(waits, ("first", "second"))
    next(iter(held.iter_stream()), None)
    held.close()
    waits("late")
    for thread in waiting:
        thread.join(10)
    assert served == ["first:ünïcod", "second:ünïcod", "late:ünïcod"]
    assert len(backend.streams) == 2
    pool.close()
