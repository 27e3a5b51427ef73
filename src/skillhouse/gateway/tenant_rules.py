"""A tenant's own egress rules as an admin reads and replaces them: its allow-list and its gates.

The pipeline reads both on every request (:mod:`skillhouse.gateway.stored_state`); these functions are
the writes, each replacing the whole list in one transaction, so a request sees the old list or the
new one, never half of each. They need no secret key, so the routes work before credentials are set up.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, select

from skillhouse.store.database import Database
from skillhouse.store.gateway_tables import AllowedHostRow, TenantGateRow


def allowed_hosts(database: Database, tenant: str) -> list[str]:
    """The tenant's allow-list, sorted."""
    with database.transaction() as session:
        rows = session.scalars(select(AllowedHostRow.host).where(AllowedHostRow.tenant_id == tenant)
                               .order_by(AllowedHostRow.host))
        return list(rows)


def replace_allowed_hosts(database: Database, tenant: str, hosts: Iterable[str]) -> list[str]:
    """Replace the tenant's allow-list with ``hosts`` (lowercased, each once); the list stored."""
    stored = sorted({host.lower() for host in hosts})
    with database.transaction() as session:
        session.execute(delete(AllowedHostRow).where(AllowedHostRow.tenant_id == tenant))
        session.add_all(AllowedHostRow(tenant_id=tenant, host=host) for host in stored)
    return stored


def tenant_gates(database: Database, tenant: str) -> list[tuple[str, str]]:
    """The tenant's gates as (``METHOD /path``, reason), sorted by what they match."""
    with database.transaction() as session:
        rows = session.scalars(select(TenantGateRow).where(TenantGateRow.tenant_id == tenant)
                               .order_by(TenantGateRow.matches))
        return [(row.matches, row.reason) for row in rows]


def replace_tenant_gates(database: Database, tenant: str, gates: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Replace the tenant's gates; a later gate with the same ``matches`` replaces an earlier one. The gates stored."""
    kept = dict(gates)
    with database.transaction() as session:
        session.execute(delete(TenantGateRow).where(TenantGateRow.tenant_id == tenant))
        session.add_all(TenantGateRow(tenant_id=tenant, matches=matches, reason=reason) for matches, reason in kept.items())
    return sorted(kept.items())
