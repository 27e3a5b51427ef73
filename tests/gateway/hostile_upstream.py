"""A loopback upstream that misbehaves as a test asks: huge answers, trickles, hangs, hang-ups.

``mode`` chooses how ``POST /bookings`` and ``GET /rooms`` answer (``by_guest`` overrides it for a
booking's ``guest_name``):

- ``ok``: a booking (201) or the rooms (200), as JSON;
- ``huge``: 400 MB, chunked, made lazily from one 64 KB block (never held whole);
- ``huge-declared``: ``Content-Length`` of 400 MB, then the same lazy bytes;
- ``trickle``: ``Content-Length`` 100000, then one byte every 50 ms, for as long as anyone listens;
- ``hang``: waits until ``release`` is set, then answers ``ok``;
- ``close``: reads the request and hangs up without a word;
- ``gzip``: a gzip-encoded answer, although the gateway asks for identity.

``received`` is set whenever a request has been read; ``stopped`` when a streaming answer ended
(the reader went away or it was all sent), with ``streamed`` bytes written by then.
"""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HUGE = 400 * 1024 * 1024
BLOCK = b"x" * 65536


class Hostile:
    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.by_guest: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []
        self.bookings: list[dict[str, Any]] = []
        self.received = threading.Event()
        self.stopped = threading.Event()
        self.release = threading.Event()
        self.streamed = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Hostile:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.stopped.set()
        self.server.shutdown()
        self.server.server_close()


def _handler(hostile: Hostile) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in separate writes

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _ok(self, body: dict[str, Any] | None) -> None:
            if body is None:
                self._json(200, {"rooms": [1, 2, 3]})
                return
            with hostile.lock:
                booking = {"id": f"b{len(hostile.bookings) + 1}", **body}
                hostile.bookings.append(booking)
            self._json(201, booking)

        def _stream(self, chunked: bool, pace: float | None = None) -> None:
            self.send_response(200)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(100000 if pace else HUGE))
            self.end_headers()
            try:
                while hostile.streamed < HUGE and not hostile.stopped.is_set():
                    block = b"x" if pace else BLOCK
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
                    hostile.streamed += len(block)
                    if pace:
                        self.wfile.flush()
                        hostile.stopped.wait(pace)
            except OSError:
                pass  # the reader hung up: what a capped or late reader does
            finally:
                hostile.stopped.set()
                self.close_connection = True

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode() if length else ""
            body = json.loads(raw) if raw else None
            with hostile.lock:
                hostile.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers.items())})
            hostile.received.set()
            mode = hostile.by_guest.get((body or {}).get("guest_name", ""), hostile.mode)
            if mode == "hang":
                hostile.release.wait(30)
                mode = "ok"
            if mode == "ok":
                self._ok(body)
            elif mode in ("huge", "huge-declared"):
                self._stream(chunked=mode == "huge")
            elif mode == "trickle":
                self._stream(chunked=False, pace=0.05)
            elif mode == "close":
                self.close_connection = True
            elif mode == "gzip":
                data = gzip.compress(b'{"rooms": []}')
                self.send_response(200)
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        do_GET = do_POST = _handle

    return Handler
