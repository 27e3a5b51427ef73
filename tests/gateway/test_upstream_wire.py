"""What the upstream client puts on the wire: the same bytes whether it goes through httpx's request or
straight to its own transport's pool, and never a cookie an earlier answer set."""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Any

import httpcore
import httpx
import pytest

from skillhouse.gateway.addresses import IPAddress, parse_address
from skillhouse.gateway.egress import EgressDecision, Target
from skillhouse.gateway.upstream import UpstreamClient
from skillhouse.gateway.upstream_wire import PinnedTransport

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nSet-Cookie: sid=tenant-a; Path=/\r\nX-Twice: a\r\nX-Twice: b\r\n\r\nok"


class _Stream(httpcore.NetworkStream):
    """One connection: records what is written, answers :data:`ANSWER` to every request."""

    def __init__(self, written: list[bytes]) -> None:
        self.written = written
        self.pending = b""

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self.written.append(buffer)
        if buffer.endswith(b"\r\n\r\n") or not buffer.endswith(b"\r\n"):
            self.pending = ANSWER

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        found, self.pending = self.pending[:max_bytes], self.pending[max_bytes:]
        return found

    def close(self) -> None:
        pass

    def get_extra_info(self, info: str) -> Any:
        return None


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        return _Stream(self.written)


class _ThroughHttpx(httpx.BaseTransport):
    """The same pinned transport behind a type the client does not know: it builds an ``httpx.Request``."""

    def __init__(self, inner: PinnedTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)


def _decision(scheme: str, host: str, port: int, address: IPAddress) -> EgressDecision:
    return EgressDecision(Target(scheme, host, port, "/", ""), address, port, fixed=True)


CASES = [
    ("POST", "http", "api.example.com", 80, "/bookings?x=1", {"content-type": "application/json", "Accept-Encoding": "identity"}, '{"a":1}'),
    ("POST", "http", "api.example.com", 8084, "/bookings", {"Idempotency-Key": "skh-1"}, ""),
    ("GET", "http", "::1", 8080, "/a/b", {"accept": "text/plain", "x-one": "1"}, None),
    ("PUT", "http", "xn--bcher-kva.example", 80, "/%C3%BCx/y", {}, None),
    ("DELETE", "http", "10.1.2.3", 80, "/z", {"User-Agent": "mine"}, "gone"),
]


@pytest.mark.parametrize(("method", "scheme", "host", "port", "target", "headers", "body"), CASES)
def test_both_routes_put_the_same_bytes_on_the_wire(
    method: str, scheme: str, host: str, port: int, target: str, headers: dict[str, str], body: str | None
) -> None:
    sent: list[list[bytes]] = []
    answers = []
    for wrap in (False, True):
        backend = _Backend()
        pinned = PinnedTransport(IPv4Address("127.0.0.1"), port, backend)
        transport: httpx.BaseTransport = _ThroughHttpx(pinned) if wrap else pinned
        client = UpstreamClient(lambda _, chosen=transport: chosen)
        bracketed = f"[{host}]" if ":" in host else host
        shown_port = "" if port == {"http": 80, "https": 443}[scheme] else f":{port}"
        url = f"{scheme}://{bracketed}{shown_port}{target}"
        answers.append(client.send(_decision(scheme, host, port, parse_address("127.0.0.1")), method, url, headers, body, target=target))
        sent.append(backend.written)
    assert sent[0] == sent[1] and sent[0][0].startswith(f"{method} {target} HTTP/1.1\r\n".encode())
    assert answers[0] == answers[1]


def test_a_cookie_one_answer_set_is_never_sent_with_the_next_request() -> None:
    backend = _Backend()
    client = UpstreamClient(lambda decision: PinnedTransport(decision.address, decision.port, backend))
    decision = _decision("http", "api.example.com", 80, parse_address("127.0.0.1"))
    for _ in range(2):
        answer = client.send(decision, "GET", "http://api.example.com/", {}, None, target="/")
        assert answer.headers["set-cookie"] == "sid=tenant-a; Path=/" and answer.headers["x-twice"] == "a, b"
    # through httpx's request too: the transports are shared by every tenant calling this address
    client = UpstreamClient(lambda decision: _ThroughHttpx(PinnedTransport(decision.address, decision.port, backend)))
    client.send(decision, "GET", "http://api.example.com/", {}, None)
    assert len(backend.written) == 3
    assert all(b"cookie" not in request.lower().replace(b"set-cookie", b"") for request in backend.written)
