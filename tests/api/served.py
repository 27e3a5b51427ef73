"""Real servers for API tests: the app under uvicorn in a thread, or ``skillhouse serve`` processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from fastapi import FastAPI

SKILLHOUSE = Path(sys.executable).parent / "skillhouse"


@contextmanager
def serving_in_thread(app: FastAPI) -> Iterator[str]:
    """``app`` served by uvicorn on a loopback port it listens on before this yields; its base URL.

    The socket listens before uvicorn starts, so a client that connects early waits in the backlog.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", backlog=256))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="api", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_serving(url: str, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    """Until ``url`` answers HTTP (any status), or fail when the process exits or time runs out."""
    pause = threading.Event()
    for _ in range(int(seconds / 0.05)):
        if process.poll() is not None:
            raise AssertionError(f"skillhouse serve exited with {process.returncode}")
        try:
            httpx.get(f"{url}/openapi.json", timeout=2)
            return
        except httpx.TransportError:
            pause.wait(0.05)
    raise AssertionError(f"{url} did not start serving in {seconds} s")


@contextmanager
def serve_processes(count: int, env: Mapping[str, str]) -> Iterator[list[str]]:
    """``count`` ``skillhouse serve`` processes with ``env`` added to this environment; their base URLs."""
    ports = [free_port() for _ in range(count)]
    processes = [
        subprocess.Popen([str(SKILLHOUSE), "serve", "--port", str(port)], env={**os.environ, **env},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for port in ports
    ]
    try:
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        for url, process in zip(urls, processes, strict=True):
            wait_until_serving(url, process)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
