"""The egress rule, case by case: every private spelling refused, public and listed hosts allowed."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address

import pytest

from skillhouse.gateway import addresses
from skillhouse.gateway.addresses import IPAddress, address_class, literal_address
from skillhouse.gateway.egress import EgressPolicy, decide_egress, parse_target
from skillhouse.gateway.errors import EgressRefused, GatewayError

PUBLIC = IPv4Address("93.184.216.34")

# host in the URL -> what the resolver answers for names (literals are never looked up)
NAMES: dict[str, list[IPAddress]] = {
    "api.example.com": [PUBLIC],
    "internal.example.com": [IPv4Address("10.1.2.3")],
    "split.example.com": [PUBLIC, IPv4Address("192.168.0.7")],
    "localhost": [IPv4Address("127.0.0.1"), IPv6Address("::1")],
    "metadata.example.com": [IPv4Address("169.254.169.254")],
    "v6only.example.com": [IPv6Address("2606:2800:220:1:248:1893:25c8:1946")],
    "mapped.example.com": [IPv6Address("::ffff:10.0.0.1")],
}

REFUSED = [
    "http://127.0.0.1/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://017700000001/",
    "http://127.0.0.1./",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://3232235777/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://169.254.1.1/",
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    "http://0.0.0.0/",
    "http://0/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://192.0.0.8/",
    "http://192.0.2.1/",
    "http://198.51.100.7/",
    "http://203.0.113.9/",
    "http://198.18.0.1/",
    "http://[::1]/",
    "http://[::]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:8.8.8.8]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://[ff02::1]/",
    "http://[fec0::1]/",
    "http://[64:ff9b:1::1]/",
    "http://[2001::1]/",
    "http://[2001:db8::1]/",
    "http://[100::1]/",
    "http://internal.example.com/",
    "http://split.example.com/",
    "http://localhost/",
    "http://metadata.example.com/",
    "http://mapped.example.com/",
    "http://not-listed.example.org/",
    "ftp://api.example.com/",
    "file:///etc/passwd",
]

ALLOWED = [
    ("http://api.example.com/things", PUBLIC),
    ("https://api.example.com:8443/x?y=1", PUBLIC),
    ("http://93.184.216.34/", PUBLIC),
    ("http://1572395042/", PUBLIC),
    ("http://v6only.example.com/", IPv6Address("2606:2800:220:1:248:1893:25c8:1946")),
    ("http://[64:ff9b::5db8:d822]/", IPv6Address("64:ff9b::5db8:d822")),
    ("http://[2606:4700::1111]/", IPv6Address("2606:4700::1111")),
]


def resolver(host: str, port: int) -> list[IPAddress]:
    return NAMES.get(host, [])


def _allow_everything_named(url: str) -> EgressPolicy:
    # every case host is on the allow-list, so what is refused is refused for its address
    target = parse_target(url)
    return EgressPolicy(frozenset({target.host, "api.example.com"}) - {"not-listed.example.org"})


def _refused_classes() -> set[str | None]:
    classes: set[str | None] = set()
    for url in REFUSED:
        try:
            host = parse_target(url).host
        except EgressRefused:
            continue  # a scheme the rule refuses before any address
        literal = literal_address(host)
        classes.update(address_class(a) for a in ([literal] if literal is not None else NAMES.get(host, [])))
    return classes


def test_the_refused_cases_reach_every_class_of_address_the_rule_names() -> None:
    # the classes read from the rule's own tables: a class added there without a case here fails
    named = {name for _, name in addresses._V4_CLASSES + addresses._V6_CLASSES}
    named |= {"metadata", "broadcast", "ipv4-mapped", "ipv4-compatible"}
    assert sorted(named - _refused_classes(), key=str) == []


@pytest.mark.parametrize("url", REFUSED)
def test_a_private_or_unlisted_destination_is_refused(url: str) -> None:
    with pytest.raises(EgressRefused) as caught:
        target = parse_target(url)
        decide_egress(target, _allow_everything_named(url), {}, resolver)
    assert caught.value.code == "egress-refused"


@pytest.mark.parametrize(("url", "address"), ALLOWED)
def test_a_listed_public_destination_is_allowed_with_its_checked_address(url: str, address: IPAddress) -> None:
    target = parse_target(url)
    decision = decide_egress(target, EgressPolicy(frozenset({target.host})), {}, resolver)
    assert decision.address == address
    assert decision.port == target.port


def test_a_host_listed_for_private_access_may_reach_its_private_address() -> None:
    target = parse_target("http://internal.example.com/")
    policy = EgressPolicy(frozenset({"internal.example.com"}), private=frozenset({"internal.example.com"}))
    assert decide_egress(target, policy, {}, resolver).address == IPv4Address("10.1.2.3")


def test_a_fixed_mapping_names_the_address_and_port_without_a_lookup() -> None:
    target = parse_target("http://hollowbrook.local:8084/bookings")
    fixed = {("hollowbrook.local", 8084): "127.0.0.1:40001"}

    def no_lookup(host: str, port: int) -> list[IPAddress]:
        raise AssertionError("a fixed mapping must not be looked up")

    decision = decide_egress(target, EgressPolicy.of(["hollowbrook.local:8084"], []), fixed, no_lookup)
    assert (decision.address, decision.port, decision.fixed) == (IPv4Address("127.0.0.1"), 40001, True)


def test_a_fixed_mapping_opens_only_the_name_it_maps() -> None:
    target = parse_target("http://127.0.0.1:8084/bookings")
    fixed = {("hollowbrook.local", 8084): "127.0.0.1"}
    with pytest.raises(EgressRefused):
        decide_egress(target, EgressPolicy(frozenset({"127.0.0.1"})), fixed, resolver)


def test_an_allow_list_entry_with_a_port_allows_only_that_port() -> None:
    policy = EgressPolicy(frozenset({"api.example.com:443"}))
    decide_egress(parse_target("https://api.example.com/"), policy, {}, resolver)
    with pytest.raises(EgressRefused):
        decide_egress(parse_target("http://api.example.com:8080/"), policy, {}, resolver)


@pytest.mark.parametrize("url", ["http://user:pw@api.example.com/", "http://[::1/", "http:///nohost"])
def test_a_malformed_url_is_refused_with_a_code(url: str) -> None:
    with pytest.raises(GatewayError) as caught:
        parse_target(url)
    assert caught.value.code in ("invalid-request", "egress-refused")


@pytest.mark.parametrize(
    ("spelling", "address"),
    [("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("0177.0.1", "127.0.0.1"), ("10.0x10.0", "10.16.0.0")],
)
def test_ipv4_spellings_are_read_as_a_resolver_reads_them(spelling: str, address: str) -> None:
    assert literal_address(spelling) == IPv4Address(address)


def test_public_addresses_have_no_class_and_metadata_is_named() -> None:
    assert address_class(PUBLIC) is None
    assert address_class(IPv4Address("169.254.169.254")) == "metadata"
    assert address_class(IPv6Address("fd00:ec2::254")) == "metadata"
    assert address_class(IPv4Address("100.64.1.1")) == "carrier-grade-nat"
    assert address_class(IPv4Address("255.255.255.255")) == "broadcast"
    assert address_class(IPv4Address("255.255.255.254")) == "reserved"
