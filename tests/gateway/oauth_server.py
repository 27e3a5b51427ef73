"""A real OAuth 2.0 authorization server on loopback: Authlib's RFC 6749 ``AuthorizationServer`` with its
``ClientCredentialsGrant`` and RFC 6750 ``BearerTokenGenerator``, served over ``http.server``.

Only the glue is here (the request adapter and the client model Authlib asks for); authenticating the
client, checking the grant and scopes and issuing tokens are Authlib's. It records every token request
it receives and every token it issued.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, OAuth2Request
from authlib.oauth2.rfc6749.grants import ClientCredentialsGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator

AUTH_METHODS = ("client_secret_basic", "client_secret_post")


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str
    scopes: tuple[str, ...] = ()

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return ""

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or "").split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return False

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return endpoint == "token" and method in AUTH_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return False

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "client_credentials"


class Grant(ClientCredentialsGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)


@dataclass
class Issued:
    """What the server saw and did: the token requests (form fields, client auth header), the tokens."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FormRequest(OAuth2Request):  # type: ignore[misc]
    """A token request whose form fields Authlib reads (``client_secret_post`` reads ``form``)."""

    def __init__(self, method: str, uri: str, headers: dict[str, str], form: dict[str, str]) -> None:
        super().__init__(method, uri, headers=headers)
        self.payload = BasicOAuth2Payload(form)
        self._form = form

    @property
    def form(self) -> dict[str, str]:
        return self._form

    @property
    def args(self) -> dict[str, str]:
        return {}


class TokenServer(AuthorizationServer):  # type: ignore[misc]
    def __init__(self, clients: list[Client], expires_in: int, issued: Issued) -> None:
        super().__init__()
        self.clients = {c.client_id: c for c in clients}
        self.issued = issued
        self.register_grant(Grant)
        self.register_token_generator(
            "default", BearerTokenGenerator(lambda **_: secrets.token_urlsafe(32), expires_generator=expires_in)
        )

    def query_client(self, client_id: str) -> Client | None:
        return self.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        with self.issued.lock:
            self.issued.tokens.append({**token, "client_id": request.client.client_id})

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        method, uri, headers, form = request
        return FormRequest(method, uri, headers, form)

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> tuple[int, Any, list[tuple[str, str]]]:
        return status, body, headers

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


class AuthorizationServerOnLoopback:
    """``with AuthorizationServerOnLoopback([Client(...)], expires_in=3600) as auth:`` POST ``auth.token_url``."""

    def __init__(self, clients: list[Client], expires_in: int = 3600) -> None:
        self.issued = Issued()
        self.oauth = TokenServer(clients, expires_in, self.issued)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(parse_qsl(self.rfile.read(length).decode())) if length else {}
                headers = {k: v for k, v in self.headers.items()}
                with server.issued.lock:
                    server.issued.requests.append({"path": self.path, "form": form, "headers": headers})
                uri = f"http://127.0.0.1:{server.port}{self.path}"
                if self.path != "/token":
                    status, body, extra = 404, {"error": "not_found"}, []
                else:
                    status, body, extra = server.oauth.create_token_response(("POST", uri, headers, form))
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in extra:
                    if name.lower() not in ("content-type", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    @property
    def token_requests(self) -> int:
        with self.issued.lock:
            return len(self.issued.requests)

    def __enter__(self) -> AuthorizationServerOnLoopback:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def authorization_server(clients: list[Client], expires_in: int = 3600) -> Iterator[AuthorizationServerOnLoopback]:
    # Authlib refuses plain-http OAuth outside loopback names unless told; this server is on 127.0.0.1
    earlier = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
    try:
        with AuthorizationServerOnLoopback(clients, expires_in) as server:
            yield server
    finally:
        if earlier is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = earlier
