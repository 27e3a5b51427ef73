"""The API's one error mapping: whatever a route raises, the status comes from its family or its code,
the body has the one shape, and the headers its kind needs are there; no route translates an error."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from skillhouse.api.errors import install_error_handlers
from skillhouse.errors import SkillhouseError
from skillhouse.gateway.errors import ApprovalError, CredentialError, GatewayUnavailable, UpstreamFailed
from skillhouse.gateway.key_review import KeyNotUnresolved
from skillhouse.host.calls import GuestUnavailable
from skillhouse.host.guest_state import GuestBuilding
from skillhouse.host.models.factory import ModelConfigError
from skillhouse.registry.errors import Invalid, NotFound, problem
from skillhouse.registry.tokens import InsufficientScope, TokenRejected


def _answer(error: SkillhouseError) -> tuple[int, dict[str, object], dict[str, str]]:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/raise")
    def raising() -> None:
        raise error

    response = TestClient(app).get("/raise")
    return response.status_code, response.json(), dict(response.headers)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFound("release-gone", "gone"), 404),
        (KeyNotUnresolved("key k is done"), 409),
        (ApprovalError("no such approval", code="approval-not-found"), 404),
        (ApprovalError("decided already", code="approval-not-pending"), 409),
        (ApprovalError("denied", code="approval-denied"), 422),
        (GatewayUnavailable("no key", code="secret-key-missing"), 503),
        (GuestUnavailable("wasm", "no component"), 503),
        (ModelConfigError("SKILLHOUSE_MODEL names no model"), 503),
        (UpstreamFailed("unreachable", code="upstream-unreachable", sent=False), 502),
        (UpstreamFailed("busy", code="tenant-busy", sent=False), 503),
    ],
)
def test_the_status_is_the_codes_or_else_the_familys(error: SkillhouseError, status: int) -> None:
    answered, body, _ = _answer(error)
    assert answered == status
    assert body == {"error": {"code": error.code, "message": error.message, "problems": []}}


def test_a_gateway_refusal_with_a_field_is_a_problem_at_that_path() -> None:
    status, body, _ = _answer(CredentialError("origin 'x': not a URL", code="invalid-origin", field="origin"))
    assert status == 422
    assert body["error"] == {"code": "invalid-origin", "message": "origin 'x': not a URL",
                             "problems": [problem("origin", "invalid-origin", "origin 'x': not a URL")]}


def test_a_registry_error_keeps_every_problem() -> None:
    problems = [problem("tool_spec.version", "invalid", "not a version"), problem("tool_spec.name", "invalid", "empty")]
    status, body, _ = _answer(Invalid("invalid-tool-spec", "two problems", problems))
    assert (status, body["error"]["problems"]) == (422, problems)


def test_tokens_get_their_challenges_and_a_building_guest_its_retry_after() -> None:
    status, body, headers = _answer(TokenRejected("missing-token", "no token"))
    assert (status, body["error"]["code"], headers["www-authenticate"]) == (401, "missing-token", "Bearer")
    status, body, headers = _answer(InsufficientScope("run", "admin"))
    assert (status, body["error"]["code"]) == (403, "insufficient-scope")
    assert headers["www-authenticate"] == 'Bearer error="insufficient_scope", scope="admin"'
    status, body, headers = _answer(GuestBuilding("still building", 7))
    assert (status, body["error"]["code"], headers["retry-after"]) == (503, "guest-building", "7")
