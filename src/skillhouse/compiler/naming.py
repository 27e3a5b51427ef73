"""Tool names: ``<skill>_<operation>`` reduced to what every provider accepts."""

from __future__ import annotations

import re

from skillhouse.sha256 import sha256

MAX_TOOL_NAME = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]+")


def sanitize(name: str) -> str:
    """Each run of characters other than letters, digits, ``_`` and ``-`` becomes ``_``."""
    return _NOT_ALLOWED.sub("_", name)


def cap(name: str, limit: int = MAX_TOOL_NAME) -> str:
    """``name`` if it fits in ``limit``; otherwise cut, with a short hash of the whole name kept."""
    if len(name) <= limit:
        return name
    digest = sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{name[: limit - 9]}_{digest}"


def tool_name(skill: str, operation: str) -> str:
    """The tool name of ``operation`` in ``skill``."""
    return cap(sanitize(f"{skill}_{operation}"))
