"""One tool call of a bound turn: the guest validates and translates it, the gateway decides and sends.

:func:`run_call` is what ``POST /v1/turns/{id}/calls`` and ``/api/runtime/tools/execute`` run (and
what any other front end of a stored turn may run): a fresh guest of the chosen runner kind over a
:class:`~skillhouse.host.turn.TurnHost` whose ``fetch_url`` is the gateway, for the turn's tenant
and id and the release documents it bound. The answer is exactly the guest's JSON answer: the
response (``replayed`` when the gateway answered from an idempotency key), a refusal of the
arguments, or the gateway's refusal or signal (``approval-required`` with its id, ``approval-denied``).

Front ends that hand the answer to a model (the MCP server) show it through :func:`model_result`: the
JSON body parsed, transport headers left out; the API answers the exact answer.

A call runs in a warm guest from :data:`RUNNER_POOL` (see :mod:`skillhouse.host.runner_pool`),
checked out by that call alone, so concurrent calls of one turn never share a guest; everything that
must agree between concurrent calls (idempotency keys, approvals) is the gateway's, in the store.
An agent turn (:func:`run_agent`) gets a guest of its own, as its offered tools are its conversation's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from skillhouse.errors import Unavailable
from skillhouse.gateway import BoundReleases, Gateway, TurnContext
from skillhouse.guest import model_result
from skillhouse.host.runner import GuestRunner, make_runner
from skillhouse.host.runner_pool import RunnerPool
from skillhouse.host.turn import TurnHost
from skillhouse.json_types import JsonObject, ModelAnswer, ModelRequest, ReleaseDocument, ToolAnswer
from skillhouse.telemetry import annotate, span, tracing


class GuestUnavailable(Unavailable):
    """The guest runner of the requested kind cannot start here (``guest-unavailable``): an unknown kind, or a
    wasm component that cannot be built or loaded. Nothing ran; an operator fixes the deployment's guest."""

    code = "guest-unavailable"

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"the {kind} guest runner cannot start: {reason}")
        self.kind = kind


def _runner(host: TurnHost, guest: str) -> GuestRunner:
    try:
        return make_runner(host, guest)
    except Exception as exc:  # an unknown kind, or a wasm component that cannot be built or loaded
        raise GuestUnavailable(guest, str(exc)) from None


__all__ = ["RUNNER_POOL", "GuestUnavailable", "model_result", "run_agent", "run_call"]

RUNNER_POOL = RunnerPool(_runner)
"""The warm guests :func:`run_call` runs in, shared by every front end in this process."""


def run_agent(
    gateway: Gateway,
    tenant: str,
    turn_id: str,
    releases: Sequence[ReleaseDocument],
    request: JsonObject,
    complete: Callable[[ModelRequest], ModelAnswer],
    guest: str = "inprocess",
    make: Callable[[TurnHost], GuestRunner] | None = None,
    subject: str | None = None,
) -> JsonObject:
    """Run the agent loop of turn ``turn_id``: ``request`` (``prompt`` or ``messages``, ``max_steps``)
    goes to the model behind ``complete``, whose tool calls run through the guest and the gateway
    exactly as :func:`run_call` runs one; the guest's transcript and final answer.

    ``make`` makes the guest (a server's :meth:`~skillhouse.host.guest_state.GuestState.make_runner`);
    without it, one of kind ``guest``. ``subject`` is the end user the turn acts for (their OAuth connections)."""
    context = TurnContext(tenant, turn_id, BoundReleases(releases), subject=subject)
    host = TurnHost(releases, fetch=lambda r: gateway.fetch(context, r), complete=complete)
    with span("skillhouse.turn", tenant=tenant, turn_id=turn_id):
        runner = _runner(host, guest) if make is None else make(host)
        try:
            transcript: JsonObject = json.loads(runner.run_turn(json.dumps(dict(request), ensure_ascii=False)))
        finally:
            close = getattr(runner, "close", None)
            if close is not None:
                close()
    return transcript


def run_call(
    gateway: Gateway,
    tenant: str,
    turn_id: str | None,
    releases: Sequence[ReleaseDocument],
    tool: str,
    arguments: JsonObject,
    guest: str = "inprocess",
    pool: RunnerPool | None = None,
    credential_headers: frozenset[str] | None = None,
    subject: str | None = None,
) -> ToolAnswer:
    """Run ``tool`` with ``arguments`` in turn ``turn_id`` of ``tenant``; the guest's JSON answer.

    ``turn_id`` is ``None`` for a call outside a recorded turn (the runtime contract's ``tools/execute``).
    The guest comes from ``pool`` (:data:`RUNNER_POOL` when ``None``). ``credential_headers`` limits
    which of the host's credential bindings the gateway injects (the runtime contract's ``secrets_ref``).
    ``subject`` is the end user the turn acts for: calls to an ``oauth2-authorization-code`` binding use
    their connection (``connection-required`` without one).
    """
    context = TurnContext(tenant, turn_id, BoundReleases(releases), credential_headers, subject)
    pool = RUNNER_POOL if pool is None else pool
    skills = versions = None
    if tracing():
        skills = ",".join(sorted({str(release.get("skill", "")) for release in releases}))
        versions = ",".join(sorted({str(release.get("version", "")) for release in releases}))
    with span("skillhouse.tool_call", tenant=tenant, turn_id=turn_id, tool=tool, skill=skills, version=versions,
              guest=guest) as current:
        with pool.checkout(guest, tenant, releases, fetch=lambda request: gateway.fetch(context, request)) as runner, \
                span("skillhouse.guest", guest=guest):
            answer: ToolAnswer = json.loads(runner.call_tool(tool, json.dumps(dict(arguments), ensure_ascii=False)))
        if current is not None:
            error = answer.get("error")
            annotate(current, code=str(error.get("code")) if isinstance(error, dict) else None,
                     replayed=bool(answer.get("replayed")))
    return answer
