"""A typed Python client of skillhouse's HTTP API: :class:`Client` (httpx, blocking) and :class:`AsyncClient`.

::

    from skillhouse.client import ApprovalRequired, Client

    with Client("http://127.0.0.1:8000", token) as client:
        client.publish("examples/hollowbrook")
        turn = client.bind(["hollowbrook@1.0.0"])
        try:
            client.call(turn.id, "hollowbrook_create_charge", {...})
        except ApprovalRequired as held:
            client.approve(held.approval_id)

The answers are the server's own body models (:mod:`skillhouse.wire`); errors are the error tree's
classes by their code (:mod:`skillhouse.client.errors`); a request is sent again only where that is safe
(:mod:`skillhouse.client.exchange`). Importing it loads neither FastAPI nor SQLAlchemy.
"""

from skillhouse.client.asynchronous import AsyncClient
from skillhouse.client.errors import (
    ApprovalRequired,
    ClientError,
    Conflict,
    ConnectionRequired,
    GuestBuilding,
    InvalidArguments,
    NotFound,
    RateLimited,
    RequestRefused,
    ScopeRefused,
    ServerFailure,
    ServerUnreachable,
    ServiceUnavailable,
    TokenRefused,
    UpstreamFailed,
)
from skillhouse.client.exchange import Retries
from skillhouse.client.sync import Client
from skillhouse.client.tools import OfferedTool, model_answer, offered_tools

__all__ = [
    "ApprovalRequired",
    "AsyncClient",
    "Client",
    "ClientError",
    "Conflict",
    "ConnectionRequired",
    "GuestBuilding",
    "InvalidArguments",
    "NotFound",
    "OfferedTool",
    "RateLimited",
    "RequestRefused",
    "Retries",
    "ScopeRefused",
    "ServerFailure",
    "ServerUnreachable",
    "ServiceUnavailable",
    "TokenRefused",
    "UpstreamFailed",
    "model_answer",
    "offered_tools",
]
