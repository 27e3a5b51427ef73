"""What kind of address a host names: the pure half of the egress rule.

A host may spell an address many ways: ``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``[::ffff:127.0.0.1]``,
``[64:ff9b::a9fe:a9fe]``. :func:`literal_address` reads every spelling a C resolver (``inet_aton``) or a
browser would accept, so the rule judges the address a connection would really reach, not its text.
:func:`address_class` names why an address is not public (``loopback``, ``metadata``, ...) or returns
``None`` for a public one. Addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4) are judged by
the IPv4 address inside them.
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

IPAddress = IPv4Address | IPv6Address

METADATA = (IPv4Address("169.254.169.254"), IPv6Address("fd00:ec2::254"), IPv4Address("100.100.100.200"))

_V4_CLASSES: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), name)
    for net, name in (
        ("0.0.0.0/8", "unspecified"),
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("169.254.0.0/16", "link-local"),
        ("100.64.0.0/10", "carrier-grade-nat"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "documentation"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("198.18.0.0/15", "benchmarking"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
    )
)

_V6_CLASSES: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), name)
    for net, name in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private"),
        ("fc00::/7", "private"),
        ("ff00::/8", "multicast"),
        ("64:ff9b:1::/48", "private"),
        ("2001::/32", "tunnel"),
        ("2001:db8::/32", "documentation"),
        ("100::/64", "reserved"),
    )
)

_MAPPED = IPv6Network("::ffff:0:0/96")
_COMPATIBLE = IPv6Network("::/96")
_NAT64 = IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = IPv6Network("2002::/16")


def _ipv4_part(text: str) -> int | None:
    """One part of an ``inet_aton`` address: decimal, ``0x`` hex or ``0``-prefixed octal."""
    if not text:
        return None
    lowered = text.lower()
    try:
        if lowered.startswith("0x"):
            return int(lowered[2:] or "0", 16)
        if len(lowered) > 1 and lowered.startswith("0"):
            return int(lowered[1:], 8)
        return int(lowered, 10) if lowered.isdigit() else None
    except ValueError:
        return None


def _inet_aton(text: str) -> IPv4Address | None:
    """``a``, ``a.b``, ``a.b.c`` and ``a.b.c.d`` with the last part filling the remaining bytes."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values = [_ipv4_part(part) for part in parts]
    if any(value is None for value in values):
        return None
    numbers = [value for value in values if value is not None]
    head, last = numbers[:-1], numbers[-1]
    if any(value > 255 for value in head) or last >= 1 << (8 * (4 - len(head))):
        return None
    number = 0
    for value in head:
        number = number << 8 | value
    return IPv4Address(number << (8 * (4 - len(head))) | last)


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells, in any spelling a resolver accepts, or ``None`` for a name."""
    text = host.strip().rstrip(".")
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return IPv6Address(text.split("%", 1)[0])
        except ValueError:
            return None
    return _inet_aton(text)


def embedded_ipv4(address: IPv6Address) -> tuple[IPv4Address, str] | None:
    """The IPv4 address inside a mapped, compatible, NAT64 or 6to4 address, and which form it is."""
    if address in _MAPPED:
        return IPv4Address(int(address) & 0xFFFFFFFF), "ipv4-mapped"
    if address in _NAT64:
        return IPv4Address(int(address) & 0xFFFFFFFF), "nat64"
    if address in _SIX_TO_FOUR:
        return IPv4Address((int(address) >> 80) & 0xFFFFFFFF), "6to4"
    if address in _COMPATIBLE and int(address) > 1:
        return IPv4Address(int(address) & 0xFFFFFFFF), "ipv4-compatible"
    return None


def address_class(address: IPAddress) -> str | None:
    """Why ``address`` is not public (``loopback``, ``metadata``, ...); ``None`` when it is."""
    if address in METADATA:
        return "metadata"
    if isinstance(address, IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            v4, form = inner
            # a resolver never legitimately answers with these forms; NAT64 and 6to4 of a public
            # address are real deployments, so those are judged by the address inside
            if form in ("ipv4-mapped", "ipv4-compatible"):
                return form
            return address_class(v4)
        for net6, name in _V6_CLASSES:
            if address in net6:
                return name
    else:
        if address == IPv4Address("255.255.255.255"):
            return "broadcast"  # before 240.0.0.0/4, which holds it
        for net4, name in _V4_CLASSES:
            if address in net4:
                return name
    return None if address.is_global else "reserved"


def parse_address(text: str) -> IPAddress:
    """An address written in a configuration (``SKILLHOUSE_RESOLVE``): plain notation only."""
    return ipaddress.ip_address(text.strip().strip("[]"))
