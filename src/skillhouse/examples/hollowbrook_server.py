"""Hollowbrook on the wire: the guesthouse API the Hollowbrook skill declares, on loopback.

Routes (exactly the operations in ``examples/hollowbrook/*.md``, plus two to inspect state)::

    GET    /rooms?min_guests=N                          list_rooms
    GET    /availability?room_id=&arrival=&departure=   check_availability
    POST   /bookings {room_id, guest_name, arrival, departure, note?}   create_booking
    DELETE /bookings/{booking_id}                       cancel_booking
    POST   /charges {booking_id, amount_cents, description}            charge
    GET    /bookings, GET /charges                      what the house holds now

Every answer is JSON; every refusal is ``{"error": {"code", "message", "field"?}}`` with a 4xx
status. A POST whose ``Content-Type`` is not ``application/json`` is refused with 415, as the real
house did to the small models that forgot it. Run it with ``skillhouse hollowbrook-server`` or
``python -m skillhouse.examples.hollowbrook_server`` (tests run it in a thread: ``tests/hollowbrook.py``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from skillhouse.examples.hollowbrook_house import Guesthouse, HouseError, invalid
from skillhouse.json_types import JsonObject

DEFAULT_PORT = 8084
MAX_BODY = 64 * 1024
DRAIN_LIMIT = 1024 * 1024

# (type, required) per field, as the operation files declare them
BOOKING_FIELDS = {"room_id": (int, True), "guest_name": (str, True), "arrival": (str, True),
                  "departure": (str, True), "note": (str, False)}
CHARGE_FIELDS = {"booking_id": (str, True), "amount_cents": (int, True), "description": (str, True)}
TYPE_NAMES = {int: "an integer", str: "a string"}

Query = dict[str, list[str]]
Route = Callable[[str, Query], tuple[int, Any]]


def checked_fields(body: Any, spec: dict[str, tuple[type, bool]]) -> JsonObject:
    """The body's fields if they are exactly what ``spec`` allows, else the first problem found."""
    if not isinstance(body, dict):
        raise HouseError(400, "invalid-body", "the body must be a JSON object")
    for name in body:
        if name not in spec:
            raise invalid(name, f"is not a field of this request (fields: {', '.join(spec)})")
    for name, (kind, required) in spec.items():
        if name not in body or body[name] is None:
            if required:
                raise invalid(name, "is required")
            continue
        value = body[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise invalid(name, f"must be {TYPE_NAMES[kind]}")
        if isinstance(value, str) and not value.strip():
            raise invalid(name, "must not be empty")
    return dict(body)


def query_integer(query: Query, name: str, required: bool) -> int | None:
    values = query.get(name)
    if not values:
        if required:
            raise invalid(name, "is required")
        return None
    if len(values) > 1:
        raise invalid(name, "is given more than once")
    try:
        return int(values[0])
    except ValueError:
        raise invalid(name, f"{values[0]!r} is not an integer") from None


def query_text(query: Query, name: str) -> str:
    values = query.get(name)
    if not values:
        raise invalid(name, "is required")
    return values[0]


class HollowbrookHandler(BaseHTTPRequestHandler):
    """One request: route it, answer JSON, turn every refusal into a 4xx with a code."""

    protocol_version = "HTTP/1.1"
    # Headers and body leave in one write with Nagle off; otherwise a kept-alive connection waits
    # for the client's delayed ACK (about 40 ms) between them on every response.
    disable_nagle_algorithm = True
    wbufsize = -1
    server: HollowbrookHTTPServer
    _body = b""

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def do_DELETE(self) -> None:
        self._answer(self._delete)

    def do_PUT(self) -> None:
        self._answer(self._not_allowed)

    def do_PATCH(self) -> None:
        self._answer(self._not_allowed)

    def do_OPTIONS(self) -> None:
        self._answer(self._not_allowed)

    def do_HEAD(self) -> None:
        # a HEAD answer has no body, so the JSON refusal goes out on a connection closed after it
        self.close_connection = True
        self._answer(self._not_allowed)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            sys.stderr.write(f"hollowbrook: {format % args}\n")

    def _answer(self, route: Route) -> None:
        url = urlsplit(self.path)
        self.server.record(self.command, url.path, self.headers)
        try:
            # read the body before any refusal, so a kept-alive connection starts clean next time
            self._body = self._read_body()
            status, document = route(url.path, parse_qs(url.query, keep_blank_values=True))
        except HouseError as error:
            status, document = error.status, error.document()
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status == 405:
            self.send_header("Allow", "GET, POST, DELETE")
        self.end_headers()
        self.wfile.write(body)

    def _get(self, path: str, query: Query) -> tuple[int, Any]:
        house = self.server.house
        if path == "/rooms":
            return 200, {"rooms": house.list_rooms(query_integer(query, "min_guests", required=False))}
        if path == "/availability":
            room_id = query_integer(query, "room_id", required=True)
            assert room_id is not None
            return 200, house.availability(room_id, query_text(query, "arrival"), query_text(query, "departure"))
        if path == "/bookings":
            return 200, {"bookings": house.bookings()}
        if path == "/charges":
            return 200, {"charges": house.charges()}
        return self._not_allowed(path, query)

    def _post(self, path: str, query: Query) -> tuple[int, Any]:
        if path not in ("/bookings", "/charges"):
            return self._not_allowed(path, query)
        body = self._json_body()
        if path == "/bookings":
            fields = checked_fields(body, BOOKING_FIELDS)
            return 201, self.server.house.book(fields, self.headers.get("Idempotency-Key"))
        return 201, self.server.house.charge(checked_fields(body, CHARGE_FIELDS))

    def _delete(self, path: str, query: Query) -> tuple[int, Any]:
        parts = path.split("/")
        if len(parts) == 3 and parts[1] == "bookings" and parts[2]:
            return 200, self.server.house.cancel(unquote(parts[2]))
        return self._not_allowed(path, query)

    def _not_allowed(self, path: str, query: Query) -> tuple[int, Any]:
        known = {"/rooms", "/availability", "/bookings", "/charges"}
        if path in known or path.startswith("/bookings/"):
            raise HouseError(405, "method-not-allowed", f"{self.command} is not allowed on {path}")
        raise HouseError(404, "not-found", f"{path} is not a Hollowbrook route")

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise HouseError(411, "length-required", "send the body with a Content-Length")
        length_text = self.headers.get("Content-Length", "0").strip()
        if not length_text.isdigit():
            self.close_connection = True
            raise HouseError(400, "invalid-body", "Content-Length is not a number")
        if int(length_text) > MAX_BODY:
            # read what was sent (up to a bound) so the client, still writing, hears the 413
            # instead of a reset; past the bound the connection is closed unread
            if int(length_text) <= DRAIN_LIMIT:
                self.rfile.read(int(length_text))
            else:
                self.close_connection = True
            raise HouseError(413, "body-too-large", f"the body is over {MAX_BODY} bytes")
        return self.rfile.read(int(length_text))

    def _json_body(self) -> Any:
        content_type = self.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != "application/json":
            shown = repr(content_type) if content_type else "missing"
            raise HouseError(415, "unsupported-media-type", f"Content-Type must be application/json (it was {shown})")
        try:
            return json.loads(self._body)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise HouseError(400, "invalid-json", f"the body is not JSON: {error}") from None


class HollowbrookHTTPServer(ThreadingHTTPServer):
    """The HTTP server with its house and a record of what reached it."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], house: Guesthouse | None = None, verbose: bool = False) -> None:
        super().__init__(address, HollowbrookHandler)
        self.house = house or Guesthouse()
        self.verbose = verbose
        self.received: list[dict[str, str | None]] = []
        self._received_lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        host = self.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client gone mid-request (a reset or closed connection) is the client's doing, not a fault of the
        house's: nothing is printed for it. Anything else is printed as ``socketserver`` prints it."""
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, aborted, broken pipe
            return
        super().handle_error(request, client_address)

    def record(self, method: str, path: str, headers: Any) -> None:
        entry = {"method": method, "path": path, "content_type": headers.get("Content-Type"),
                 "idempotency_key": headers.get("Idempotency-Key")}
        with self._received_lock:
            self.received.append(entry)


def serve(host: str = "127.0.0.1", port: int = DEFAULT_PORT, verbose: bool = False) -> None:
    """Serve in the foreground until SIGINT or SIGTERM; print one line once it is listening."""
    server = HollowbrookHTTPServer((host, port), verbose=verbose)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"Hollowbrook listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hollowbrook-server", description="The Hollowbrook guesthouse API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    serve(args.host, args.port, args.verbose)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
