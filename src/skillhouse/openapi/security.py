"""What a spec says about credentials, turned into gateway binding templates and each operation's scopes.

The wizard never writes a credential into a skill. It reads the spec's ``securitySchemes`` (OpenAPI 3)
or ``securityDefinitions`` (Swagger 2) and reports, for each scheme, the binding that would serve it,
filled in as far as the spec allows (``PUT /v1/credentials`` or ``skillhouse credentials set``): the
binding kind, the origin, for OAuth 2.0 the authorization and token URLs and the scopes, for an API
key its header. What the spec cannot know is left as a ``<fill in>`` placeholder: the client id and
secret, and the callback URL of this deployment. An ``openIdConnect`` scheme gives its discovery URL,
whose document names the authorization and token endpoints. Schemes the gateway cannot serve (an API
key in the query or a cookie, OAuth's implicit and password flows, mutual TLS) are reported as such.

Each operation's requirement (its own ``security``, else the document's) is reported as the schemes it
accepts, any one of which suffices, each with the scopes it needs.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.json_types import JsonObject


FILL_IN = "<fill in>"
CALLBACK = "https://<this deployment>/v1/connections/callback"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _url(value: Any, base_url: str) -> str | None:
    """A flow's URL, made absolute against the API's base URL (OpenAPI 3 allows relative ones)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return urljoin(base_url if base_url.endswith("/") else base_url + "/", value.strip())


def _origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else FILL_IN


def _scopes(flow: dict[str, Any]) -> list[str]:
    return [str(name) for name in _mapping(flow.get("scopes"))]


def _code_template(origin: str, flow: dict[str, Any], base_url: str, authorize: str, token: str) -> JsonObject:
    return {"scheme": "oauth2-authorization-code", "origin": origin,
            "authorization_url": _url(flow.get(authorize), base_url) or FILL_IN,
            "token_url": _url(flow.get(token), base_url) or FILL_IN, "scopes": _scopes(flow),
            "refresh_url": _url(flow.get("refreshUrl"), base_url), "client_id": FILL_IN,
            "value": "<client secret>", "redirect_uri": CALLBACK}  # fmt: skip


def _client_template(origin: str, flow: dict[str, Any], base_url: str) -> JsonObject:
    return {"scheme": "oauth2-client-credentials", "origin": origin, "token_url": _url(flow.get("tokenUrl"), base_url) or FILL_IN,
            "scopes": _scopes(flow), "client_id": FILL_IN, "value": "<client secret>"}  # fmt: skip


def scheme_templates(name: str, scheme: dict[str, Any], base_url: str) -> list[JsonObject]:
    """The binding templates that serve one security scheme (one per OAuth flow; none it cannot serve)."""
    origin = _origin(base_url)
    kind = str(scheme.get("type", "")).lower()
    out: list[JsonObject] = []

    def unsupported(why: str) -> list[JsonObject]:
        return [{"security_scheme": name, "type": kind, "supported": False, "why": why}]

    if kind == "http":
        http = str(scheme.get("scheme", "")).lower()
        if http == "bearer":
            out.append({"scheme": "bearer", "origin": origin, "value": "<token>"})
        elif http == "basic":
            out.append({"scheme": "basic", "origin": origin, "value": "<user:password>"})
        else:
            return unsupported(f"HTTP authentication scheme {http or 'unnamed'} is not one the gateway injects")
    elif kind == "basic":  # Swagger 2
        out.append({"scheme": "basic", "origin": origin, "value": "<user:password>"})
    elif kind == "apikey":
        where, header = str(scheme.get("in", "")), scheme.get("name")
        if where != "header" or not isinstance(header, str):
            return unsupported(f"an API key in the {where or 'unnamed place'} is not injected; only headers are")
        out.append({"scheme": "bearer" if header.lower() == "authorization" else "header", "origin": origin,
                    **({} if header.lower() == "authorization" else {"header": header}), "value": "<key>"})  # fmt: skip
    elif kind == "oauth2":
        flows = _mapping(scheme.get("flows"))
        if flows:  # OpenAPI 3
            code = _mapping(flows.get("authorizationCode"))
            if code:
                out.append(_code_template(origin, code, base_url, "authorizationUrl", "tokenUrl"))
            client = _mapping(flows.get("clientCredentials"))
            if client:
                out.append(_client_template(origin, client, base_url))
        else:  # Swagger 2: one flow per scheme
            flow = str(scheme.get("flow", ""))
            if flow == "accessCode":
                out.append(_code_template(origin, scheme, base_url, "authorizationUrl", "tokenUrl"))
            elif flow == "application":
                out.append(_client_template(origin, scheme, base_url))
        if not out:
            return unsupported("only the authorizationCode and clientCredentials flows are served (not implicit or password)")
    elif kind == "openidconnect":
        url = scheme.get("openIdConnectUrl")
        out.append({"scheme": "oauth2-authorization-code", "origin": origin,
                    "openid_connect_url": url if isinstance(url, str) else FILL_IN,
                    "authorization_url": "<authorization_endpoint of the discovery document>",
                    "token_url": "<token_endpoint of the discovery document>",
                    "revocation_url": "<revocation_endpoint of the discovery document, if any>",
                    "scopes": ["openid"], "client_id": FILL_IN, "value": "<client secret>", "redirect_uri": CALLBACK})  # fmt: skip
    else:
        return unsupported(f"security scheme type {kind or 'unnamed'} (mutual TLS and others) is not served by the gateway")
    return [{"security_scheme": name, "supported": True, **template} for template in out]


def requirements(security: Any) -> list[JsonObject]:
    """An operation's (or document's) ``security``: each alternative as ``{scheme: [scopes]}``; ``[]`` when none."""
    if not isinstance(security, list):
        return []
    out: list[JsonObject] = []
    for alternative in security:
        if isinstance(alternative, dict):
            out.append({str(name): [str(s) for s in scopes] if isinstance(scopes, list) else []
                        for name, scopes in alternative.items()})  # fmt: skip
    return out
