"""The gateway's refusals, failures and signals, each with a stable code the guest and the API hand on.

Every class is in one family of the tree in :mod:`skillhouse.errors`; ``GatewayError`` only says that
the gateway raised it (``except GatewayError`` catches all of them). ::

    GatewayError                      ``code`` is stable, ``message`` is for people, ``details`` go in the document
    │ CallerError: the request is wrong; sending it again unchanged fails the same way
    ├── InvalidRequest                ``invalid-request``: the request itself is malformed or has no one
    │   │                             canonical form (``field`` and ``reason`` say where and why)
    │   ├── DuplicateHeader           ``duplicate-header``: a header name given twice (in any case)
    │   ├── DuplicateJsonKey          ``duplicate-json-key``: a JSON body repeats a key in one object
    │   └── (``invalid-limit``)       a rate limit that cannot be set (``field`` says which value)
    ├── EgressRefused                 ``egress-refused``: host not allowed or address not public
    ├── ApprovalError                 ``approval-not-found``, ``approval-not-pending``, ``approval-expired``,
    │                                 ``approval-denied``
    ├── IdempotencyConflict           ``idempotency-conflict`` (a ConflictError): a duplicate still in flight
    ├── IdempotencyMismatch           ``idempotency-mismatch``: same identity, different payload
    ├── KeyNotFound, KeyNotUnresolved ``idempotency-key-not-found`` (NotFoundError),
    │                                 ``idempotency-key-not-unresolved`` (ConflictError): clearing a key
    ├── CredentialError               ``invalid-credential``, ``credential-not-sendable``, set time: ``invalid-origin``,
    │                                 ``origin-scheme-refused``, ``http-needs-opt-in``, ``allow-http-mismatch``,
    │                                 ``secret-not-sendable``, ``secret-too-long``
    ├── RateLimitNotFound             ``rate-limit-not-found`` (NotFoundError): deleting a limit that is not set
    ├── BindingNotFound               ``binding-not-found`` (NotFoundError): connecting to an origin that has no
    │                                 ``oauth2-authorization-code`` binding
    │ RunFailure: the request may be fine
    ├── GatewayUnavailable            (Unavailable) the deployment cannot run this gateway: ``secret-key-missing``,
    │                                 ``secret-key-invalid``, ``credential-undecryptable``, ``upstream-ca-invalid``
    ├── GatewayFault                  ``gateway-failure``: the gateway's own fault (its store, a bug)
    ├── UpstreamUnresolved            (ExternalFailure) ``upstream-unresolved``: may have been sent, outcome
    │                                 unknown; its key is never resent (``cause``, ``idempotency_key``)
    ├── UpstreamFailed                (ExternalFailure) not sent (``sent: false``): ``upstream-unreachable``,
    │                                 ``upstream-request-refused`` (``field``), ``upstream-deadline-exceeded``,
    │                                 ``tenant-busy``; may have been sent (``sent: true``): ``upstream-failed``,
    │                                 ``upstream-deadline-exceeded``, ``upstream-response-too-large``,
    │                                 ``upstream-encoding-refused`` (the last two with the upstream's ``status``)
    ├── CredentialUnavailable         (ExternalFailure) ``credential-unavailable``: an OAuth token endpoint gave no token
    │                                 (``token_endpoint``); nothing was sent upstream
    │ Signal: not an error
    ├── ApprovalRequired              ``approval-required``: held for a person (``approval_id``)
    └── RateLimited                   ``rate-limited``: not sent; call again after ``retry_after`` seconds
                                      (``limit`` names the limit, or the upstream that asked for the wait)

An answer whose echo of a bound secret cannot be redacted in place is not an exception: the request
ran, so the answer itself becomes ``{"error": {"code": "response-withheld", "status", "message"}}``
(``gateway/redaction.py``).

``Gateway.fetch`` never raises: it answers each of these as its :meth:`GatewayError.document`, and a
fault of its own as ``gateway-failure``. What each failure does to the key and the approval:
``docs/gateway.md``.

No error ever carries a secret: messages are built from hosts, paths and codes only.
"""

from __future__ import annotations

from typing import Any

from skillhouse.errors import (
    CallerError,
    ConflictError,
    ExternalFailure,
    NotFoundError,
    RunFailure,
    Signal,
    SkillhouseError,
    Unavailable,
)


class GatewayError(SkillhouseError):
    """Raised by the gateway; a module base, not a family: each subclass is in one family of the tree.

    :meth:`document` is what the guest and the API see: the code, the message and the details
    (``field``, ``reason``, ``sent``, ``approval_id``...).
    """

    code = "gateway-error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message, code=code)
        self.details = details

    def document(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


class InvalidRequest(GatewayError, CallerError):
    """The request is malformed or has no one canonical form; ``field`` and ``reason`` say where and why."""

    code = "invalid-request"


class DuplicateHeader(InvalidRequest):
    code = "duplicate-header"


class DuplicateJsonKey(InvalidRequest):
    code = "duplicate-json-key"


class EgressRefused(GatewayError, CallerError):
    """The request may not leave: its host is not allowed, or it resolves to an address that is not public."""

    code = "egress-refused"


class ApprovalRequired(GatewayError, Signal):
    """Not an error: the request is held until a person approves it; ``approval_id`` names the approval.

    Nothing was sent. Once a person approves, the identical request (same call, same arguments) runs
    once; call again then.
    """

    code = "approval-required"

    def __init__(self, message: str, approval_id: str) -> None:
        super().__init__(message, approval_id=approval_id)
        self.approval_id = approval_id


class ApprovalError(GatewayError, CallerError):
    """An approval that cannot be used or decided: ``approval-not-found``, ``approval-not-pending``,
    ``approval-expired`` (make the request again for a new one) or ``approval-denied`` (this exact
    request is refused until the denial expires)."""

    code = "approval-not-found"


class IdempotencyConflict(GatewayError, ConflictError):
    """A request with the same idempotency key is still in flight; retry after it finishes."""

    code = "idempotency-conflict"


class IdempotencyMismatch(GatewayError, CallerError):
    """The idempotency key was first used with a different request: same identity, different payload."""

    code = "idempotency-mismatch"


class UpstreamUnresolved(GatewayError, ExternalFailure):
    """The request may have reached the upstream and its outcome is unknown (``cause``); its key turns
    unresolved and the gateway never resends it. Check the upstream (did it act?), then clear the key
    (``DELETE /v1/idempotency-keys/{key}``) to let the identical request run again."""

    code = "upstream-unresolved"


class UpstreamFailed(GatewayError, ExternalFailure):
    """The upstream could not be reached or its answer cannot be handed on; ``sent`` says whether it got the request.

    Also raised after the request may have been sent (``sent: true``): a request without an
    idempotency key whose connection broke or whose deadline passed, or an answer that was too large
    or in an encoding refused. The upstream may then have acted: check it before calling again.
    ``sent: false`` (``upstream-unreachable``, ``upstream-request-refused``, ``tenant-busy``...) means
    nothing left, and calling again later is safe.
    """

    code = "upstream-failed"


class CredentialError(GatewayError, CallerError):
    """A credential binding that is wrong: refused when set (``field`` says which), or a stored one that cannot
    be sent (``credential-not-sendable``)."""

    code = "invalid-credential"


class CredentialUnavailable(GatewayError, ExternalFailure):
    """``credential-unavailable``: the token endpoint of an OAuth 2.0 binding gave no access token (refused the
    client, failed, or is not allowed by the egress rule; ``token_endpoint`` names it). Nothing was sent
    upstream, the request's idempotency key is released and an approval it used is given back, so the same
    call may be made again once the binding or the token endpoint is fixed."""

    code = "credential-unavailable"


class GatewayUnavailable(GatewayError, Unavailable):
    """The deployment cannot run this part of the gateway: ``secret-key-missing``, ``secret-key-invalid``,
    ``credential-undecryptable`` or ``upstream-ca-invalid``. An operator fixes the setting the message names."""

    code = "secret-key-missing"


class GatewayFault(GatewayError, RunFailure):
    """``gateway-failure``: the gateway's own fault (its store, a bug). A key claimed for the request turns
    unresolved when its lease ends, so the request is never resent; check the upstream before calling again."""

    code = "gateway-failure"


class RateLimited(GatewayError, Signal):
    """Not an error: a rate limit of the tenant (``limit`` says which) or an upstream's own ``Retry-After`` for
    this host holds the call back. Nothing was sent, no idempotency key was claimed and an approval used for it
    is owed again; the identical call made after ``retry_after`` seconds runs."""

    code = "rate-limited"

    def __init__(self, message: str, retry_after: int, limit: str) -> None:
        super().__init__(message, retry_after=retry_after, limit=limit)
        self.retry_after = retry_after


class ConnectionRequired(GatewayError, Signal):
    """Not an error: the call needs the turn's subject's own connection to an OAuth 2.0 provider (an
    ``oauth2-authorization-code`` binding of ``origin``), and there is none yet, or the provider no longer
    honours it. ``connect_url`` is the authorization URL to give the person (the model may relay it):
    once they consent there, the identical call runs. Nothing was sent upstream, no idempotency key was
    claimed for long (it is released) and an approval used for the call is owed again. A turn bound
    without a subject has no connections: ``connect_url`` is then absent and the message says to bind
    the turn with ``subject``."""

    code = "connection-required"


class RateLimitNotFound(GatewayError, NotFoundError):
    """No such limit for this tenant (``rate-limit-not-found``)."""

    code = "rate-limit-not-found"


class BindingNotFound(GatewayError, NotFoundError):
    """No ``oauth2-authorization-code`` binding of the origin for this tenant, so no connection to start
    (``binding-not-found``)."""

    code = "binding-not-found"
