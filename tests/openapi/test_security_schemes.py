"""The wizard reads ``securitySchemes`` (OAuth 2.0 flows, openIdConnect, HTTP and API-key schemes) into a
gateway binding template per scheme, and each operation's required scopes into the import report."""

from __future__ import annotations

from typing import Any

from tests.openapi.specs import imported, openapi


def _spec() -> dict[str, Any]:
    spec = openapi({
        "/me": {"get": {"operationId": "me", "security": [{"oauth": ["profile:read"]}]}},
        "/bookings": {"post": {"operationId": "book", "security": [{"oauth": ["bookings:write", "profile:read"]}, {"key": []}]}},
        "/health": {"get": {"operationId": "health", "security": []}},
        "/rooms": {"get": {"operationId": "rooms"}},
    })  # fmt: skip
    spec["servers"] = [{"url": "https://api.example.com/v2"}]
    spec["security"] = [{"machine": ["rooms:read"]}]
    spec["components"]["securitySchemes"] = {
        "oauth": {"type": "oauth2", "flows": {
            "authorizationCode": {"authorizationUrl": "https://auth.example.com/authorize", "tokenUrl": "oauth/token",
                                  "refreshUrl": "https://auth.example.com/refresh",
                                  "scopes": {"profile:read": "read", "bookings:write": "book"}},
            "implicit": {"authorizationUrl": "https://auth.example.com/authorize", "scopes": {}}}},
        "machine": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "https://auth.example.com/token",
                                                                      "scopes": {"rooms:read": "rooms"}}}},
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration"},
        "key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
        "query": {"type": "apiKey", "in": "query", "name": "key"},
        "basic": {"type": "http", "scheme": "basic"},
    }  # fmt: skip
    return spec


def test_each_scheme_becomes_a_binding_template_filled_in_from_the_spec() -> None:
    result, _ = imported(_spec())
    by_name = {t["security_scheme"]: t for t in result.report.credentials}
    assert by_name["oauth"] == {
        "security_scheme": "oauth", "supported": True, "scheme": "oauth2-authorization-code",
        "origin": "https://api.example.com", "authorization_url": "https://auth.example.com/authorize",
        "token_url": "https://api.example.com/v2/oauth/token", "scopes": ["profile:read", "bookings:write"],
        "refresh_url": "https://auth.example.com/refresh", "client_id": "<fill in>", "value": "<client secret>",
        "redirect_uri": "https://<this deployment>/v1/connections/callback"}  # fmt: skip
    assert by_name["machine"]["scheme"] == "oauth2-client-credentials"
    assert by_name["machine"]["token_url"] == "https://auth.example.com/token" and by_name["machine"]["scopes"] == ["rooms:read"]
    assert by_name["oidc"]["openid_connect_url"] == "https://auth.example.com/.well-known/openid-configuration"
    assert (by_name["key"]["scheme"], by_name["key"]["header"]) == ("header", "X-Api-Key")
    assert by_name["basic"]["scheme"] == "basic"
    assert by_name["query"]["supported"] is False and "query" in by_name["query"]["why"]
    lines = "\n".join(result.report.summary_lines())
    assert "oauth: scheme=oauth2-authorization-code" in lines and "not served by the gateway" in lines
    assert "bookings:write" in lines


def test_each_operations_required_scopes_are_in_the_report() -> None:
    result, _ = imported(_spec())
    operations = {o["name"]: o for o in result.report.as_dict()["operations"]}
    assert operations["me"]["security"] == [{"oauth": ["profile:read"]}]
    assert operations["book"]["security"] == [{"oauth": ["bookings:write", "profile:read"]}, {"key": []}]
    assert operations["rooms"]["security"] == [{"machine": ["rooms:read"]}]  # the document's requirement
    assert "security" not in operations["health"]  # explicitly none


def test_swagger_2_flows_are_read_too() -> None:
    spec = _spec()
    spec["components"]["securitySchemes"] = {
        "code": {"type": "oauth2", "flow": "accessCode", "authorizationUrl": "https://auth.example.com/a",
                 "tokenUrl": "https://auth.example.com/t", "scopes": {"x": "x"}},
        "app": {"type": "oauth2", "flow": "application", "tokenUrl": "https://auth.example.com/t", "scopes": {}},
        "password": {"type": "oauth2", "flow": "password", "tokenUrl": "https://auth.example.com/t", "scopes": {}},
    }  # fmt: skip
    result, _ = imported(spec)
    kinds = {t["security_scheme"]: (t.get("scheme"), t["supported"]) for t in result.report.credentials}
    assert kinds == {"code": ("oauth2-authorization-code", True), "app": ("oauth2-client-credentials", True),
                     "password": (None, False)}  # fmt: skip
