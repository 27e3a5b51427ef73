"""One request of the HTTP API and what its answer means, without I/O: the sync and async clients share it.

An :class:`Exchange` says what to send and how to read the answer. :func:`conversation` is the whole
life of one exchange as a generator: it yields a :class:`Send` or a :class:`Wait` (seconds), is handed
back the response or the transport error, and returns the parsed answer or raises the error tree's class
for it; :func:`steps` chains the exchanges of an operation's :data:`Plan`. :class:`~skillhouse.client.Client`
and :class:`~skillhouse.client.AsyncClient` only carry the steps out: one with ``httpx.Client.send`` and
``time.sleep``, the other with their awaitable twins.

When to send again (:class:`Retries`): a connection that was never made (nothing left; any request), and
a signal to come back (503 ``guest-building`` and 429 ``rate-limited`` with ``Retry-After``, or a tool
call's ``rate-limited`` answer with ``retry_after``: nothing was sent) for an
exchange that may be repeated: an idempotent method (GET, PUT, DELETE), or a POST the API answers the
same way twice (publish) or that the caller marks ``replayable`` (a tool call whose operation declares an
``identity``, so the gateway answers a repeat from its idempotency key). A POST without either is never
sent twice: a lost answer is raised as :class:`~skillhouse.client.errors.ServerUnreachable` with
``sent`` true.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from skillhouse.client.errors import (
    ClientError,
    GuestBuilding,
    RateLimited,
    ServerFailure,
    ServerUnreachable,
    error_for,
)
from skillhouse.json_types import JsonObject
from skillhouse.wire.errors import ErrorBody

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport errors raised before any byte of the request left: sending again is always safe."""


@dataclass(frozen=True)
class Retries:
    """How often and how long the client comes back (see the module's docstring for when)."""

    attempts: int = 4
    """Sends at most, the first included; 1 (or less) never sends again."""
    max_wait: float = 30.0
    """The longest ``Retry-After`` waited out; a longer one is raised as its signal at once."""
    connect_backoff: float = 0.25
    """The wait after a failed connection, doubled each time."""


@dataclass(frozen=True)
class Exchange(Generic[T]):
    """One request of the API: what to send, and how its successful answer becomes ``T``."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    json: BaseModel | None = None
    params: dict[str, str] = field(default_factory=dict)
    replayable: bool = False
    """A POST that may be sent twice with the same effect (idempotent methods always may)."""

    @property
    def repeatable(self) -> bool:
        return self.replayable or self.method in IDEMPOTENT

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        body = None if self.json is None else self.json.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return http.build_request(self.method, self.path, json=body, params=self.params or None)


@dataclass(frozen=True)
class Send:
    """Send the exchange's request (built by the driver's httpx client, with its base URL and token)."""

    exchange: Exchange[Any]


@dataclass(frozen=True)
class Wait:
    seconds: float


Step = Send | Wait
Outcome = httpx.Response | httpx.TransportError | None
"""What the driver hands back: the response to a :class:`Send`, or the transport error it raised; ``None``
after a :class:`Wait`."""

Plan = Generator["Exchange[Any]", Any, T]
"""An operation: yields the exchanges to run, is sent each one's answer, returns the operation's result."""


def steps(plan: Plan[T], retries: Retries) -> Generator[Step, Outcome, T]:
    """The steps of every exchange ``plan`` runs, one after the other; returns what the plan returns."""
    answer: Any = None
    while True:
        try:
            exchange = plan.send(answer)
        except StopIteration as done:
            result: T = done.value
            return result
        answer = yield from conversation(exchange, retries)


def conversation(exchange: Exchange[T], retries: Retries) -> Generator[Step, Outcome, T]:
    """The life of ``exchange``: yields what to do, is sent the response (or the transport error)."""
    for attempt in range(1, max(retries.attempts, 1) + 1):
        last = attempt >= retries.attempts
        outcome = yield Send(exchange)
        if isinstance(outcome, httpx.TransportError):
            sent = not isinstance(outcome, NOT_SENT)
            if last or (sent and not exchange.repeatable):
                raise ServerUnreachable(f"{exchange.method} {exchange.path}: no answer from the server ({outcome!r})",
                                        details={"sent": sent}) from outcome
            yield Wait(retries.connect_backoff * 2 ** (attempt - 1))
            continue
        assert outcome is not None
        if not outcome.is_success:
            refusal = answer_error(outcome)
        else:
            try:
                return exchange.read(outcome)
            except ClientError as error:  # a tool call's own answer: a refusal, or a signal to come back
                refusal = error
            except ValidationError as error:
                raise ServerFailure(f"{exchange.method} {exchange.path}: the answer is not the body this client "
                                    f"reads ({error.error_count()} problem(s)); is the server another version?",
                                    code="unexpected-answer", status=outcome.status_code) from error
        wait = _come_back_after(refusal)
        if wait is None or last or not exchange.repeatable or wait > retries.max_wait:
            raise refusal
        yield Wait(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _come_back_after(error: ClientError) -> float | None:
    if isinstance(error, GuestBuilding | RateLimited) and "retry_after" in error.details:
        return error.retry_after
    return None


def answer_error(response: httpx.Response) -> ClientError:
    """The error tree's exception for an error answer (any status but 2xx)."""
    try:
        body = ErrorBody.model_validate_json(response.content)
    except ValidationError:
        text = response.text[:200] or response.reason_phrase
        return error_for({"code": "http-error", "message": f"HTTP {response.status_code}: {text}"},
                         response.status_code)
    error: JsonObject = body.error.model_dump(exclude={"problems"})
    retry_after = response.headers.get("retry-after", "")
    if retry_after.isdigit():
        error["retry_after"] = int(retry_after)
    return error_for(error, response.status_code, body.error.problems)


def connection(base_url: str, token: str, timeout: float) -> dict[str, Any]:
    """The ``httpx.Client`` (or ``AsyncClient``) options of a client of ``base_url`` with ``token``."""
    return {"base_url": base_url.rstrip("/"), "timeout": timeout, "follow_redirects": False,
            "headers": {"Authorization": f"Bearer {token}", "User-Agent": "skillhouse-client"}}


def model(kind: type[M]) -> Callable[[httpx.Response], M]:
    """Read an answer as ``kind``, the server's own body model."""
    return lambda response: kind.model_validate_json(response.content)


def nothing(_response: httpx.Response) -> None:
    return None
