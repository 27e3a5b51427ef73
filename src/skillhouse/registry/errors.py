"""The registry's errors: every one is the caller's mistake (a :class:`~skillhouse.errors.CallerError`).

::

    RegistryError                 code, message, problems
    ├── NotFound                  (NotFoundError) no such row for this tenant (another tenant's row is "not found")
    ├── Conflict                  (ConflictError) the request contradicts stored state (published content, a transition)
    └── Invalid                   the input is wrong; ``problems`` says every what and where at once

A problem is ``{"path", "code", "message"}`` for a field of a request body or
``{"file", "line", "code", "message"}`` for a file of a skill package. Only ``api`` knows HTTP
(``skillhouse.api.errors`` maps the families to statuses).
"""

from __future__ import annotations

from skillhouse.errors import CallerError, ConflictError, NotFoundError
from skillhouse.json_types import ProblemDocument


class RegistryError(CallerError):
    """Base of the registry's errors: a stable ``code``, a message for people, and problems."""

    def __init__(self, code: str, message: str, problems: list[ProblemDocument] | None = None) -> None:
        super().__init__(message, code=code)
        self.problems = problems or []


class NotFound(RegistryError, NotFoundError):
    """The thing does not exist for this tenant (``not-found``, ``release-gone``, ``token-not-found``...)."""

    code = "not-found"


class Conflict(RegistryError, ConflictError):
    """The request contradicts what is stored (``release-conflict``, ``invalid-transition``, ``concurrent-update``,
    ``builtin-readonly``); read the stored state again before deciding what to send."""

    code = "release-conflict"


class Invalid(RegistryError):
    """The input is wrong (``invalid-request``, ``unknown-tool``, ``tool-not-offered``...); every problem is listed
    with where it is."""

    code = "invalid-request"


def problem(path: str, code: str, message: str) -> ProblemDocument:
    """A problem in a request field, ``path`` dotted (``tool_spec.integration_manifest.provider``)."""
    return {"path": path, "code": code, "message": message}
