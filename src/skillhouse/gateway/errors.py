"""The gateway's refusals and signals, each with a stable code the guest and the API hand on.

::

    GatewayError                      every refusal; ``code`` is stable, ``message`` is for people
    ├── InvalidRequest                ``invalid-request``: the request itself is malformed or has no one
    │   │                             canonical form (``field`` and ``reason`` say where and why)
    │   ├── DuplicateHeader           ``duplicate-header``: a header name given twice (in any case)
    │   └── DuplicateJsonKey          ``duplicate-json-key``: a JSON body repeats a key in one object
    ├── EgressRefused                 ``egress-refused``: host not allowed or address not public
    ├── ApprovalRequired              ``approval-required``: a signal, not a failure (``approval_id``)
    ├── ApprovalError                 ``approval-not-found``, ``approval-not-pending``, ``approval-expired``,
    │                                 ``approval-denied``
    ├── IdempotencyConflict           ``idempotency-conflict``: a duplicate still in flight
    ├── IdempotencyMismatch           ``idempotency-mismatch``: same identity, different payload
    ├── UpstreamUnresolved            ``upstream-unresolved``: sent, outcome unknown; never resent (``cause``)
    ├── UpstreamFailed                not sent (``sent: false``): ``upstream-unreachable``, ``upstream-request-refused``
    │                                 (``field``), ``upstream-deadline-exceeded``, ``tenant-busy``; sent (``sent: true``):
    │                                 ``upstream-failed``, ``upstream-deadline-exceeded``, ``upstream-response-too-large``,
    │                                 ``upstream-encoding-refused`` (the last two with the upstream's ``status``)
    ├── KeyNotFound, KeyNotUnresolved ``idempotency-key-not-found``, ``idempotency-key-not-unresolved`` (clearing a key)
    └── CredentialError               ``secret-key-missing``, ``invalid-credential``, ``credential-not-found``,
                                      set time: ``invalid-origin``, ``origin-scheme-refused``, ``http-needs-opt-in``,
                                      ``allow-http-mismatch``, ``secret-not-sendable``, ``secret-too-long``
                                      call time: ``credential-unavailable`` (an OAuth token endpoint failed;
                                      ``token_endpoint``; nothing sent upstream)

An answer whose echo of a bound secret cannot be redacted in place is not an exception: the request
ran, so the answer itself becomes ``{"error": {"code": "response-withheld", "status", "message"}}``
(``gateway/redaction.py``).

``gateway-failure`` (a plain :class:`GatewayError`) is the gateway's own fault: ``Gateway.fetch`` answers it
instead of raising. What each failure does to the key and the approval: ``docs/gateway.md``.

No error ever carries a secret: messages are built from hosts, paths and codes only.
"""

from __future__ import annotations

from typing import Any


class GatewayError(Exception):
    """A refusal with a stable ``code``; :meth:`document` is what the guest and the API see."""

    code = "gateway-error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details

    def document(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


class InvalidRequest(GatewayError):
    code = "invalid-request"


class DuplicateHeader(InvalidRequest):
    code = "duplicate-header"


class DuplicateJsonKey(InvalidRequest):
    code = "duplicate-json-key"


class EgressRefused(GatewayError):
    code = "egress-refused"


class ApprovalRequired(GatewayError):
    """The request is held until a person approves it; ``approval_id`` names the approval."""

    code = "approval-required"

    def __init__(self, message: str, approval_id: str) -> None:
        super().__init__(message, approval_id=approval_id)
        self.approval_id = approval_id


class ApprovalError(GatewayError):
    code = "approval-not-found"


class IdempotencyConflict(GatewayError):
    code = "idempotency-conflict"


class IdempotencyMismatch(GatewayError):
    code = "idempotency-mismatch"


class UpstreamUnresolved(GatewayError):
    code = "upstream-unresolved"


class UpstreamFailed(GatewayError):
    code = "upstream-failed"


class CredentialError(GatewayError):
    code = "invalid-credential"
