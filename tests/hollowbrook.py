"""The Hollowbrook house on loopback in a thread, for tests and benchmarks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from skillhouse.examples import HollowbrookHTTPServer


@contextmanager
def running_hollowbrook(host: str = "127.0.0.1", port: int = 0) -> Iterator[HollowbrookHTTPServer]:
    """Hollowbrook serving in a thread (on an ephemeral port by default) until the block ends."""
    server = HollowbrookHTTPServer((host, port))
    # a short poll keeps shutdown quick, which tests that start a house each feel
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="hollowbrook", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
