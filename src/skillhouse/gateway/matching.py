"""Which bound operation a request is, and which approval gates hold it.

The answer comes from the turn's bound release documents and the request's own method and URL, never
from anything the guest says about the request: a guest that mistranslates, or composes a request by
hand, is judged by what it sends. A request that matches no operation is a plain ``fetch_url``: it gets
the egress rule and nothing else (unless a gate's path matches it).

Requests arrive canonical (``gateway/canonical_url.py``); templates and gate paths are brought to the
same form here (their ``{name}`` parameters kept), so a spelling that canonicalizes to an operation's
URL is that operation. A raw ``;`` in the path is accepted only as the matched operation's matrix
parameter, spelled as it (``gateway/matrix.py``); any other is refused (``path-parameter``), as the
canonical form refuses it everywhere else. A gate holds such a request when it holds its path with the
parameters stripped too, as a server that ignores them would read it. One trailing slash is not
significant for matching: ``/charges/`` is held by the gate on ``/charges`` and keyed like it, as many
servers route the two alike.
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
from skillhouse.gateway.errors import GatewayError, InvalidRequest
from skillhouse.gateway.matrix import MatrixParameter, matrix_parameters, matrix_value, without_parameters
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
    """A request matched to an operation; ``path`` holds its path parameters, percent-decoded (a matrix
    list or object keeps its canonical segment: ``gateway/matrix.py``)."""

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


def _with_matrix(template: str, path: str, params: dict[str, str], matrix: dict[str, MatrixParameter]) -> dict[str, str] | None:
    """``params`` with each matrix parameter's value read from its segment (``gateway/matrix.py``), or
    ``None`` when a segment with a raw ``;`` is not a matrix parameter spelled as it."""
    out = dict(params)
    for pattern, segment in zip(_segments(template), _segments(path), strict=True):
        parameter = _segment_parameter(pattern)
        name = parameter[1] if parameter is not None and parameter[0] == parameter[2] == "" else ""
        declared = matrix.get(name)
        if declared is None or ";" not in segment:
            if ";" in segment:
                return None
            # a matrix position spelled without ';' is still this operation (its gate and key hold it),
            # read as a simple segment: servers route it to the same handler
            continue
        value = matrix_value(segment, declared)
        if value is None:
            return None
        out[name] = value
    return out


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
        self._matrix: dict[int, dict[str, MatrixParameter]] = {}
        """Each operation's matrix path parameters (by ``id`` of its document), when it has any."""
        for release in releases:
            skill, version = str(release["skill"]), str(release["version"])
            authorities: set[str] = set()
            for doc in release.get("operations", []):
                target = _template_target(str(doc["url"]))
                authorities.add(target.authority)
                bound = (BoundOperation(skill, version, doc), target)
                matrix = matrix_parameters(doc)
                if matrix:
                    self._matrix[id(doc)] = matrix
                self.operations.append(bound)
                key = (str(doc["method"]).upper(), target.scheme, target.authority)
                self._candidates.setdefault(key, []).append(bound)
            for gate in release.get("gates", []):
                method, _, path = str(gate["matches"]).partition(" ")
                self.gates.append(Gate(method.upper(), path, str(gate.get("reason", "")), frozenset(authorities)))
        self.authorities = frozenset(target.authority for _, target in self.operations)
        """Every ``host:port`` the bound operations reach: the egress rule's share of the turn."""

    def match(self, method: str, target: Target) -> Match | None:
        """The bound operation this request is; the most literal template wins a tie.

        Raises :class:`InvalidRequest` (``path-parameter``) for a path with a raw ``;`` that is not the
        matrix parameter of the operation it matches.
        """
        best: tuple[int, Match] | None = None
        for op, template in self._candidates.get((method, target.scheme, target.authority), ()):
            params = match_path(template.path, target.path)
            matrix = self._matrix.get(id(op.document))
            if params is not None and (matrix or ";" in target.path):
                params = _with_matrix(template.path, target.path, params, matrix or {})
            if params is None:
                continue
            score = _literal_count(template.path)
            if best is None or score > best[0]:
                best = (score, Match(op, params))
        if ";" not in target.path:
            return None if best is None else best[1]
        if best is None:
            raise InvalidRequest("url has a ';' in the path that is no matrix parameter of the operation it calls "
                                 "(servers that strip ';parameters' disagree); write %3B", field="url",
                                 reason="path-parameter")  # fmt: skip
        # a server that ignores ';parameters' runs the stripped path: when that is another operation with an
        # idempotency key, the key would not hold (a gate does: gate_for)
        read_as = self.match(method, replace(target, path=without_parameters(target.path)))
        if read_as is not None and read_as.operation is not best[1].operation and read_as.operation.document.get("identity"):
            raise InvalidRequest(f"url has a ';' parameter whose path, stripped of it, is {read_as.operation.qualified}, "
                                 "which has an idempotency key; servers that strip ';parameters' would run that",
                                 field="url", reason="path-parameter")  # fmt: skip
        return best[1]

    def gate_for(self, method: str, target: Target, match: Match | None) -> Gate | None:
        """The gate that holds this request, if any: the operation's own, or a matching one."""
        if match is not None and match.operation.document.get("approval"):
            approval = match.operation.document["approval"]
            return Gate(method, target.path, str(approval.get("reason", "")))
        paths: tuple[str, ...] = (target.path,)
        if ";" in target.path:
            # a server that ignores ';parameters' runs the stripped path: what gates that holds this too
            stripped = replace(target, path=without_parameters(target.path))
            paths = (target.path, stripped.path)
            read_as = self.match(method, stripped)
            if read_as is not None and read_as.operation.document.get("approval"):
                return Gate(method, target.path, str(read_as.operation.document["approval"].get("reason", "")))
        for gate in self.gates:
            if gate.method != method or all(match_path(gate.path, path) is None for path in paths):
                continue
            if gate.authorities is None or target.authority in gate.authorities:
                return gate
        return None
