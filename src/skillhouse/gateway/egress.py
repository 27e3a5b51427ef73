"""The egress rule: may this request leave, and to which address exactly.

Allowed are the hosts of the turn's bound operations plus the tenant's allow-list. The host is
resolved once, here; every address it resolves to must be public unless the host is listed for private
access (a ``SKILLHOUSE_RESOLVE`` entry is such a listing: the deployment named the address itself).
Both lists are the ones for the request's tenant: the deployment's entries for everyone plus that
tenant's own (``GatewayConfig.private_reach``), so one tenant's private host is not another's.
The decision carries the address that was checked, and the upstream client connects to exactly that
address, so a name that resolves differently a moment later (DNS rebinding) changes nothing.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from skillhouse.gateway.addresses import IPAddress, address_class, literal_address, parse_address
from skillhouse.gateway.errors import EgressRefused, InvalidRequest

Resolver = Callable[[str, int], list[IPAddress]]
"""Name to addresses; the seam tests replace (``socket.getaddrinfo`` in production)."""

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Target:
    """Where a URL points: scheme, lowercased host (no brackets), port, and the rest of it."""

    scheme: str
    host: str
    port: int
    path: str
    query: str

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"


def parse_target(url: str) -> Target:
    """Read a request URL; refuse what cannot be an absolute http(s) URL to a host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidRequest(f"url is not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise EgressRefused(f"only http and https URLs may leave, not {scheme or 'a relative URL'!r}")
    if parts.username is not None or parts.password is not None:
        raise InvalidRequest("url must not carry user information (credentials are bound by the gateway)")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise InvalidRequest("url has no host")
    return Target(scheme, host.lower(), port or DEFAULT_PORTS[scheme], parts.path or "/", parts.query)


@dataclass(frozen=True)
class EgressPolicy:
    """Which hosts a request may reach: entries are ``host`` (any port) or ``host:port``."""

    allowed: frozenset[str]
    private: frozenset[str] = frozenset()
    """Hosts listed explicitly for private access (their addresses may be private)."""

    @staticmethod
    def _listed(entries: frozenset[str], target: Target) -> bool:
        return target.host in entries or target.authority in entries

    def allows(self, target: Target) -> bool:
        return self._listed(self.allowed, target)

    def allows_private(self, target: Target) -> bool:
        return self._listed(self.private, target)

    @classmethod
    def of(cls, authorities: Iterable[str], allow_list: Iterable[str], private: Iterable[str] = ()) -> EgressPolicy:
        """The policy for operations' ``host:port`` authorities (already parsed) and a tenant's lists."""
        allowed = {entry.lower() for entry in allow_list}
        allowed.update(authorities)
        return cls(frozenset(allowed), frozenset(entry.lower() for entry in private))


@dataclass(frozen=True)
class EgressDecision:
    """An allowed request: the checked address and port a connection must go to."""

    target: Target
    address: IPAddress
    port: int
    fixed: bool
    """Whether the address came from the deployment's fixed mapping (``SKILLHOUSE_RESOLVE``)."""


def fixed_address(table: Mapping[tuple[str, int], str], target: Target) -> tuple[IPAddress, int] | None:
    """The ``SKILLHOUSE_RESOLVE`` entry for the target: ``address`` or ``address:port``."""
    entry = table.get((target.host, target.port))
    return None if entry is None else _fixed_entry(entry, target.port)


@lru_cache(maxsize=256)
def _fixed_entry(entry: str, port: int) -> tuple[IPAddress, int]:
    """An entry read once per spelling (a deployment has a handful): its address, and its port or ``port``."""
    text = entry.strip()
    if text.startswith("["):
        inner, _, rest = text[1:].partition("]")
        text, port = inner, int(rest[1:]) if rest.startswith(":") else port
    elif text.count(":") == 1:
        text, _, port_text = text.partition(":")
        port = int(port_text)
    return parse_address(text), port


def system_resolver(host: str, port: int) -> list[IPAddress]:
    """Every address the system resolver gives for ``host``."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    found: list[IPAddress] = []
    for info in infos:
        address = literal_address(str(info[4][0]))
        if address is not None and address not in found:
            found.append(address)
    return found


def decide_egress(
    target: Target,
    policy: EgressPolicy,
    fixed: Mapping[tuple[str, int], str],
    resolver: Resolver = system_resolver,
) -> EgressDecision:
    """Allow ``target`` (with the address to connect to) or raise :class:`EgressRefused`."""
    where = target.authority
    if not policy.allows(target):
        raise EgressRefused(f"{where} is not a host of the turn's operations or the tenant's allow-list", reason="host-not-allowed")
    mapped = fixed_address(fixed, target)
    if mapped is not None:
        return EgressDecision(target, mapped[0], mapped[1], fixed=True)
    literal = literal_address(target.host)
    addresses = [literal] if literal is not None else resolver(target.host, target.port)
    if not addresses:
        raise EgressRefused(f"{target.host} does not resolve", reason="unresolvable")
    if not policy.allows_private(target):
        for address in addresses:
            kind = address_class(address)
            if kind is not None:
                raise EgressRefused(f"{where} resolves to a {kind} address; only public addresses may be reached", reason=kind)
    return EgressDecision(target, addresses[0], target.port, fixed=False)
