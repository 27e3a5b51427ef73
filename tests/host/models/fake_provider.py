"""A fake model provider on loopback: records each request it receives and answers from a script.

It speaks HTTP like the real provider does (JSON bodies, status codes), so the adapters are tested
over the wire; what it answers is whatever the test queued, in the provider's own wire format.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    peer: int = 0
    """The client's port: requests with the same one came over one connection."""


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    raw: bytes | None = None
    hold: threading.Event | None = None
    """Answer only once this is set (or after 10 s): a provider that does not answer in time."""


@dataclass
class FakeProvider:
    url: str
    replies: list[Reply] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)
    """The client ports of connections the client has closed."""
    connection_closed: threading.Event = field(default_factory=threading.Event)

    def reply(self, body: Any = None, status: int = 200, raw: bytes | None = None) -> None:
        self.replies.append(Reply(status, body, raw))

    def bodies(self) -> list[Any]:
        return [r.body for r in self.received]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeProvider

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.fake.received.append(Received("POST", self.path, headers, json.loads(raw) if raw else None,
                                           self.client_address[1]))
        reply = self.fake.replies.pop(0) if self.fake.replies else Reply(500, {"error": "no reply queued"})
        if reply.hold is not None:
            reply.hold.wait(timeout=10)
        data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up waiting

    def finish(self) -> None:
        super().finish()
        self.fake.closed.append(self.client_address[1])
        self.fake.connection_closed.set()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def fake_provider() -> Iterator[FakeProvider]:
    handler = type("Handler", (_Handler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    fake = FakeProvider(url=f"http://127.0.0.1:{server.server_address[1]}")
    handler.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        for reply in fake.replies:
            if reply.hold is not None:
                reply.hold.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
