"""A credential belongs to an origin: only a request with its exact scheme, host and port gets it, plain
http only by the binding's opt-in; every secret bound on the host is still redacted from an answer."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from sqlalchemy.exc import IntegrityError
from tests.gateway.conftest import SECRET_KEY
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.gateway import Gateway, TurnContext
from skillhouse.gateway.errors import CredentialError
from skillhouse.store.gateway_tables import CredentialRow

ECHO = {"method": "GET", "url": "http://hollowbrook.local:8084/echo", "headers": {}, "body": None}


def _sent(upstream: Upstream) -> dict[str, str]:
    return {k.lower(): v for k, v in upstream.recorder.requests[-1]["headers"].items()}


def test_only_the_exact_http_origin_opted_in_gets_its_secret(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    put = gateway.credentials.put
    put(turn.tenant, "hollowbrook.local", "header", "https-default-port-secret", header="X-A")  # https:443
    put(turn.tenant, "https://hollowbrook.local:8084", "header", "https-same-port-secret", header="X-B")
    put(turn.tenant, "http://hollowbrook.local:9999", "header", "http-other-port-secret", header="X-C", allow_http=True)
    put(turn.tenant, "http://hollowbrook.local:8084", "header", "http-this-origin-secret", header="X-D", allow_http=True)
    fetch_json(gateway, turn, ECHO)
    sent = _sent(upstream)
    assert sent.get("x-d") == "http-this-origin-secret"
    assert not {"x-a", "x-b", "x-c"} & set(sent)


def test_without_an_http_binding_nothing_is_injected_over_http(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    gateway.credentials.put(turn.tenant, "https://hollowbrook.local:8084", "bearer", "only-for-tls-0123456789")
    answer = fetch_json(gateway, turn, ECHO)
    assert answer["status"] == 200 and "authorization" not in _sent(upstream)


def test_secrets_of_the_hosts_other_origins_are_redacted_too(gateway: Gateway, turn: TurnContext, upstream: Upstream) -> None:
    # the https binding is never sent over http, but if its secret came back from this host anyway it is scrubbed
    gateway.credentials.put(turn.tenant, "hollowbrook.local", "bearer", "tls-secret-4f9a2c77b1")
    answer = fetch_json(gateway, turn, {**ECHO, "url": "http://hollowbrook.local:8084/echo?said=tls-secret-4f9a2c77b1"})
    assert "tls-secret-4f9a2c77b1" not in str(answer) and "[REDACTED]" in answer["body"]


def test_an_http_origin_needs_its_opt_in_and_the_database_enforces_it(gateway: Gateway, turn: TurnContext) -> None:
    with pytest.raises(CredentialError) as refused:
        gateway.credentials.put(turn.tenant, "http://hollowbrook.local:8084", "bearer", "s3cret-value")
    assert (refused.value.code, refused.value.details["field"]) == ("http-needs-opt-in", "allow_http")
    assert gateway.credentials.list(turn.tenant) == []
    with pytest.raises(IntegrityError), gateway.database.transaction() as session:
        session.add(CredentialRow(tenant_id=turn.tenant, host="hollowbrook.local", origin_scheme="http", port=8084,
                                  allow_http=False, header="authorization", scheme="bearer", value="x"))


@pytest.mark.parametrize(
    ("origin", "expected"),
    [("API.Example.com", ("https", "api.example.com", 443, "https://api.example.com")),
     ("api.example.com:8443", ("https", "api.example.com", 8443, "https://api.example.com:8443")),
     ("https://api.example.com:443/", ("https", "api.example.com", 443, "https://api.example.com")),
     ("http://10.0.0.5:8080", ("http", "10.0.0.5", 8080, "http://10.0.0.5:8080")),
     ("http://[::1]", ("http", "::1", 80, "http://[::1]")),
     ("[2001:db8::1]:8443", ("https", "2001:db8::1", 8443, "https://[2001:db8::1]:8443")),
     # written as requests are canonicalized, or the binding would never match them
     ("https://[2001:DB8:0:0::1]", ("https", "2001:db8::1", 443, "https://[2001:db8::1]")),
     ("http://0x7f.1:8080", ("http", "127.0.0.1", 8080, "http://127.0.0.1:8080")),
     ("api.example.com.", ("https", "api.example.com", 443, "https://api.example.com"))],
)  # fmt: skip
def test_an_origin_is_read_as_scheme_host_and_port(gateway: Gateway, origin: str, expected: tuple[Any, ...]) -> None:
    binding = gateway.credentials.put("t", origin, "bearer", "s3cret-value", allow_http=expected[0] == "http")
    assert (binding.origin.scheme, binding.host, binding.origin.port, binding.origin.text) == expected


@pytest.mark.parametrize(
    ("origin", "code"),
    [("ftp://files.example.com", "origin-scheme-refused"), ("ws://api.example.com", "origin-scheme-refused"),
     ("https://api.example.com/v1", "invalid-origin"), ("https://user@api.example.com", "invalid-origin"),
     ("https://api.example.com:0", "invalid-origin"), ("api.example.com:99999", "invalid-origin"),
     ("https://bücher.example", "invalid-origin"), ("::1", "invalid-origin"), ("", "invalid-origin"),
     ("https://api.example.com?x=1", "invalid-origin"), ("exa mple.com", "invalid-origin")],
)  # fmt: skip
def test_an_origin_that_is_not_http_or_https_to_a_host_is_refused(gateway: Gateway, origin: str, code: str) -> None:
    with pytest.raises(CredentialError) as refused:
        gateway.credentials.put("t", origin, "bearer", "s3cret-value")
    assert (refused.value.code, refused.value.details["field"]) == (code, "origin")


@pytest.mark.parametrize("header", ["X-Api-Key\n", "X-Api-Key\r\n", "X Api", "X-Api-Key:"])
def test_a_header_name_that_is_not_one_token_is_refused(gateway: Gateway, header: str) -> None:
    with pytest.raises(CredentialError) as refused:
        gateway.credentials.put("t", "https://api.example.com", "header", "s3cret-value", header)
    assert refused.value.details["field"] == "header"


def test_a_stored_value_that_cannot_be_sent_is_refused_before_sending_not_a_crash(
    gateway: Gateway, turn: TurnContext, upstream: Upstream
) -> None:
    # written around the checks (an older version, a hand-edited row): refused with a code, nothing sent
    encrypted = Fernet(SECRET_KEY.encode()).encrypt("t\u00f6ken-value".encode()).decode()
    with gateway.database.transaction() as session:
        session.add(CredentialRow(tenant_id=turn.tenant, host="hollowbrook.local", origin_scheme="http", port=8084,
                                  allow_http=True, header="authorization", scheme="bearer", value=encrypted))
    assert fetch_json(gateway, turn, ECHO)["error"]["code"] == "credential-not-sendable"
    assert upstream.recorder.requests == []
