"""Names the wizard gives: operation files and arguments, each one a provider accepts.

Operation names come from ``operationId`` or, where it is missing, from method and path; they are
sanitized, capped at 64 characters and deduplicated deterministically (spec order, case-insensitively,
since files on some systems are). Argument names keep the wire name where every provider accepts it
(letters, digits and underscores: Gemini takes no ``-`` or ``.``) and otherwise get a readable stand-in
(``include[]`` -> ``include``, ``StartTime<`` -> ``StartTime_lt``, ``X-Request-Id`` -> ``X_Request_Id``).
"""

from __future__ import annotations

import re

from skillhouse.compiler.naming import cap

ARGUMENT_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")
_SYMBOLS = {"<": "_lt", ">": "_gt", "=": "_eq", "!": "_not", "+": "_plus", "*": "_any", "@": "_at", "$": "_"}
_RUN = re.compile(r"[^A-Za-z0-9_-]+")
_UNDERSCORES = re.compile(r"_{2,}")
_CLEAN = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
"""A name :func:`_clean` keeps as it is: nothing to replace, no run of underscores, none at either end.
Most operation ids are such names, and matching one is a fraction of cleaning it (ten replacements, two
substitutions); with the stem's id cleaned once rather than twice, 1.2% of Jira's import, 0.8% of Twilio's."""
RESERVED_STEMS = frozenset({"skill"})


def _clean(text: str) -> str:
    if _CLEAN.fullmatch(text):
        return text
    text = text.replace("[]", "")
    for symbol, word in _SYMBOLS.items():
        text = text.replace(symbol, word)
    return _UNDERSCORES.sub("_", _RUN.sub("_", text)).strip("_")


def operation_stem(operation_id: object, method: str, path: str) -> str:
    """The file stem for an operation, before deduplication."""
    cleaned = _clean(operation_id) if isinstance(operation_id, str) else ""
    stem = cleaned or _clean(f"{method.lower()}_{path}") or method.lower()
    if stem.lower() in RESERVED_STEMS:
        stem = f"{stem}_operation"
    return cap(stem)


class StemRegistry:
    """Hands out unique stems in the order asked: the first keeps its name, later ones get ``_2``, ``_3``."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, stem: str) -> str:
        candidate, n = stem, 2
        while candidate.lower() in self._taken:
            suffix = f"_{n}"
            candidate, n = cap(stem, 64 - len(suffix)) + suffix, n + 1
        self._taken.add(candidate.lower())
        return candidate


def argument_name(wire: str) -> str:
    """An argument name providers accept for wire name ``wire``."""
    if ARGUMENT_NAME.fullmatch(wire):
        return wire
    return cap(_UNDERSCORES.sub("_", _clean(wire).replace("-", "_")).strip("_") or "value")


def unique_argument(name: str, location: str, taken: set[str]) -> str:
    """``name``, or ``name_<location>`` (then numbered) when another argument already has it."""
    if name not in taken:
        return name
    candidate, n = cap(f"{name}_{location}"), 2
    while candidate in taken:
        candidate, n = cap(f"{name}_{location}_{n}"), n + 1
    return candidate
