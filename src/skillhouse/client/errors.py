"""What the client raises: every error answer of the HTTP API, as a class of the one error tree, by its code.

::

    ClientError (module base: the answer reached the client; ``status``, ``problems``, ``details``)
    ├── RequestRefused      CallerError       422 and other 4xx; a call's refusal (``egress-refused``, ...)
    │   └── InvalidArguments                  ``invalid-arguments``: nothing was sent (``violations``)
    ├── TokenRefused        Unauthenticated   401 (``missing-token``, ``unknown-token``, ...)
    ├── ScopeRefused        Forbidden         403 (``insufficient-scope``)
    ├── NotFound            NotFoundError     404
    ├── Conflict            ConflictError     409, ``idempotency-conflict``
    ├── ServerFailure       RunFailure        500 and other 5xx, ``gateway-failure``, ``unexpected-answer``
    ├── ServiceUnavailable  Unavailable       503 that is not a signal (no model, no guest, no secret key)
    ├── ServerUnreachable   Unavailable       no answer at all (``sent`` says whether the request left)
    ├── UpstreamFailed      ExternalFailure   502, ``upstream-*``: the upstream may have acted (``sent``)
    ├── ApprovalRequired    Signal            ``approval-required`` (``approval_id``): a person decides first
    ├── ConnectionRequired  Signal            ``connection-required`` (``connect_url``): the subject connects first
    ├── GuestBuilding       Signal            503 ``guest-building`` (``retry_after``)
    └── RateLimited         Signal            ``rate-limited`` (``retry_after``): nothing was sent

:data:`CODE_CLASSES` is the one table from a stable code to its class; a code not in it gets the class of
its HTTP status (:func:`class_for`), so a code the server adds later still lands in the right family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skillhouse.errors import (
    CallerError,
    ConflictError,
    ExternalFailure,
    Forbidden,
    NotFoundError,
    RunFailure,
    Signal,
    SkillhouseError,
    Unauthenticated,
    Unavailable,
)
from skillhouse.json_types import JsonObject
from skillhouse.wire.errors import Problem


class ClientError(SkillhouseError):
    """Where an error comes from: an answer of the HTTP API (or none) as the client saw it. Each subclass is
    in one family; catch the family (``Signal``, ``CallerError``...) or the class, match on ``code``."""

    code = "client-error"

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None,
                 problems: Sequence[Problem] = (), details: JsonObject | None = None) -> None:
        super().__init__(message, code=code)
        self.status = status
        """The HTTP status of the answer; ``None`` for a call's own answer (200) or no answer at all."""
        self.problems = list(problems)
        """Every problem the server found (a request field's ``path``, a package file's ``file`` and ``line``)."""
        self.details: JsonObject = dict(details or {})
        """The error's other fields as the server sent them (``violations``, ``approval_id``, ``sent``...)."""


class RequestRefused(ClientError, CallerError):
    """The server or the gateway refused the request: change it, then send it again."""

    code = "invalid-request"


class InvalidArguments(RequestRefused):
    """A tool call's arguments do not fit the tool: nothing was sent; ``violations`` lists every one."""

    code = "invalid-arguments"

    @property
    def violations(self) -> list[Any]:
        found = self.details.get("violations")
        return list(found) if isinstance(found, list) else []


class TokenRefused(ClientError, Unauthenticated):
    """No usable token: missing, malformed, unknown or revoked."""

    code = "unauthenticated"


class ScopeRefused(ClientError, Forbidden):
    """The token's scope does not allow this (``run`` < ``approve`` < ``admin``)."""

    code = "forbidden"


class NotFound(ClientError, NotFoundError):
    """No such thing for this token's tenant."""

    code = "not-found"


class Conflict(ClientError, ConflictError):
    """The request contradicts stored state (a published release, a decided approval, a duplicate in flight)."""

    code = "conflict"


class ServerFailure(ClientError, RunFailure):
    """The server failed to run a request that may be fine."""

    code = "run-failed"


class ServiceUnavailable(ClientError, Unavailable):
    """The deployment cannot do this now (no model, no guest, no usable secret key); an operator fixes it."""

    code = "unavailable"


class ServerUnreachable(ClientError, Unavailable):
    """No answer came: the server could not be reached, or the connection broke. ``sent`` is False when the
    request never left (connecting failed), so sending it again is safe."""

    code = "server-unreachable"

    @property
    def sent(self) -> bool:
        return self.details.get("sent") is not False


class UpstreamFailed(ClientError, ExternalFailure):
    """The upstream API (or a token endpoint) failed; ``sent`` says whether it may have acted."""

    code = "upstream-failed"


class ApprovalRequired(ClientError, Signal):
    """Not an error: the request is held until a person decides (``approval_id``). Once it is approved, the
    identical call runs once."""

    code = "approval-required"

    @property
    def approval_id(self) -> str:
        return str(self.details.get("approval_id", ""))


class ConnectionRequired(ClientError, Signal):
    """Not an error: the turn's subject has no OAuth connection to the upstream yet (nothing was sent); give
    the person ``connect_url``, and once they have connected the identical call goes through."""

    code = "connection-required"

    @property
    def connect_url(self) -> str:
        return str(self.details.get("connect_url", ""))


class GuestBuilding(ClientError, Signal):
    """Not an error: the server's guest is still being built; come back after ``retry_after`` seconds."""

    code = "guest-building"

    @property
    def retry_after(self) -> float:
        return _seconds(self.details.get("retry_after"))


class RateLimited(ClientError, Signal):
    """Not an error: a rate limit holds the call (nothing was sent); come back after ``retry_after`` seconds."""

    code = "rate-limited"

    @property
    def retry_after(self) -> float:
        return _seconds(self.details.get("retry_after"))


def _seconds(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


_TOKEN = dict.fromkeys(("missing-token", "malformed-token", "unknown-token", "revoked-token"), TokenRefused)
_UPSTREAM = dict.fromkeys(
    ("upstream-failed", "upstream-unreachable", "upstream-request-refused", "upstream-deadline-exceeded",
     "upstream-response-too-large", "upstream-encoding-refused", "upstream-unresolved", "credential-unavailable",
     "tenant-busy"),
    UpstreamFailed,
)  # fmt: skip

CODE_CLASSES: Mapping[str, type[ClientError]] = {
    **_TOKEN,
    **_UPSTREAM,
    "insufficient-scope": ScopeRefused,
    "approval-required": ApprovalRequired,
    "connection-required": ConnectionRequired,
    "guest-building": GuestBuilding,
    "rate-limited": RateLimited,
    "invalid-arguments": InvalidArguments,
    "approval-not-found": NotFound,
    "approval-not-pending": Conflict,
    "approval-expired": Conflict,
    "idempotency-conflict": Conflict,
    "gateway-failure": ServerFailure,
    "guest-unavailable": ServiceUnavailable,
    "model-not-configured": ServiceUnavailable,
    "model-unavailable": ServiceUnavailable,
}
"""The one table from a stable code to the class the client raises; other codes go by status (:func:`class_for`)."""

_STATUS_CLASSES: Mapping[int, type[ClientError]] = {
    401: TokenRefused, 403: ScopeRefused, 404: NotFound, 409: Conflict, 429: RateLimited, 502: UpstreamFailed,
    503: ServiceUnavailable, 504: UpstreamFailed,
}  # fmt: skip


def class_for(code: str, status: int | None) -> type[ClientError]:
    """The class of an error with ``code``, answered with ``status`` (``None``: a call's own answer, whose
    unknown codes are refusals like ``egress-refused``)."""
    if code in CODE_CLASSES:
        return CODE_CLASSES[code]
    if status is None or status < 500:
        return _STATUS_CLASSES.get(status or 0, RequestRefused)
    return _STATUS_CLASSES.get(status, ServerFailure)


def error_for(error: JsonObject, status: int | None, problems: Sequence[Problem] = ()) -> ClientError:
    """The exception for one error object (``{"code", "message", ...}``) of an answer with ``status``."""
    code = str(error.get("code") or "invalid-request")
    details = {k: v for k, v in error.items() if k not in ("code", "message", "problems")}
    kind = class_for(code, status)
    return kind(str(error.get("message") or code), code=code, status=status, problems=problems, details=details)
