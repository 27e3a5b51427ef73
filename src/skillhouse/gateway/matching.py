"""Which bound operation a request is, and which approval gates hold it.

The answer comes from the turn's bound release documents and the request's own method and URL, never
from anything the guest says about the request: a guest that mistranslates, or composes a request by
hand, is judged by what it sends. A request that matches no operation is a plain ``fetch_url``: it gets
the egress rule and nothing else (unless a gate's path matches it).

Requests arrive canonical (``gateway/canonical_url.py``); templates and gate paths are brought to the
same form here (their ``{name}`` parameters kept), so a spelling that canonicalizes to an operation's
URL is that operation. One trailing slash is not significant for matching: ``/charges/`` is held by
the gate on ``/charges`` and keyed like it, as many servers route the two alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from skillhouse.compiler.url_form import NotCanonical, canonical_path
from skillhouse.gateway.canonical_url import canonical_url
from skillhouse.gateway.egress import Target, parse_target
from skillhouse.gateway.errors import GatewayError
from skillhouse.json_types import OperationDocument, ReleaseDocument

_PARAMETER = re.compile(r"\{[^{}/]*\}")


@dataclass(frozen=True)
class BoundOperation:
    """One operation of a bound release, with the skill and version it came from."""

    skill: str
    version: str
    document: OperationDocument

    @property
    def name(self) -> str:
        return str(self.document["name"])

    @property
    def qualified(self) -> str:
        return f"{self.skill}.{self.name}"


@dataclass(frozen=True)
class Match:
    """A request matched to an operation; ``path`` holds its path parameters, percent-decoded."""

    operation: BoundOperation
    path: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Gate:
    """An approval gate: ``METHOD /path/{param}``, on the hosts of one skill or (tenant gates) any host."""

    method: str
    path: str
    reason: str = ""
    authorities: frozenset[str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", template_path(self.path))


def _segments(path: str) -> list[str]:
    segments = path.split("/")
    if len(segments) > 2 and segments[-1] == "":
        segments.pop()  # a trailing slash (see the module docstring)
    return segments


@lru_cache(maxsize=4096)
def template_path(path: str) -> str:
    """A template's path in canonical form, its ``{name}`` parameters kept as they are.

    A template that cannot be canonicalized is kept as written: no canonical request can equal it.
    """
    names = _PARAMETER.findall(path)
    # each parameter stands in as unreserved text, which canonicalization leaves alone
    marked = _PARAMETER.sub(lambda m: f"skhparam{names.index(m.group(0))}x", path)
    try:
        canonical = canonical_path(marked if marked.startswith("/") else "/" + marked)
    except NotCanonical:
        return path
    for index, name in enumerate(names):
        canonical = canonical.replace(f"skhparam{index}x", name)
    return canonical


def _segment_parameter(pattern: str) -> tuple[str, str, str] | None:
    """``prefix{name}suffix`` as (prefix, name, suffix); ``None`` for a literal segment."""
    start, end = pattern.find("{"), pattern.rfind("}")
    if start < 0 or end < start + 2:
        return None
    return pattern[:start], pattern[start + 1 : end], pattern[end + 1 :]


def match_path(template: str, path: str) -> dict[str, str] | None:
    """Path parameters if ``path`` fits ``template``.

    A ``{name}`` fills one non-empty segment, or the part of one between a literal prefix and
    suffix (``{Sid}.json``, which the compiler allows in schema form for APIs such as Twilio's).
    """
    wanted, got = _segments(template), _segments(path)
    if len(wanted) != len(got):
        return None
    params: dict[str, str] = {}
    for pattern, segment in zip(wanted, got, strict=True):
        parameter = _segment_parameter(pattern)
        if parameter is None:
            if pattern != segment:
                return None
            continue
        prefix, name, suffix = parameter
        if len(segment) <= len(prefix) + len(suffix) or not segment.startswith(prefix) or not segment.endswith(suffix):
            return None
        params[name] = unquote(segment[len(prefix) : len(segment) - len(suffix)])
    return params


def _literal_count(template: str) -> int:
    return sum(1 for s in _segments(template) if _segment_parameter(s) is None)


def _template_target(url: str) -> Target:
    # braces are not valid in a host; a template's host part is always literal
    target = parse_target(url)
    try:
        origin = canonical_url(f"{target.scheme}://{urlsplit(url).netloc}/")
    except GatewayError:
        return replace(target, path=template_path(target.path))
    return Target(origin.scheme, origin.host, origin.port, template_path(target.path), target.query)


class BoundReleases:
    """The operations and gates of a turn's bound releases, ready to match requests against."""

    def __init__(self, releases: Iterable[ReleaseDocument], tenant_gates: Iterable[Gate] = ()) -> None:
        self.operations: list[tuple[BoundOperation, Target]] = []
        self.gates: list[Gate] = list(tenant_gates)
        # built once per turn, read on every request: candidates by (method, scheme, authority)
        self._candidates: dict[tuple[str, str, str], list[tuple[BoundOperation, Target]]] = {}
        for release in releases:
            skill, version = str(release["skill"]), str(release["version"])
            authorities: set[str] = set()
            for doc in release.get("operations", []):
                target = _template_target(str(doc["url"]))
                authorities.add(target.authority)
                bound = (BoundOperation(skill, version, doc), target)
                self.operations.append(bound)
                key = (str(doc["method"]).upper(), target.scheme, target.authority)
                self._candidates.setdefault(key, []).append(bound)
            for gate in release.get("gates", []):
                method, _, path = str(gate["matches"]).partition(" ")
                self.gates.append(Gate(method.upper(), path, str(gate.get("reason", "")), frozenset(authorities)))
        self.authorities = frozenset(target.authority for _, target in self.operations)
        """Every ``host:port`` the bound operations reach: the egress rule's share of the turn."""

    def match(self, method: str, target: Target) -> Match | None:
        """The bound operation this request is; the most literal template wins a tie."""
        best: tuple[int, Match] | None = None
        for op, template in self._candidates.get((method, target.scheme, target.authority), ()):
            params = match_path(template.path, target.path)
            if params is None:
                continue
            score = _literal_count(template.path)
            if best is None or score > best[0]:
                best = (score, Match(op, params))
        return None if best is None else best[1]

    def gate_for(self, method: str, target: Target, match: Match | None) -> Gate | None:
        """The gate that holds this request, if any: the operation's own, or a matching one."""
        if match is not None and match.operation.document.get("approval"):
            approval = match.operation.document["approval"]
            return Gate(method, target.path, str(approval.get("reason", "")))
        for gate in self.gates:
            if gate.method != method or match_path(gate.path, target.path) is None:
                continue
            if gate.authorities is None or target.authority in gate.authorities:
                return gate
        return None
