"""A real upstream on loopback that records what reaches it: bookings, charges, echoes, redirects, and
(``busy``) its own rate limit answered 429 with ``Retry-After``.

``hold`` (a threading.Event) makes ``/bookings`` and ``/charges`` wait after recording, so a test can act while a
request has reached the upstream but not been answered.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Recorder:
    bookings: list[dict[str, Any]] = field(default_factory=list)
    charges: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)
    hold: threading.Event | None = None
    busy: str | None = None
    """When set, every request is answered ``429`` with this ``Retry-After`` (after being recorded)."""
    lock: threading.Lock = field(default_factory=threading.Lock)


def handler_for(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        wbufsize = 65536

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            seen = {"method": self.command, "path": self.path, "line": self.requestline,
                    "headers": dict(self.headers.items()), "body": body}  # fmt: skip
            with recorder.lock:
                recorder.requests.append(seen)
            path = self.path.split("?")[0]
            if recorder.busy is not None:
                self._reply(429, {"error": "slow down"}, {"Retry-After": recorder.busy})
            elif path == "/bookings" and self.command == "POST":
                with recorder.lock:
                    booking = {"id": f"b{len(recorder.bookings) + 1}", **json.loads(body)}
                    recorder.bookings.append(booking)
                recorder.received.set()
                if recorder.hold is not None:
                    recorder.hold.wait(30)
                self._reply(201, booking)
            elif path == "/charges" and self.command == "POST":
                with recorder.lock:
                    recorder.charges.append(json.loads(body))
                recorder.received.set()
                if recorder.hold is not None:
                    recorder.hold.wait(30)
                self._reply(201, {"charged": True})
            elif path == "/echo":
                self._reply(200, seen, {"X-Echo-Auth": self.headers.get("Authorization", "")})
            elif path == "/unauthorized":
                self._reply(401, {"error": "invalid_token"}, {"WWW-Authenticate": 'Bearer error="invalid_token"'})
            elif path == "/redirect":
                self._reply(302, {}, {"Location": "http://127.0.0.1:9/admin"})
            else:
                self._reply(200, {"rooms": [1, 2, 3]})

        do_GET = do_POST = do_DELETE = do_PUT = _handle

    return Handler


class Upstream:
    def __init__(self) -> None:
        self.recorder = Recorder()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self.recorder))
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Upstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.recorder.hold is not None:
            self.recorder.hold.set()
        self.server.shutdown()
        self.server.server_close()
