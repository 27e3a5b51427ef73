"""OAuth 2.0 client bindings: client credentials (RFC 6749 §4.4) and authorization code with PKCE (§4.1,
RFC 7636), what each holds, checked when it is set.

The binding's configuration (token URL, client id and secret, scopes, ``audience``/``resource``, how the
client authenticates) is stored as one encrypted JSON value, so the client secret and the token URL it
may be sent to are sealed together: pointing the secret at another token URL means binding it again,
secret and all, which only a tenant admin can do. A token URL is an absolute ``https`` URL (plain
``http`` only with the binding's ``allow_http`` opt-in) without user information or a fragment.
Every refusal names its field and never quotes the secret.

An authorization-code client (:class:`AuthorizationCodeClient`) also holds the authorization URL a
person is sent to, the redirect URI registered with the provider (this deployment's
``/v1/connections/callback``) and, where the provider has one, its RFC 7009 revocation URL; the tokens
it obtains belong to one person each (a *connection*, ``gateway/connections.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Final
from urllib.parse import urlsplit

from skillhouse.gateway.credential_input import unsendable
from skillhouse.gateway.errors import CredentialError

GRANT: Final = "oauth2-client-credentials"
CODE_GRANT: Final = "oauth2-authorization-code"
GRANTS: Final = (GRANT, CODE_GRANT)
AUTH_METHODS = ("client_secret_basic", "client_secret_post")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 §3.3 scope-token
_PRINTABLE = re.compile(r"[\x20-\x7e]+")


@dataclass(frozen=True)
class ClientShown:
    """What may be shown of a binding's client: everything but the secret."""

    token_url: str
    client_id: str
    scopes: tuple[str, ...]
    audience: str | None
    resource: str | None
    auth_method: str
    authorization_url: str | None = None
    redirect_uri: str | None = None
    revocation_url: str | None = None


@dataclass(frozen=True)
class ClientCredentials:
    """How to obtain an access token for a binding; ``client_secret`` never leaves the gateway but to ``token_url``."""

    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ()
    audience: str | None = None
    """Sent as ``audience`` (Auth0, Okta and others name the API a token is for this way)."""
    resource: str | None = None
    """Sent as ``resource`` (RFC 8707 resource indicator)."""
    auth_method: str = "client_secret_basic"
    """``client_secret_basic`` (HTTP Basic, RFC 6749 §2.3.1) or ``client_secret_post`` (form fields)."""

    def shown(self) -> ClientShown:
        return ClientShown(self.token_url, self.client_id, self.scopes, self.audience, self.resource, self.auth_method)

    def sealed(self) -> str:
        """The JSON that is encrypted as the binding's value."""
        return json.dumps({"kind": GRANT, **asdict(self)}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def unsealed(cls, text: str) -> ClientCredentials:
        document = json.loads(text)
        return cls(
            token_url=document["token_url"], client_id=document["client_id"], client_secret=document["client_secret"],
            scopes=tuple(document.get("scopes") or ()), audience=document.get("audience"),
            resource=document.get("resource"), auth_method=document.get("auth_method") or AUTH_METHODS[0],
        )  # fmt: skip


@dataclass(frozen=True)
class AuthorizationCodeClient:
    """A client people connect their accounts to (authorization code with PKCE ``S256``); ``client_secret``
    goes only to ``token_url`` and ``revocation_url``, sealed with them."""

    authorization_url: str
    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    redirect_uri: str = ""
    scopes: tuple[str, ...] = ()
    revocation_url: str | None = None
    auth_method: str = "client_secret_basic"

    def shown(self) -> ClientShown:
        return ClientShown(self.token_url, self.client_id, self.scopes, None, None, self.auth_method,
                           self.authorization_url, self.redirect_uri, self.revocation_url)  # fmt: skip

    def sealed(self) -> str:
        return json.dumps({"kind": CODE_GRANT, **asdict(self)}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def unsealed(cls, text: str) -> AuthorizationCodeClient:
        document = json.loads(text)
        return cls(
            authorization_url=document["authorization_url"], token_url=document["token_url"],
            client_id=document["client_id"], client_secret=document["client_secret"],
            redirect_uri=document["redirect_uri"], scopes=tuple(document.get("scopes") or ()),
            revocation_url=document.get("revocation_url"), auth_method=document.get("auth_method") or AUTH_METHODS[0],
        )  # fmt: skip


def unsealed_client(text: str) -> ClientCredentials | AuthorizationCodeClient:
    """The client of a stored OAuth binding value, whichever grant it is for."""
    kind = json.loads(text).get("kind")
    return AuthorizationCodeClient.unsealed(text) if kind == CODE_GRANT else ClientCredentials.unsealed(text)


def _refuse(field: str, why: str, code: str = "invalid-credential") -> CredentialError:
    return CredentialError(f"{field}: {why}", code=code, field=field)


def _absolute(uri: str) -> bool:
    try:
        return bool(urlsplit(uri).scheme)
    except ValueError:  # an unclosed IPv6 bracket, say
        return False


def check_token_url(token_url: str, allow_http: bool, name: str = "token_url") -> str:
    """The token URL as given, once it is an absolute http(s) URL the client secret may go to (``name``:
    the field refused, for the other URLs of a binding, which are checked alike)."""
    text = token_url.strip()
    if not text.isascii() or not text.isprintable() or len(text) > 2000:
        raise _refuse(name, "write the URL in printable ASCII, at most 2000 characters")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise _refuse(name, "not a valid URL (check its port)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _refuse(name, "an absolute https:// URL of the authorization server's endpoint")
    if parts.username is not None or parts.password is not None or parts.fragment:
        raise _refuse(name, "the URL carries no user information or fragment (the client secret is its own field)")
    if parts.scheme == "http" and not allow_http:
        raise _refuse(name, "plain http would send the client secret or the tokens readable; set allow_http to use it anyway",
                      code="http-needs-opt-in")  # fmt: skip
    return text


def _checked_client(client_id: str, client_secret: str, scopes: tuple[str, ...] | list[str], auth_method: str) -> None:
    if not client_id or not _PRINTABLE.fullmatch(client_id) or len(client_id) > 255:
        raise _refuse("client_id", "1 to 255 printable ASCII characters")
    found = unsendable(client_secret)
    if found is not None:
        raise CredentialError(f"the client secret {found[1]}", code=found[0], field="value")
    for position, scope in enumerate(scopes):
        if not _SCOPE.fullmatch(scope) or len(scope) > 200:
            raise _refuse(f"scopes[{position}]", "a scope is one token of printable ASCII without spaces, quotes or backslashes")
    if auth_method not in AUTH_METHODS:
        raise _refuse("auth_method", f"one of {', '.join(AUTH_METHODS)}")


def authorization_code_client(
    authorization_url: str, token_url: str, client_id: str, client_secret: str, redirect_uri: str,
    scopes: tuple[str, ...] | list[str] = (), revocation_url: str | None = None,
    auth_method: str = AUTH_METHODS[0], allow_http: bool = False,
) -> AuthorizationCodeClient:  # fmt: skip
    """A checked :class:`AuthorizationCodeClient`; raises :class:`CredentialError` naming the field at fault.
    The redirect URI is where the provider sends the person back (``.../v1/connections/callback``)."""
    authorize = check_token_url(authorization_url, allow_http, "authorization_url")
    token = check_token_url(token_url, allow_http, "token_url")
    redirect = check_token_url(redirect_uri, allow_http, "redirect_uri")
    if urlsplit(redirect).query:
        raise _refuse("redirect_uri", "the callback URL carries no query (the provider adds code and state)")
    revoke = None if revocation_url is None else check_token_url(revocation_url, allow_http, "revocation_url")
    _checked_client(client_id, client_secret, scopes, auth_method)
    return AuthorizationCodeClient(authorize, token, client_id, client_secret, redirect, tuple(scopes), revoke, auth_method)


def client_credentials(
    token_url: str, client_id: str, client_secret: str, scopes: tuple[str, ...] | list[str] = (),
    audience: str | None = None, resource: str | None = None, auth_method: str = AUTH_METHODS[0],
    allow_http: bool = False,
) -> ClientCredentials:  # fmt: skip
    """A checked :class:`ClientCredentials`; raises :class:`CredentialError` naming the field at fault."""
    url = check_token_url(token_url, allow_http)
    _checked_client(client_id, client_secret, scopes, "client_secret_basic")
    for name, value in (("audience", audience), ("resource", resource)):
        if value is not None and (not value or not _PRINTABLE.fullmatch(value) or len(value) > 2000):
            raise _refuse(name, "1 to 2000 printable ASCII characters")
    if resource is not None and not _absolute(resource):
        raise _refuse("resource", "a resource indicator is an absolute URI (RFC 8707)")
    if auth_method not in AUTH_METHODS:
        raise _refuse("auth_method", f"one of {', '.join(AUTH_METHODS)}")
    return ClientCredentials(url, client_id, client_secret, tuple(scopes), audience, resource, auth_method)
