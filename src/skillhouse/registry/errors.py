"""The registry's errors, in three families the API maps to status codes (only ``api`` knows HTTP).

::

    RegistryError                 code, message, problems
    ├── NotFound                  no such row for this tenant (another tenant's row is "not found")
    ├── Conflict                  the request contradicts stored state (published content, a transition)
    └── Invalid                   the input is wrong; ``problems`` says every what and where at once

A problem is ``{"path", "code", "message"}`` for a field of a request body or
``{"file", "line", "code", "message"}`` for a file of a skill package.
"""

from __future__ import annotations

from typing import Any


class RegistryError(Exception):
    """Base of the registry's errors: a stable ``code``, a message for people, and problems."""

    def __init__(self, code: str, message: str, problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.problems = problems or []


class NotFound(RegistryError):
    """The thing does not exist for this tenant."""


class Conflict(RegistryError):
    """The request contradicts what is stored (published content, a state transition)."""


class Invalid(RegistryError):
    """The input is wrong; every problem is listed with where it is."""


def problem(path: str, code: str, message: str) -> dict[str, Any]:
    """A problem in a request field, ``path`` dotted (``tool_spec.integration_manifest.provider``)."""
    return {"path": path, "code": code, "message": message}
