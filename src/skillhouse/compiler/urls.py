"""Operation URLs: path parameters in their segments, canonical spelling, and approval gates matched against the URL."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from skillhouse.compiler.context import OperationContext
from skillhouse.compiler.url_form import NotCanonical, canonical_path, canonical_query
from skillhouse.skill import errors as codes

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PATH_SEGMENT_PARAM = re.compile(r"^\{([A-Za-z0-9_-]+)\}$")
# Schema form (the wizard's, for real APIs) also takes literal text around the one parameter of a
# segment, as in Twilio's /Accounts/{Sid}.json; the value is still encoded as a whole segment would be.
_AFFIXED_SEGMENT_PARAM = re.compile(r"^[^{}]*\{([A-Za-z0-9_-]+)\}[^{}]*$")
_PARAMETER = re.compile(r"\{[^{}/]*\}")
_PLAIN_PATH = re.compile(r"(?:/[A-Za-z0-9._~!$&'()*+,=:@-]+)*/?")
"""Segments of unreserved characters and the sub-delimiters a path keeps raw (not ';'), none empty."""
_TEXT = "[A-Za-z0-9._~!$&'()*+,=:@-]"
_NAME = r"\{[A-Za-z0-9_-]+\}"
_ORIGIN = r"https?://[A-Za-z0-9.-]+(?::[0-9]+)?"
_NOT_DOTS = r"(?!\.\.?(?:/|\Z))"
_CANONICAL_URL = re.compile(rf"{_ORIGIN}(?:/{_NOT_DOTS}(?:{_TEXT}+|{_NAME}))*/?")
_CANONICAL_AFFIXED_URL = re.compile(rf"{_ORIGIN}(?:/{_NOT_DOTS}(?:{_TEXT}+(?:{_NAME}{_TEXT}*)?|{_NAME}{_TEXT}*))*/?")
"""A URL :func:`check_url` accepts as it is, canonical, written as most are: an http(s) origin of a
plain host and port, then segments each of :data:`_PLAIN_PATH`'s characters or a parameter (with
``affixes``, one parameter and text around it), not a dot segment, none empty; no query or fragment.
Taken by one match instead of splitting and checking the URL (a property test holds the two alike):
the full check was 1.3% of Jira's import (1349M instructions, 1331M with the match)."""
_NAMES = re.compile(r"\{([A-Za-z0-9_-]+)\}")


def check_url(ctx: OperationContext, url: Any, affixes: bool) -> list[str]:
    """The names of the URL's path parameters; every problem recorded in ``ctx``."""
    if type(url) is str and (_CANONICAL_AFFIXED_URL if affixes else _CANONICAL_URL).fullmatch(url):
        names: list[str] = _NAMES.findall(url)
        if len(set(names)) == len(names):  # a repeated one is reported below
            return names
    return _checked_url(ctx, url, affixes)


def _checked_url(ctx: OperationContext, url: Any, affixes: bool) -> list[str]:
    if not isinstance(url, str) or not url:
        ctx.error(codes.INVALID_OPERATION, "url must be an absolute http(s) URL", "operation", "url")
        return []
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        ctx.error(codes.INVALID_OPERATION, f"url is malformed: {exc}", "operation", "url")
        return []
    if parts.scheme not in ("http", "https") or not parts.netloc:
        ctx.error(codes.INVALID_OPERATION, f"url {url!r} must be an absolute http(s) URL", "operation", "url")
        return []
    if parts.fragment:
        ctx.error(codes.INVALID_OPERATION, "url must not have a fragment (#...)", "operation", "url")
    outside = parts.netloc + parts.query
    if "{" in outside or "}" in outside:
        ctx.error(codes.PATH_PARAMETER, "parameters belong in whole path segments, not in the host or query", "operation", "url")
    params: list[str] = []
    for segment in parts.path.split("/"):
        if "{" not in segment and "}" not in segment:
            continue
        match = (_AFFIXED_SEGMENT_PARAM if affixes else _PATH_SEGMENT_PARAM).match(segment)
        if match is None:
            rule = "one parameter per segment" if affixes else "a path parameter must be a whole segment"
            ctx.error(
                codes.PATH_PARAMETER,
                f"path segment {segment!r}: {rule}, like /bookings/{{id}}",
                "operation",
                "url",
            )
        elif match.group(1) in params:
            ctx.error(codes.PATH_PARAMETER, f"path parameter {match.group(1)!r} appears twice", "operation", "url")
        else:
            params.append(match.group(1))
    _check_canonical(ctx, parts.path or "/", parts.query)
    return params


def _check_canonical(ctx: OperationContext, path: str, query: str) -> None:
    """The template must be written in the canonical form the gateway sends, so every call the guest
    builds from it leaves exactly as built (and none is refused for its template's spelling)."""
    # each {parameter} stands in as unreserved text, which canonicalization leaves alone
    marked = _PARAMETER.sub("p", path) if "{" in path else path
    if any(c in marked + query for c in "{}"):
        return  # misplaced parameters: reported as path-parameter above
    if not query and _PLAIN_PATH.fullmatch(marked) and not any(s in (".", "..") for s in marked.split("/")):
        return  # only characters canonicalization keeps as they are, no dot or empty segment: canonical
    try:
        canonical = canonical_path(marked), canonical_query(query)
    except NotCanonical as exc:
        ctx.error(codes.INVALID_OPERATION, f"url {exc.message} ({exc.reason})", "operation", "url")
        return
    if canonical != (marked, query):
        written = canonical[0] + (f"?{canonical[1]}" if canonical[1] else "")
        ctx.error(codes.INVALID_OPERATION, f"url must be written canonically: {written!r} (with its parameters)",
                  "operation", "url")  # fmt: skip


def path_of(url: str) -> str:
    try:
        return urlsplit(url).path or "/"
    except ValueError:
        return url


def _normal_template(path: str) -> list[str]:
    return ["{}" if (s.startswith("{") and s.endswith("}")) or s == "*" else s for s in path.rstrip("/").split("/")]


def gate_matches(gate: tuple[str, str], method: str, url: str) -> bool:
    gate_method, gate_path = gate
    if gate_method not in ("*", method):
        return False
    if gate_path.startswith("http"):
        return _normal_template(gate_path) == _normal_template(url)
    return _normal_template(gate_path) == _normal_template(path_of(url))
