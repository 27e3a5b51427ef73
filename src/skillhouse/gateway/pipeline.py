"""The gateway's decision pipeline: one request from a turn's guest, in the order the design gives.

1. read the request into its canonical form (``gateway/canonical.py``; what cannot be read one way
only is refused here, before anything is read from the store or claimed); 2. the egress rule (resolve
once, check, keep the address); 3. match it to a bound operation; 4. find its credentials; 5. a
completed idempotency key answers at once; 6. an approval gate holds it unless an approval for exactly
this request is used now; 6a. the tenant's rate limits and the waits upstreams asked for admit it
(``gateway/limits.py``; a limited call gives back the approval it used and claims nothing); 7. claim the idempotency key; 8. send to the checked address with
credentials and ``Idempotency-Key`` injected; 9. redact the answer, store it under the key, audit the
decision. Every step reads the canonical request, and the upstream receives exactly its bytes (its
request target is sent verbatim). :meth:`Gateway.fetch` takes the request the host read from the guest's
JSON and answers a typed answer (``gateway/exchange.py``), never raising for a refusal: every refusal is a
:class:`~skillhouse.gateway.exchange.FetchRefusal` with a stable code.

Commits per request, fewest that keep every guarantee: one autocommit read of all the stored state a
decision needs (tenant allow-list and gates, credentials, the key's row, whether a rate limit may apply:
``gateway/stored_state.py``); when one may, the admission (``gateway/limits.py``);
the claim, which also opens the request's audit row, committed durably before anything is sent; and
the completion, which stores the response and finishes the audit row together (``gateway/key_audit.py``).
The read is one statement on both stores; on PostgreSQL the claim and the completion are too, one round
trip each, and a request with a key to its operation's own host and no gate of its turn's makes the
read and the claim one: its egress rule, which reads nothing stored for that host, is decided first, and
the read claims the key only where nothing it reads could hold the request or change its commitment
(``gateway/stored_state.py``); otherwise the steps run as above. A request without a key writes its
audit row once, after it is decided.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skillhouse.gateway.approvals import ApprovalStore
from skillhouse.gateway.audit import AuditEntry, AuditLog, finishing, opening
from skillhouse.gateway.canonical import CanonicalRequest, canonical_request
from skillhouse.gateway.commitment import commitment, idempotency_key, identity_values
from skillhouse.gateway.connections import ConnectionBroker
from skillhouse.gateway.credentials import CredentialStore, Injection
from skillhouse.gateway.egress import (
    EgressDecision,
    EgressPolicy,
    Resolver,
    Target,
    decide_egress,
    system_resolver,
)
from skillhouse.gateway.errors import (
    ApprovalRequired,
    GatewayError,
    GatewayFault,
    InvalidRequest,
    RateLimited,
    UpstreamFailed,
    UpstreamUnresolved,
)
from skillhouse.gateway.exchange import (
    METHODS,
    FetchAnswer,
    FetchRefusal,
    FetchRequest,
    FetchResponse,
    UnreadRequest,
    refusal,
    replayed,
)
from skillhouse.gateway.idempotency import Claimed, IdempotencyStore, KeyPolicy, Replay
from skillhouse.gateway.key_audit import claim_binds
from skillhouse.gateway.key_review import KeyReview
from skillhouse.gateway.limits import LEASE_MARGIN_SECONDS, Admission, RateLimits
from skillhouse.gateway.matching import BoundReleases, Match
from skillhouse.gateway.oauth import TokenBroker
from skillhouse.gateway.oauth_client import ClientCredentials
from skillhouse.gateway.redaction import Redactor
from skillhouse.gateway.stored_state import StoredState, StoredStateReader
from skillhouse.gateway.tenant_slots import TenantSlots
from skillhouse.gateway.upstream import (
    MaybeSent,
    NotSent,
    TransportFactory,
    UpstreamClient,
    UpstreamResponse,
    Withheld,
    failure_details,
)
from skillhouse.json_types import JsonObject
from skillhouse.store.database import Database
from skillhouse.telemetry import annotate, inject_traceparent, span

log = logging.getLogger("skillhouse.gateway")

_NOT_RETURNED = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"})
_REFUSED = frozenset({"egress-refused", "approval-denied", "rate-limited", "invalid-request", "duplicate-header", "duplicate-json-key"})


@dataclass(frozen=True)
class GatewayConfig:
    """Deployment settings: fixed resolution, hosts open to private addresses, key and approval timing."""

    resolve: Mapping[tuple[str, int], str] = field(default_factory=dict)
    private_hosts: frozenset[str] = frozenset()
    tenant_resolve: Mapping[str, Mapping[tuple[str, int], str]] = field(default_factory=dict)
    """Fixed resolution for one tenant's requests only, on top of ``resolve``."""
    tenant_private_hosts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Hosts open to private addresses for one tenant's requests only, on top of ``private_hosts``."""
    keys: KeyPolicy = field(default_factory=KeyPolicy)
    approval_ttl_seconds: float = 24 * 3600.0
    tenant_calls: int = 16
    """Upstream calls one tenant may have in flight at once in this process (``gateway/tenant_slots.py``)."""
    tenant_wait_seconds: float = 2.0
    """How long a call waits for one of its tenant's slots before ``tenant-busy``."""

    def private_reach(self, tenant: str) -> tuple[frozenset[str], Mapping[tuple[str, int], str]]:
        """For ``tenant``'s requests: the hosts open to private addresses and the fixed resolution, the
        deployment's entries plus the tenant's own (never another tenant's)."""
        hosts, names = self.tenant_private_hosts.get(tenant), self.tenant_resolve.get(tenant)
        return (self.private_hosts | hosts if hosts else self.private_hosts,
                {**self.resolve, **names} if names else self.resolve)


@dataclass(frozen=True)
class TurnContext:
    """What the gateway knows of the turn a request comes from (never what the guest claims)."""

    tenant: str
    turn_id: str | None
    releases: BoundReleases
    credential_headers: frozenset[str] | None = None
    """Inject only the host's bindings for these (lower-case) headers; ``None``: every binding of the host.
    The runtime contract's ``secrets_ref`` names one. Every bound secret is still redacted from answers."""
    subject: str | None = None
    """The end user the turn acts for, given when it was bound: an ``oauth2-authorization-code`` binding
    sends this person's connection's token (``gateway/connections.py``); ``None``: nobody in particular."""


@dataclass
class _Call:
    """The request being decided, and what has been learned about it so far."""

    request: CanonicalRequest
    target: Target
    audit: AuditEntry
    decision: EgressDecision | None = None
    match: Match | None = None
    matched: Match | None = None
    """The operation the request is, found when it is read (a raw ``;`` is refused there unless it matches)."""
    audit_row: int | None = None
    """The audit row opened with the idempotency claim, finished when the request ends."""
    admission: Admission | None = None
    """The leases concurrent-call limits counted this call by, given back when it ends however it ends."""
    committed: str | None = None
    """The commitment of the request with no header left out, when it was needed before the read (the read
    that claims, ``_stored``); the commitment whenever no injected header is one the request carries."""


class Gateway:
    def __init__(
        self,
        database: Database,
        config: GatewayConfig | None = None,
        secret_key: str | None = None,
        upstream: UpstreamClient | None = None,
        resolver: Resolver = system_resolver,
        token_transport: TransportFactory | None = None,
    ) -> None:
        self.database = database
        self.config = config or GatewayConfig()
        self.credentials = CredentialStore(database, secret_key)
        self.tokens = TokenBroker(database, self.credentials, self.config.private_reach, resolver, token_transport)
        self.connections = ConnectionBroker(database, self.credentials, self.tokens)
        self.approvals = ApprovalStore(database, self.config.approval_ttl_seconds)
        self.keys = IdempotencyStore(database, self.config.keys)
        self.audit = AuditLog(database)
        self.upstream = upstream or UpstreamClient()
        self.resolver = resolver
        self.stored = StoredStateReader(database, self.credentials)
        self.slots = TenantSlots(self.config.tenant_calls, self.config.tenant_wait_seconds)
        self.key_review = KeyReview(database)
        self.limits = RateLimits(database)
        self.observers: list[Callable[[str, float], None]] = []
        """Told each decision's code (``allowed``, ``replayed`` or the refusal's) and its seconds (metrics)."""

    def fetch(self, turn: TurnContext, request: FetchRequest | UnreadRequest) -> FetchAnswer:
        """Decide and (maybe) send one ``fetch_url`` request; the upstream's answer or the refusal. Never raises.

        ``request`` is what the host read from the guest's JSON (``gateway/exchange.py``): an
        :class:`~skillhouse.gateway.exchange.UnreadRequest` is refused, and audited, like any bad request."""
        started = time.perf_counter()
        with span("skillhouse.gateway", tenant=turn.tenant) as current:
            answer = self._fetch_safely(turn, request)
            code = answer.code if isinstance(answer, FetchRefusal) else "replayed" if answer.replayed else "allowed"
            if current is not None:
                annotate(current, code=code, replayed=answer.replayed,
                         http__response__status_code=_status(answer))
        for observe in self.observers:
            observe(code, time.perf_counter() - started)
        return answer

    def _fetch_safely(self, turn: TurnContext, request: FetchRequest | UnreadRequest) -> FetchAnswer:
        try:
            return self._fetch(turn, request)
        except Exception as exc:
            # a fault of the gateway itself (its store, a bug): never a traceback to the guest or a 500 from
            # the API. A key claimed for this request stays running and turns unresolved when its lease
            # ends, so the request is never resent. Only the type is logged: messages may carry SQL values.
            log.error("gateway failure deciding a request of tenant %s: %s", turn.tenant, type(exc).__name__)
            return refusal(GatewayFault(
                f"the gateway failed while deciding this request ({type(exc).__name__}); if it was sent, its "
                "idempotency key turns unresolved and it is not resent automatically",
                code="gateway-failure",
            ))

    def _fetch(self, turn: TurnContext, request: FetchRequest | UnreadRequest) -> FetchAnswer:
        try:
            call = self._read(turn, request)
        except GatewayError as refused:
            method = request.method
            written = method.upper() if method is not None and method.upper() in METHODS else "-"
            # nothing of an unreadable URL is written: it is not canonical and may hold anything
            self.audit.record(AuditEntry(turn.tenant, turn.turn_id, written, "", "", "refused", code=refused.code))
            return refusal(refused)
        try:
            return self._decide(turn, call)
        except GatewayError as refused:
            decision = "held" if refused.code in ("approval-required", "connection-required") else "refused" if refused.code in _REFUSED else "error"
            self._record(call, decision, code=refused.code, approval_id=refused.details.get("approval_id"))
            return refusal(refused)
        finally:
            if call.admission is not None and call.admission.leases:
                self._release(turn.tenant, call.admission)

    def _release(self, tenant: str, admission: Admission) -> None:
        # the call's answer stands whatever happens here: a lease not given back expires on its own
        try:
            self.limits.release(admission)
        except Exception as exc:
            log.error("gateway failure releasing a call lease of tenant %s: %s", tenant, type(exc).__name__)

    def _entry(self, call: _Call, decision: str, **values: Any) -> AuditEntry:
        changes = {k: v for k, v in values.items() if v is not None}
        if call.decision is not None:
            changes["address"] = str(call.decision.address)
        if call.match is not None:
            changes["operation"] = call.match.operation.qualified
        return replace(call.audit, decision=decision, **changes)

    def _record(self, call: _Call, decision: str, durable: bool = True, **values: Any) -> None:
        entry = self._entry(call, decision, **values)
        if call.audit_row is None:
            self.audit.record(entry, durable)
        else:
            self.audit.finish(call.audit_row, entry)

    @staticmethod
    def _read(turn: TurnContext, request: FetchRequest | UnreadRequest) -> _Call:
        if isinstance(request, UnreadRequest):
            raise InvalidRequest(request.message, field=request.field)
        canonical = canonical_request(request)
        target = canonical.target
        matched = turn.releases.match(canonical.method, target)
        entry = AuditEntry(turn.tenant, turn.turn_id, canonical.method, target.authority, target.path, "pending")
        return _Call(canonical, target, entry, matched=matched)

    def _decide(self, turn: TurnContext, call: _Call) -> FetchAnswer:
        request = call.request
        match = call.matched
        key: str | None = None
        if match is not None and match.operation.document.get("identity"):
            values = identity_values(match, request)
            key = idempotency_key(turn.tenant, match, values)
        private_hosts, resolve = self.config.private_reach(turn.tenant)
        stored = self._stored(turn, call, match, key, private_hosts, resolve)
        injections, tenant_gates = stored.injections, stored.tenant_gates
        if turn.credential_headers is not None:
            injections = [i for i in injections if i.header.lower() in turn.credential_headers]
        if call.decision is None:
            policy = EgressPolicy.of(turn.releases.authorities, stored.allow_list, private_hosts)
            call.decision = decide_egress(call.target, policy, resolve, self.resolver)
        call.match = match
        injected = {injection.header for injection in injections}
        left_out = frozenset(name.lower() for name in injected)
        canonical = request.document(left_out)
        early = call.committed  # the commitment with no header left out, when the read claimed with it
        committed = early if early is not None and left_out.isdisjoint(n for n, _ in request.headers) else commitment(canonical)
        if call.audit_row is not None and (committed != early or tenant_gates or stored.may_be_limited):
            # never so: the read claims only where nothing stored holds the request or changes its commitment
            assert key is not None
            self.keys.release(turn.tenant, key)
            raise RuntimeError("the read claimed a key that its own rows say it should not have")
        if key is not None:
            replay = self.keys.replay_of(stored.seen, key, committed)
            if replay is not None:
                # nothing leaves for a replay: its audit row may wait for the WAL writer (see store/database.py)
                self._record(call, "replayed", durable=False, status=_status(replay.response), idempotency_key=key)
                return replayed(replay.response)
        gate = turn.releases.gate_for(request.method, call.target, call.match)
        if gate is None:
            gate = next((g for g in tenant_gates if BoundReleases([], [g]).gate_for(request.method, call.target, None)), None)
        approval_id: str | None = None
        if gate is not None:
            operation = call.match.operation.qualified if call.match else None
            used, approval_id = self.approvals.use_or_hold(turn.tenant, turn.turn_id, operation, gate.reason, canonical, committed)
            if not used:
                raise ApprovalRequired(
                    f"{request.method} {call.target.path} is held for a person's approval ({approval_id})", approval_id
                )
        try:
            if stored.may_be_limited:  # read with the rest: a tenant without limits or waits makes no more round trips
                call.admission = self.limits.admit(turn.tenant, call.match.operation.qualified if call.match else None,
                                                   call.target.host,
                                                   lease_seconds=self.upstream.deadline_seconds + LEASE_MARGIN_SECONDS)
        except RateLimited:
            if approval_id is not None:
                self.approvals.give_back(turn.tenant, approval_id)  # not sent: still owed to the request it approved
            raise
        claimed: Claimed | None = None
        if key is not None and call.audit_row is not None:
            claimed = Claimed(key, call.audit_row)  # by the read (see _stored)
        elif key is not None:
            operation_name = call.match.operation.qualified if call.match else ""
            opened = opening(self._entry(call, "allowed", idempotency_key=key, approval_id=approval_id))
            try:
                claim = self.keys.claim(turn.tenant, key, operation_name, committed, opened)
            except GatewayError:
                # in flight elsewhere, a different payload, or unresolved: nothing ran, so an approval
                # used for it is still owed to the request it approved
                if approval_id is not None:
                    self.approvals.give_back(turn.tenant, approval_id)
                raise
            if isinstance(claim, Replay):
                if approval_id is not None:
                    self.approvals.give_back(turn.tenant, approval_id)
                self._record(call, "replayed", durable=False, status=_status(claim.response), idempotency_key=key)
                return replayed(claim.response)
            claimed, call.audit_row = claim, claim.audit_row
        try:
            # OAuth access tokens are fetched only now: after the egress rule, the gate and the claim
            injections = self.tokens.resolve(turn.tenant, injections)
            injections = self.connections.resolve(turn.tenant, turn.subject, injections)
        except GatewayError:  # CredentialUnavailable, ConnectionRequired, or a binding that cannot be read: nothing was sent
            if key is not None:
                self.keys.release(turn.tenant, key)
            if approval_id is not None:
                self.approvals.give_back(turn.tenant, approval_id)
            raise
        # every secret of the host, whatever its origin's scheme or port, and the access tokens sent now
        sent_secrets = [s for injection in injections for s in injection.secrets]
        headers = {name: value for name, value in request.headers if name not in left_out}
        headers.update({injection.header: injection.value for injection in injections})
        headers["Accept-Encoding"] = "identity"
        if key is not None:
            headers["Idempotency-Key"] = key
        decision = call.decision

        def send() -> UpstreamResponse:
            with self.slots.hold(turn.tenant), span(
                "skillhouse.upstream", operation=call.match.operation.qualified if call.match else None,
                http__request__method=request.method, server__address=call.target.host,
                server__port=call.target.port,
            ) as current:
                inject_traceparent(headers)
                sent = self.upstream.send(
                    decision, request.method, request.url.text, headers, request.body, target=request.url.request_target
                )
                if current is not None:
                    annotate(current, http__response__status_code=sent.status,
                             http__response__body__size=len(sent.body.encode()))
            return sent

        try:
            response = send()
            if response.status == 401:
                # a 401 was certainly not acted on: a connection's token is refreshed once and the request sent once more
                retry = self.connections.after_refusal(turn.tenant, turn.subject, injections)
                if retry is not None:
                    injections = retry
                    sent_secrets += [s for injection in injections for s in injection.secrets]
                    headers.update({injection.header: injection.value for injection in injections})
                    response = send()
        except NotSent as exc:
            if key is not None:
                self.keys.release(turn.tenant, key)
            if approval_id is not None:
                self.approvals.give_back(turn.tenant, approval_id)
            raise UpstreamFailed(exc.message, code=exc.code, **failure_details(exc)) from None
        except MaybeSent as exc:
            if key is not None:
                self.keys.unresolved(turn.tenant, key)
                raise UpstreamUnresolved(
                    f"{exc.message}; key {key} is unresolved and the request is not resent automatically: "
                    "check the upstream, then clear the key to allow it again",
                    idempotency_key=key, **failure_details(exc),
                ) from None
            code = "upstream-deadline-exceeded" if exc.cause == "deadline-exceeded" else "upstream-failed"
            raise UpstreamFailed(exc.message, code=code, **failure_details(exc)) from None
        except Withheld as exc:
            # the upstream acted and answered: the refusal is this request's answer, stored under its key
            withheld = refusal(UpstreamFailed(exc.message, code=exc.code, **failure_details(exc)))
            outcome: JsonObject = {"status": exc.status, "code": exc.code, "idempotency_key": key, "approval_id": approval_id}
            if claimed is None:
                self._record(call, "allowed", **outcome)
            else:
                self.keys.complete(claimed, turn.tenant, withheld, finishing(self._entry(call, "allowed", **outcome)))
            return withheld
        if response.status == 401:
            self._refused_tokens(turn.tenant, injections, original=stored.injections)
        try:
            self.limits.note_answer(turn.tenant, call.target.host, response.status, response.headers)
        except Exception as exc:  # the answer came: it is stored and returned even if its wait cannot be
            log.error("gateway failure recording an upstream's wait for tenant %s: %s", turn.tenant, type(exc).__name__)
        redactor = Redactor(stored.secrets + tuple(sent_secrets))
        answer = self._answer(response, redactor)
        if claimed is None:
            self._record(call, "allowed", status=response.status, idempotency_key=key, approval_id=approval_id)
            return answer
        # the claim is durable and the audit row open: losing this asynchronous commit in an OS crash
        # leaves the key running, then unresolved when its lease ends, so the request is still never resent
        entry = self._entry(call, "allowed", status=response.status, idempotency_key=key, approval_id=approval_id)
        self.keys.complete(claimed, turn.tenant, answer, finishing(entry))
        return answer

    def _stored(
        self, turn: TurnContext, call: _Call, match: Match | None, key: str | None,
        private_hosts: frozenset[str], resolve: Mapping[tuple[str, int], str],
    ) -> StoredState:
        """The request's stored state; for a request with a key to its operation's own host and no gate of
        its turn's, on PostgreSQL, its key claimed in the same round trip where nothing stored may hold the
        request (``gateway/stored_state.py``): then ``call.audit_row`` is the audit row the claim opened."""
        request, target = call.request, call.target
        if (key is None or match is None or not self.stored.claims or target.authority not in turn.releases.authorities
                or turn.releases.gate_for(request.method, target, match) is not None):  # fmt: skip
            return self.stored.read(turn.tenant, target, key)
        # an operation's own host is allowed whatever the tenant's allow-list says, and the rest of the
        # egress rule reads nothing stored: decided before the read, so the claim knows its address
        call.decision = decide_egress(target, EgressPolicy.of(turn.releases.authorities, (), private_hosts), resolve, self.resolver)
        call.match = match
        call.committed = commitment(request.document())
        row = self.keys.new_row(turn.tenant, key, match.operation.qualified, call.committed)
        opened = opening(self._entry(call, "allowed", idempotency_key=key))
        found = self.stored.read_and_claim(turn.tenant, target, (name for name, _ in request.headers), claim_binds(row, opened))
        call.audit_row = found.audit_row
        try:
            return found.state()
        except Exception:
            if found.audit_row is not None:
                self.keys.release(turn.tenant, key)  # nothing was sent: the credentials were refused
            raise

    def _refused_tokens(self, tenant: str, sent: list[Injection], original: Sequence[Injection]) -> None:
        """The upstream refused the request: forget the access tokens it carried (revoked early, perhaps),
        so the next call fetches new ones. This call is not retried: it was answered."""
        for before in original:
            if not isinstance(before.grant, ClientCredentials):
                continue
            for after in sent:
                if after.header == before.header and after.value.startswith("Bearer "):
                    self.tokens.forget(tenant, before.binding, after.value.removeprefix("Bearer "))

    @staticmethod
    def _answer(response: UpstreamResponse, redactor: Redactor) -> FetchAnswer:
        headers = {k: v for k, v in response.headers.items() if k.lower() not in _NOT_RETURNED}
        return redactor.answer(response.status, headers, response.body)  # scrubbed, or response-withheld

    def close(self) -> None:
        self.upstream.close()


def _status(answer: FetchAnswer) -> int | None:
    """The upstream's status of an answer that is its response (a refusal has none)."""
    return answer.status if isinstance(answer, FetchResponse) else None
