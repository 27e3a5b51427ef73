"""``/v1/tokens``: a tenant lists, creates and revokes its own API tokens (an ``admin`` token's routes)."""

from __future__ import annotations

import datetime as dt

from fastapi import APIRouter
from pydantic import BaseModel, Field

from skillhouse.api.deps import AdminDep, SessionDep
from skillhouse.api.errors import error_responses
from skillhouse.registry.tokens import (
    DEFAULT_SCOPE,
    Scope,
    TokenInfo,
    create_token,
    list_tokens,
    revoke_token,
)

router = APIRouter(prefix="/v1/tokens", tags=["tokens"])


class TokenOut(BaseModel):
    """A token as listed; its secret is never shown again."""

    id: int
    tenant: str
    hint: str = Field(description="The first characters of the token.")
    label: str
    scope: Scope = Field(description="`run` (turns, calls, MCP), `approve` (and decide approvals) or `admin` (everything).")
    created_at: dt.datetime
    revoked_at: dt.datetime | None


class TokenCreate(BaseModel):
    label: str = Field(default="", max_length=200, description="What the token is for.")
    scope: Scope = Field(default=DEFAULT_SCOPE, description="What it may do; `run` unless asked (least privilege).")


class TokenCreated(TokenOut):
    token: str = Field(description="The secret (`skh_...`), shown only in this answer.")


class TokenList(BaseModel):
    data: list[TokenOut]


def _out(info: TokenInfo) -> TokenOut:
    return TokenOut(id=info.id, tenant=info.tenant, hint=info.hint, label=info.label, scope=info.scope,
                    created_at=info.created_at, revoked_at=info.revoked_at)


@router.get("", responses=error_responses())
def get_tokens(tenant: AdminDep, session: SessionDep) -> TokenList:
    """The calling tenant's tokens."""
    return TokenList(data=[_out(info) for info in list_tokens(session, tenant.id)])


@router.post("", status_code=201, responses=error_responses())
def post_token(body: TokenCreate, tenant: AdminDep, session: SessionDep) -> TokenCreated:
    """A new token for the calling tenant, of the scope asked for; the secret is in this answer only."""
    secret, info = create_token(session, tenant.id, body.label, body.scope)
    return TokenCreated(token=secret, **_out(info).model_dump())


@router.post("/{token_id}/revoke", responses=error_responses(404))
def post_revoke(token_id: int, tenant: AdminDep, session: SessionDep) -> TokenOut:
    """Revoke one of the calling tenant's tokens and end its console sessions (another tenant's answers 404)."""
    return _out(revoke_token(session, token_id, tenant.id))
