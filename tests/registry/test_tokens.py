"""API tokens: shown once, stored hashed, recognisable, revocable."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from skillhouse.registry.errors import Invalid
from skillhouse.registry.tokens import (
    SCOPES,
    Tenant,
    TokenRejected,
    authenticate,
    create_token,
    hash_token,
    revoke_token,
    scope_allows,
)
from skillhouse.store import Database
from skillhouse.store.registry_tables import TokenRow


def test_a_token_is_prefixed_and_only_its_hash_is_stored(database: Database) -> None:
    with database.transaction() as session:
        secret, info = create_token(session, "acme", "ci")
        stored = session.scalars(select(TokenRow)).one()
    assert secret.startswith("skh_") and len(secret) == 47
    assert stored.token_hash == hash_token(secret) and secret not in (stored.token_hash, stored.hint)
    assert info.tenant == "acme"


def test_a_token_authenticates_its_tenant_until_revoked(database: Database) -> None:
    with database.transaction() as session:
        secret, info = create_token(session, "acme")
        assert authenticate(session, secret).id == "acme"
        revoke_token(session, info.id)
        with pytest.raises(TokenRejected) as rejected:
            authenticate(session, secret)
    assert rejected.value.code == "revoked-token"


@pytest.mark.parametrize(("secret", "code"), [
    ("skh_short", "malformed-token"),
    ("ghp_" + "a" * 43, "malformed-token"),
    ("skh_" + "a" * 43, "unknown-token"),
])
def test_malformed_and_unknown_tokens_are_told_apart(database: Database, secret: str, code: str) -> None:
    with database.transaction() as session, pytest.raises(TokenRejected) as rejected:
        authenticate(session, secret)
    assert rejected.value.code == code


@pytest.mark.parametrize("tenant", ["", "Acme", "builtin", "a b", "x" * 65])
def test_a_tenant_name_outside_the_rules_is_refused(database: Database, tenant: str) -> None:
    with database.transaction() as session, pytest.raises(Invalid) as refused:
        create_token(session, tenant)
    assert refused.value.code == "invalid-tenant"


def test_a_token_is_run_unless_asked_and_authenticates_with_its_scope(database: Database) -> None:
    with database.transaction() as session:
        plain, plain_info = create_token(session, "acme")
        admin, admin_info = create_token(session, "acme", scope="admin")
        assert (plain_info.scope, admin_info.scope) == ("run", "admin")
        assert authenticate(session, plain) == Tenant("acme", "run", plain_info.id)
        assert authenticate(session, admin) == Tenant("acme", "admin", admin_info.id)


def test_an_unknown_scope_is_refused(database: Database) -> None:
    with database.transaction() as session, pytest.raises(Invalid) as refused:
        create_token(session, "acme", scope="superuser")
    assert refused.value.code == "invalid-scope"


@pytest.mark.parametrize(("held", "allowed"), [("run", {"run"}), ("approve", {"run", "approve"}),
                                               ("admin", {"run", "approve", "admin"}), ("root", set())])
def test_scopes_nest(held: str, allowed: set[str]) -> None:
    assert {needed for needed in SCOPES if scope_allows(held, needed)} == allowed
