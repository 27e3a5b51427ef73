"""Private hosts and name mappings scoped to a tenant: one tenant's private host is not another's.

Tenant ``acme`` may reach ``vault.internal:8200`` (mapped to a loopback upstream) and the loopback
address itself; tenant ``rival`` publishes a skill naming the same host and the same address, and its
requests are refused with ``egress-refused`` whether the name does not resolve for it or an internal
DNS answers with the private address. The gateway is built from environment-style settings, the
way a deployment builds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Address
from typing import Any

import pytest
from sqlalchemy import select
from tests.conftest import PackageFactory
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, TurnContext
from skillhouse.gateway.addresses import IPAddress
from skillhouse.gateway.deployment import gateway_config, make_gateway
from skillhouse.settings import Settings
from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AuditRow

OWNER, RIVAL = "acme", "rival"
VAULT = "vault.internal:8200"


def _release(make_package: PackageFactory, url: str, name: str) -> dict[str, Any]:
    package = make_package({"read.md": f"""\
        ---
        operation:
          method: GET
          url: {url}
        ---
        Read a secret.
        """}, name=name)
    compiled, errors = compile_dir(package)
    assert compiled is not None, errors
    return compiled.document


def _settings(upstream: Upstream) -> Settings:
    return Settings.from_env({
        "SKILLHOUSE_RESOLVE": f"{OWNER}/{VAULT}=127.0.0.1:{upstream.port}",
        "SKILLHOUSE_PRIVATE_HOSTS": f"{OWNER}/127.0.0.1:{upstream.port}",
    })


def _read(gateway: Gateway, tenant: str, release: dict[str, Any], url: str) -> dict[str, Any]:
    turn = TurnContext(tenant, f"turn-{tenant}", BoundReleases([release]))
    return fetch_json(gateway, turn, {"method": "GET", "url": url, "headers": {}, "body": None})


def _internal_dns(host: str, port: int) -> list[IPAddress]:
    # a resolver that knows the internal name, as a company's DNS would
    return [IPv4Address("127.0.0.1")] if host == "vault.internal" else []


@pytest.fixture
def gateway(database: Database, upstream: Upstream) -> Iterator[Gateway]:
    built = make_gateway(_settings(upstream), database)
    yield built
    built.close()


def test_the_owner_reaches_its_private_host_by_its_mapping(gateway: Gateway, upstream: Upstream,
                                                            make_package: PackageFactory) -> None:
    url = f"http://{VAULT}/secret"
    answer = _read(gateway, OWNER, _release(make_package, url, "vault"), url)
    assert answer["status"] == 200, answer
    assert [seen["path"] for seen in upstream.recorder.requests] == ["/secret"]


def test_another_tenants_skill_naming_the_private_host_is_refused(gateway: Gateway, upstream: Upstream,
                                                                  make_package: PackageFactory,
                                                                  database: Database) -> None:
    url = f"http://{VAULT}/secret"
    answer = _read(gateway, RIVAL, _release(make_package, url, "vault"), url)
    assert answer["error"]["code"] == "egress-refused", answer
    assert upstream.recorder.requests == []
    with database.sessions() as session:
        decisions = [(row.tenant_id, row.decision) for row in session.scalars(select(AuditRow))]
    assert decisions == [(RIVAL, "refused")]


def test_another_tenant_is_refused_even_when_internal_dns_knows_the_name(database: Database, upstream: Upstream,
                                                                        make_package: PackageFactory) -> None:
    gateway = Gateway(database, gateway_config(_settings(upstream)), resolver=_internal_dns)
    try:
        url = f"http://{VAULT}/secret"
        release = _release(make_package, url, "vault")
        refused = _read(gateway, RIVAL, release, url)
        assert refused["error"]["code"] == "egress-refused", refused
        assert refused["error"]["reason"] == "loopback"
        assert _read(gateway, OWNER, release, url)["status"] == 200
        assert len(upstream.recorder.requests) == 1
    finally:
        gateway.close()


def test_a_private_address_open_to_one_tenant_is_closed_to_another(gateway: Gateway, upstream: Upstream,
                                                                   make_package: PackageFactory) -> None:
    url = f"http://127.0.0.1:{upstream.port}/secret"
    release = _release(make_package, url, "direct")
    refused = _read(gateway, RIVAL, release, url)
    assert refused["error"]["code"] == "egress-refused", refused
    assert upstream.recorder.requests == []
    assert _read(gateway, OWNER, release, url)["status"] == 200


def test_deployment_wide_entries_still_apply_to_every_tenant(database: Database, upstream: Upstream,
                                                             make_package: PackageFactory) -> None:
    settings = Settings.from_env({"SKILLHOUSE_RESOLVE": f"{VAULT}=127.0.0.1:{upstream.port},"
                                                        f"{OWNER}/other.internal:80=127.0.0.1:{upstream.port}"})
    gateway = make_gateway(settings, database)
    try:
        url = f"http://{VAULT}/secret"
        release = _release(make_package, url, "vault")
        assert _read(gateway, OWNER, release, url)["status"] == 200
        assert _read(gateway, RIVAL, release, url)["status"] == 200
    finally:
        gateway.close()


def test_scoped_entries_are_read_from_the_environment() -> None:
    settings = Settings.from_env({
        "SKILLHOUSE_RESOLVE": "hollowbrook.local:8084=127.0.0.1, acme/Vault.Internal:8200=10.0.0.5",
        "SKILLHOUSE_PRIVATE_HOSTS": "db.internal, acme/vault.internal:8200, globex/10.1.2.3",
    })
    assert settings.resolve == {("hollowbrook.local", 8084): "127.0.0.1"}
    assert settings.tenant_resolve == {"acme": {("vault.internal", 8200): "10.0.0.5"}}
    assert settings.private_hosts == frozenset({"db.internal"})
    assert settings.tenant_private_hosts == {"acme": frozenset({"vault.internal:8200"}),
                                             "globex": frozenset({"10.1.2.3"})}
    private, names = gateway_config(settings).private_reach("acme")
    assert private == {"db.internal", "vault.internal:8200"}
    assert names == {("hollowbrook.local", 8084): "127.0.0.1", ("vault.internal", 8200): "10.0.0.5"}
    assert gateway_config(settings).private_reach("rival") == ({"db.internal"}, {("hollowbrook.local", 8084): "127.0.0.1"})


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("SKILLHOUSE_RESOLVE", "Acme/vault.internal:8200=10.0.0.5", "tenant id"),
    ("SKILLHOUSE_RESOLVE", "/vault.internal:8200=10.0.0.5", "tenant id"),
    ("SKILLHOUSE_RESOLVE", "acme/=10.0.0.5", "tenant id"),
    ("SKILLHOUSE_RESOLVE", "acme/vault.internal=10.0.0.5", "[tenant/]host:port=address"),
    ("SKILLHOUSE_RESOLVE", "vault.internal:8200=10.0.0.5,acme/vault.internal:8200=10.0.0.6", "both for every tenant"),
    ("SKILLHOUSE_PRIVATE_HOSTS", "a b/vault.internal", "tenant id"),
    ("SKILLHOUSE_PRIVATE_HOSTS", "acme/", "tenant id"),
])
def test_a_badly_scoped_entry_is_refused_with_what_to_write(variable: str, value: str, says: str) -> None:
    with pytest.raises(ValueError, match="SKILLHOUSE_") as refused:
        Settings.from_env({variable: value})
    assert says in str(refused.value)
