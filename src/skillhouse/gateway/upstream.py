"""The upstream HTTP client: the gateway's only way out.

Every request goes through one seam, a transport chosen per checked address
(:attr:`UpstreamClient.transport_for`), which tests replace. The default transport connects to the
address the egress rule checked, never looking the name up again, while the URL keeps its name: the
``Host`` header, TLS SNI and certificate verification are all for the name. Redirects come back as
responses and are never followed here (the guest may follow one, and the rule judges it afresh).

Failures are split by whether anything can have reached the upstream: a refused or timed-out
connection sent nothing (:class:`NotSent`); a failure after the request started may have been acted on
(:class:`MaybeSent`), which is what leaves an idempotency key unresolved.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import httpcore
import httpx

from skillhouse.gateway.addresses import IPAddress
from skillhouse.gateway.egress import EgressDecision

MAX_RESPONSE_BYTES = 8 * 1024 * 1024

# httpcore's debug trace writes raw request and response headers, which carry injected credentials
# and whatever an upstream echoes back: those records never reach a handler
_WIRE_TRACE = ("httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy", "httpcore.socks")


def _drop_wire_trace(record: logging.LogRecord) -> bool:
    return False


for _name in _WIRE_TRACE:
    logging.getLogger(_name).addFilter(_drop_wire_trace)
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)


class NotSent(Exception):
    """Nothing reached the upstream (connection refused, connect timeout, no pool slot)."""


class MaybeSent(Exception):
    """The request may have reached the upstream; its outcome is unknown."""


@dataclass(frozen=True)
class UpstreamResponse:
    status: int
    headers: dict[str, str]
    body: str


class PinnedBackend(httpcore.NetworkBackend):
    """Opens every TCP connection to one fixed address, whatever host the URL names."""

    def __init__(self, address: IPAddress, port: int, inner: httpcore.NetworkBackend | None = None) -> None:
        self.address, self.port = address, port
        self._inner = inner or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        return self._inner.connect_tcp(str(self.address), self.port, timeout, local_address, socket_options)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not an egress route")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class PinnedTransport(httpx.BaseTransport):
    """An httpx transport over an httpcore pool whose connections all go to the checked address."""

    def __init__(
        self, address: IPAddress, port: int, backend: httpcore.NetworkBackend | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        # ssl_context: certificates to verify against instead of the default bundle (a private CA)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context, network_backend=PinnedBackend(address, port, backend), max_connections=64, retries=0
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        target = request.extensions.get("target", request.url.raw_path)
        url = httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port, target=target)
        content = request.read()
        core = httpcore.Request(request.method, url, headers=request.headers.raw, content=content, extensions=request.extensions)
        try:
            response = self._pool.handle_request(core)
            try:
                body = response.read()
            finally:
                response.close()  # hands the connection back to the pool
        except (httpcore.ConnectError, httpcore.ConnectTimeout, httpcore.PoolTimeout) as exc:
            raise NotSent(type(exc).__name__) from None
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise MaybeSent(type(exc).__name__) from None
        return httpx.Response(response.status, headers=response.headers, content=body, request=request)

    def close(self) -> None:
        self._pool.close()


TransportFactory = Callable[[EgressDecision], httpx.BaseTransport]


class UpstreamClient:
    """Sends checked requests; one pooled transport per (scheme, name, checked address, port)."""

    def __init__(self, transport_for: TransportFactory | None = None, timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> None:
        self._factory = transport_for or (lambda decision: PinnedTransport(decision.address, decision.port))
        self.timeout = timeout
        self._clients: dict[tuple[str, str, str, int], httpx.Client] = {}
        self._lock = threading.Lock()

    def _client(self, decision: EgressDecision) -> httpx.Client:
        key = (decision.target.scheme, decision.target.authority, str(decision.address), decision.port)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = httpx.Client(transport=self._factory(decision), timeout=self.timeout, follow_redirects=False)
                self._clients[key] = client
            return client

    def send(
        self, decision: EgressDecision, method: str, url: str, headers: dict[str, str], body: str | None,
        target: str | None = None,
    ) -> UpstreamResponse:
        """Send to the checked address; raises :class:`NotSent` or :class:`MaybeSent` on failure.

        ``target``: the request line's target, sent verbatim (httpcore's ``target`` extension), so
        nothing between the gateway's decision and the wire re-spells the canonical URL.
        """
        client = self._client(decision)
        extensions = {} if target is None else {"target": target.encode("ascii")}
        try:
            content = None if body is None else body.encode()
            response = client.request(method, url, headers=headers, content=content, extensions=extensions)
        except (NotSent, MaybeSent):
            raise
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise NotSent(type(exc).__name__) from None
        except httpx.HTTPError as exc:
            raise MaybeSent(type(exc).__name__) from None
        if len(response.content) > MAX_RESPONSE_BYTES:
            raise MaybeSent("response larger than the gateway accepts")
        headers_out: dict[str, str] = {}
        for name, value in response.headers.multi_items():
            headers_out[name] = f"{headers_out[name]}, {value}" if name in headers_out else value
        return UpstreamResponse(response.status_code, headers_out, response.content.decode("utf-8", "replace"))

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
