"""The one error tree: every error skillhouse raises past a module boundary, by what it means.

::

    SkillhouseError                 ``code`` (stable; match on it) and ``message`` (for people; may change)
    ├── CallerError                 the caller's mistake: change the request, then send it again
    │   ├── Unauthenticated         no usable token: missing, malformed, unknown or revoked
    │   ├── Forbidden               a known caller that may not do this (a token's scope, a stale CSRF token)
    │   ├── NotFoundError           no such thing for this tenant (another tenant's thing is "not found" too)
    │   └── ConflictError           contradicts stored state (published content, a decided approval, a duplicate
    │                               in flight); reading the state again tells what would be accepted
    │   (the rest of CallerError: a refusal or a validation failure, with where: a field, a file and line)
    ├── RunFailure                  the request may be fine, but running it failed
    │   ├── Unavailable             this deployment cannot do it now (no guest, no usable secret key, no model);
    │   │                           an operator fixes a setting; retrying unchanged does not help until then
    │   └── ExternalFailure         a service outside skillhouse failed: the upstream API or a model provider.
    │                               The request may have been sent: each subclass says whether it was
    │   (the rest of RunFailure: the gateway's own fault, a demo step)
    └── Signal                      not an error: nothing is wrong, the answer is "not yet"
                                    (``ApprovalRequired``: a person decides first; ``GuestBuilding``: come back
                                    after ``retry_after`` seconds; ``SignInRequired``: the console sends you to sign in)

A class may carry more than one code (``ApprovalError`` is ``approval-not-found`` or ``approval-expired``...):
the class says what kind of thing went wrong, the code says which. Module bases that are not a family
(``GatewayError``, ``GuestNotReady``) only say where an error comes from; each of their subclasses is in
exactly one family. Only ``skillhouse.api.errors`` knows HTTP: it maps each family (and a few codes) to a
status in one table. The whole tree with every class and code: ``docs/errors.md``.

Standard library only: the guest, which is compiled into the WebAssembly component, imports it too.
"""

from __future__ import annotations


class SkillhouseError(Exception):
    """Root of the tree: a stable ``code`` to match on and a ``message`` that says what to do.

    ``code`` is the class's code unless the raise site names a more precise one; codes never change
    once published, messages may.
    """

    code: str = "skillhouse-error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class CallerError(SkillhouseError):
    """The caller's mistake (a refusal or a validation failure): the same request fails the same way again."""

    code = "invalid-request"


class Unauthenticated(CallerError):
    """The caller is not known: no token, or one that is malformed, unknown or revoked."""

    code = "unauthenticated"


class Forbidden(CallerError):
    """The caller is known but may not do this (a token's scope, a form's CSRF token)."""

    code = "forbidden"


class NotFoundError(CallerError):
    """No such thing for this tenant; another tenant's thing is not found either."""

    code = "not-found"


class ConflictError(CallerError):
    """The request contradicts stored state; read the state again before deciding what to send."""

    code = "conflict"


class RunFailure(SkillhouseError):
    """The request may be fine, but running it failed; what to do is in the message."""

    code = "run-failed"


class Unavailable(RunFailure):
    """The deployment cannot do this now (its guest, secret key or model); an operator fixes a setting."""

    code = "unavailable"


class ExternalFailure(RunFailure):
    """A service outside skillhouse failed (the upstream API, a model provider); it may have acted."""

    code = "external-failure"


class Signal(SkillhouseError):
    """Not an error: the answer is "not yet" (a person decides first, or come back later)."""

    code = "signal"


FAMILIES: tuple[type[SkillhouseError], ...] = (CallerError, RunFailure, Signal)
"""The three families; every concrete error is in exactly one of them."""


def family(error: SkillhouseError | type[SkillhouseError]) -> type[SkillhouseError] | None:
    """The family ``error`` is in (:data:`FAMILIES`), or ``None`` for a module base such as ``GatewayError``."""
    kind = error if isinstance(error, type) else type(error)
    found = [f for f in FAMILIES if issubclass(kind, f)]
    return found[0] if len(found) == 1 else None
