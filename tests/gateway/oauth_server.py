"""A real OAuth 2.0 authorization server on loopback: Authlib's RFC 6749 ``AuthorizationServer`` with its
``ClientCredentialsGrant``, ``AuthorizationCodeGrant`` (with RFC 7636 ``CodeChallenge``, PKCE required),
``RefreshTokenGrant`` (rotating: each refresh issues a new refresh token and revokes the old one), the
RFC 7009 ``RevocationEndpoint`` and RFC 6750 ``BearerTokenGenerator``, served over ``http.server``.

Only the glue is here (the request adapter and the models Authlib asks for); authenticating the client,
checking the grant, the PKCE verifier, the redirect URI and scopes, issuing, rotating and revoking
tokens are Authlib's. ``GET /authorize`` is the consent page: the person is named by the
``X-Person`` header (their sign-in), and ``X-Consent: deny`` refuses. ``GET /api/me`` is a protected
resource that answers 200 for a live access token and 401 otherwise. It records every token request
it receives and every token it issued.
"""

from __future__ import annotations

import json
import os
import secrets
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, OAuth2Request
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, ClientCredentialsGrant, RefreshTokenGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge

AUTH_METHODS = ("client_secret_basic", "client_secret_post")


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str
    scopes: tuple[str, ...] = ()
    redirect_uris: tuple[str, ...] = ()
    """Given: an authorization-code client (with refresh tokens); empty: a client-credentials client."""

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uris[0] if self.redirect_uris else ""

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or "").split() if s in self.scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return endpoint in ("token", "revocation") and method in AUTH_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return bool(self.redirect_uris) and response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        if self.redirect_uris:
            return grant_type in ("authorization_code", "refresh_token")
        return grant_type == "client_credentials"


class Grant(ClientCredentialsGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)


@dataclass
class Code:
    """An authorization code Authlib issued, with the PKCE challenge of its request."""

    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self) -> None:
        return None

    def get_auth_time(self) -> None:
        return None

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None


@dataclass
class Token:
    """An issued token pair as Authlib's grants and revocation endpoint see it."""

    client_id: str
    user: str
    scope: str
    access_token: str
    refresh_token: str | None
    expires_in: int
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return bool(client.client_id == self.client_id)

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return False

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> str:
        return self.user

    def get_client(self) -> Client:
        raise NotImplementedError


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        server: TokenServer = self.server
        with server.issued.lock:
            server.codes[code] = Code(code, request.client.client_id, request.payload.redirect_uri, request.payload.scope,
                                      request.user, request.payload.data.get("code_challenge"),
                                      request.payload.data.get("code_challenge_method"))  # fmt: skip

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        found = self.server.codes.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    def delete_authorization_code(self, authorization_code: Code) -> None:
        self.server.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: Code) -> str:
        return authorization_code.user


class RotatingRefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        found = self.server.by_refresh.get(refresh_token)
        return found if found is not None and not found.revoked else None

    def authenticate_user(self, refresh_token: Token) -> str:
        return refresh_token.user

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.revoked = True


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        server: TokenServer = self.server
        return server.by_refresh.get(token_string) or server.by_access.get(token_string)

    def revoke_token(self, token: Token, request: OAuth2Request) -> None:
        token.revoked = True
        self.server.revocations.append(token)


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
        self.expires_in = expires_in
        self.codes: dict[str, Code] = {}
        self.by_access: dict[str, Token] = {}
        self.by_refresh: dict[str, Token] = {}
        self.revocations: list[Token] = []
        self.register_grant(Grant)
        self.register_grant(CodeGrant, [CodeChallenge(required=True)])
        self.register_grant(RotatingRefreshGrant)
        self.register_endpoint(Revocation)
        self.register_token_generator(
            "default", BearerTokenGenerator(lambda **_: secrets.token_urlsafe(32), lambda **_: secrets.token_urlsafe(32),
                                            expires_generator=expires_in)
        )

    def query_client(self, client_id: str) -> Client | None:
        return self.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        with self.issued.lock:
            self.issued.tokens.append({**token, "client_id": request.client.client_id})
            user = request.user if isinstance(request.user, str) else ""
            kept = Token(request.client.client_id, user, token.get("scope", ""), token["access_token"],
                         token.get("refresh_token"), int(token.get("expires_in", self.expires_in)))  # fmt: skip
            self.by_access[kept.access_token] = kept
            if kept.refresh_token:
                self.by_refresh[kept.refresh_token] = kept

    def live(self, access_token: str) -> Token | None:
        """The token an ``Authorization: Bearer`` value names, if issued and not revoked (nor its pair rotated away)."""
        found = self.by_access.get(access_token)
        return found if found is not None and not found.revoked else None

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        if isinstance(request, OAuth2Request):
            return request
        method, uri, headers, form = request
        return FormRequest(method, uri, headers, form)

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> tuple[int, Any, list[tuple[str, str]]]:
        return status, body, headers

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


class AuthorizationServerOnLoopback:
    """``with AuthorizationServerOnLoopback([Client(...)], expires_in=3600) as auth:`` POST ``auth.token_url``."""

    def __init__(self, clients: list[Client], expires_in: int = 3600, tls: ssl.SSLContext | None = None) -> None:
        self.issued = Issued()
        self.oauth = TokenServer(clients, expires_in, self.issued)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        if tls is not None:  # an https authorization server, as an https API's binding requires
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.token_lock = threading.Lock()
        """One token or revocation request at a time, as a real server's store would serialize them."""
        self.resource_requests: list[str] = []

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                headers = {k: v for k, v in self.headers.items()}
                if parts.path == "/api/me":
                    bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    with server.issued.lock:
                        token = server.oauth.live(bearer)
                        server.resource_requests.append(bearer)
                    if token is None:
                        self._send(401, {"error": "invalid_token"}, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
                    else:
                        self._send(200, {"user": token.user, "scope": token.scope, "echo": bearer[:4] + "..."}, [])
                    return
                if parts.path != "/authorize":
                    self._send(404, {"error": "not_found"}, [])
                    return
                person = self.headers.get("X-Person")
                if not person:
                    self._send(401, {"error": "sign in first"}, [])
                    return
                query = dict(parse_qsl(parts.query))
                request = FormRequest("GET", f"http://127.0.0.1:{server.port}{self.path}", headers, query)
                grant_user = None if self.headers.get("X-Consent") == "deny" else person
                grant = server.oauth.get_consent_grant(request, end_user=person)  # checks client, redirect, PKCE challenge
                status, body, extra = server.oauth.create_authorization_response(request, grant_user=grant_user, grant=grant)
                self._send(status, body, extra)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = dict(parse_qsl(self.rfile.read(length).decode())) if length else {}
                headers = {k: v for k, v in self.headers.items()}
                with server.issued.lock:
                    server.issued.requests.append({"path": self.path, "form": form, "headers": headers})
                uri = f"http://127.0.0.1:{server.port}{self.path}"
                if self.path == "/token":
                    with server.token_lock:
                        status, body, extra = server.oauth.create_token_response(("POST", uri, headers, form))
                elif self.path == "/revoke":
                    with server.token_lock:
                        status, body, extra = server.oauth.create_endpoint_response("revocation", ("POST", uri, headers, form))
                else:
                    status, body, extra = 404, {"error": "not_found"}, []
                self._send(status, body, extra)

            def _send(self, status: int, body: Any, extra: list[tuple[str, str]]) -> None:
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

    def grants(self, grant_type: str) -> list[dict[str, Any]]:
        """The token requests of one grant type (``refresh_token``, ``authorization_code``...)."""
        with self.issued.lock:
            return [r for r in self.issued.requests if r["form"].get("grant_type") == grant_type]

    def revoke_access(self, access_token: str) -> None:
        """Revoke an access token early, as a provider may (its refresh token stays good)."""
        with self.issued.lock:
            self.oauth.by_access[access_token] = Token(**{**self.oauth.by_access[access_token].__dict__, "revoked": True})

    def __enter__(self) -> AuthorizationServerOnLoopback:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def authorization_server(clients: list[Client], expires_in: int = 3600,
                         tls: ssl.SSLContext | None = None) -> Iterator[AuthorizationServerOnLoopback]:
    # Authlib refuses plain-http OAuth outside loopback names unless told; this server is on 127.0.0.1
    earlier = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
    try:
        with AuthorizationServerOnLoopback(clients, expires_in, tls) as server:
            yield server
    finally:
        if earlier is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = earlier
