"""Every spelling of a request is refused before anything is claimed, or decided and sent as its canonical form.

Hypothesis writes the Hollowbrook URLs many ways (dot segments anywhere, percent-escapes of any subset
of characters in upper- or lower-case hex, ``;`` parameters, doubled slashes, trailing dots, ``%2F``,
backslashes, host case, trailing dot, fullwidth letters (IDNA), ports with leading zeros, user
information, fragments) and sends them through :meth:`Gateway.fetch` against a real loopback upstream,
on SQLite and PostgreSQL. Each spelling either gets an ``invalid-request`` refusal with nothing sent,
claimed or held, or gets exactly the answer its canonical form gets (the same approval, the same
idempotency key) and the upstream's request line carries exactly the canonical bytes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.compiler.url_form import UNRESERVED
from skillhouse.gateway import Gateway, TurnContext
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.gateway.canonical_url import canonical_url
from skillhouse.gateway.errors import GatewayError
from skillhouse.store.gateway_tables import ApprovalRow, IdempotencyRow

HOST = "hollowbrook.local"
SPELLINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
CHARGE = json.dumps({"amount_cents": 999999, "booking_id": "b1", "description": "spelled"})
BOOKING = json.dumps({"arrival": "2030-05-01", "departure": "2030-05-03", "guest_name": "Spelled", "room_id": 2})


@st.composite
def escaped(draw: st.DrawFn, text: str) -> str:
    """``text`` with any subset of its unreserved characters percent-encoded, in upper- or lower-case hex
    (escaping a reserved character such as ``&`` or ``/`` makes another resource, not another spelling)."""
    out = []
    for char in text:
        if char in UNRESERVED and draw(st.booleans()):
            hex_pair = f"{ord(char):02X}"
            out.append("%" + (hex_pair.lower() if draw(st.booleans()) else hex_pair))
        else:
            out.append(char)
    return "".join(out)


@st.composite
def path_spellings(draw: st.DrawFn, path: str) -> str:
    """``path`` (canonical, no parameters) written another way; some spellings must be refused."""
    segments: list[str] = []
    for segment in path.strip("/").split("/"):
        for _ in range(draw(st.integers(0, 2))):
            segments.append(draw(st.sampled_from([".", f"{draw(st.sampled_from(['x', 'a%41', '.x', '~']))}/.."])))
        segments.append(draw(escaped(segment)))
    extra = draw(st.sampled_from(["", "", "/", "/.", "/..", "//", ";v=1", "/%2e", "/%2E%2e", ".", "%2F", "\\", "%5c"]))
    written = "/" + "/".join(segments) + extra
    if draw(st.booleans()):
        written = written.replace("/", draw(st.sampled_from(["//", "%2F", "%2f", "\\", "/./"])), 1)
    return written


@st.composite
def hosts(draw: st.DrawFn) -> str:
    host = "".join(c.upper() if draw(st.booleans()) else c for c in HOST)
    if draw(st.booleans()):
        host = host.replace("h", "\uff48", 1)  # fullwidth h: IDNA maps it to h
    host += draw(st.sampled_from(["", "."]))
    port = draw(st.sampled_from([":8084", ":08084", ":8084"]))
    userinfo = draw(st.sampled_from(["", "", "", "user@", "user:pw@"]))
    return f"{userinfo}{host}{port}"


@st.composite
def urls(draw: st.DrawFn, path: str, query: str = "") -> str:
    scheme = draw(st.sampled_from(["http", "HTTP", "Http"]))
    # an escape that stays escaped may be written in either case: %2c and %2C are one spelling
    written_query = "%2c".join(draw(escaped(part)) for part in query.split("%2C")).replace("%2c", draw(
        st.sampled_from(["%2c", "%2C"])))  # fmt: skip
    fragment = draw(st.sampled_from(["", "", "#x", "#/../charges"]))
    return f"{scheme}://{draw(hosts())}{draw(path_spellings(path))}{'?' + written_query if query else ''}{fragment}"


def canonical_or_none(url: str) -> str | None:
    try:
        return canonical_url(url).text
    except GatewayError:
        return None


def stored_counts(gateway: Gateway) -> tuple[int, int]:
    with gateway.database.transaction() as session:
        keys = session.scalar(select(func.count()).select_from(IdempotencyRow)) or 0
        approvals = session.scalar(select(func.count()).select_from(ApprovalRow)) or 0
    return keys, approvals


def without_replayed(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer but for the replay flag and the ``date`` header: a request that is not an operation is
    sent again, and its second answer may come a second later."""
    kept = {k: v for k, v in answer.items() if k != "replayed"}
    if isinstance(kept.get("headers"), dict):
        kept["headers"] = {name: value for name, value in kept["headers"].items() if name.lower() != "date"}
    return kept


def post(url: str, body: str) -> dict[str, Any]:
    return {"method": "POST", "url": url, "headers": {"Content-Type": "application/json"}, "body": body}


def assert_refused_and_nothing_done(answer: dict[str, Any], gateway: Gateway, upstream: Upstream,
                                    before: tuple[int, tuple[int, int]]) -> None:  # fmt: skip
    assert answer["error"]["code"] in ("invalid-request", "egress-refused"), answer
    assert answer["error"].get("field") in ("url", None)
    assert (len(upstream.recorder.requests), stored_counts(gateway)) == before


@SPELLINGS
@given(st.data())
def test_a_charge_spelled_any_way_is_refused_or_held_like_its_canonical_form(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, data: st.DataObject
) -> None:
    url = data.draw(urls("/charges"), label="url")
    before = (len(upstream.recorder.requests), stored_counts(gateway))
    answer = fetch_json(gateway, turn, post(url, CHARGE))
    canonical = canonical_or_none(url)
    if canonical is None:
        assert_refused_and_nothing_done(answer, gateway, upstream, before)
        return
    # the same answer as the canonical form: for a held charge, the same approval (the same commitment)
    assert without_replayed(fetch_json(gateway, turn, post(canonical, CHARGE))) == without_replayed(answer)
    assert upstream.recorder.charges == []
    if canonical_url(url).path.rstrip("/") != "/charges":
        return  # another resource (/charges. or /): not the operation, and decided as what it is
    assert answer["error"]["code"] == "approval-required", (url, answer)
    (approval,) = [a for a in gateway.approvals.list("tenant-a") if a.id == answer["error"]["approval_id"]]
    assert approval.canonical["url"] == canonical and approval.operation == "hollowbrook.charge"


@SPELLINGS
@given(st.data())
def test_a_booking_spelled_any_way_is_refused_or_keyed_like_its_canonical_form(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, data: st.DataObject
) -> None:
    url = data.draw(urls("/bookings"), label="url")
    before = (len(upstream.recorder.requests), stored_counts(gateway))
    answer = fetch_json(gateway, turn, post(url, BOOKING))
    canonical = canonical_or_none(url)
    if canonical is None:
        assert_refused_and_nothing_done(answer, gateway, upstream, before)
        return
    if answer.get("status") == 201 and not answer.get("replayed"):
        assert upstream.recorder.requests[-1]["line"] == f"POST {canonical_url(url).request_target} HTTP/1.1"
    again = fetch_json(gateway, turn, post(canonical, BOOKING))
    assert without_replayed(again) == without_replayed(answer)
    if canonical_url(url).path.rstrip("/") == "/bookings":
        # one identity, one booking, however it was spelled (a spelling with another URL but the same
        # identity is a different payload for the same key: refused, never a second booking)
        assert len(upstream.recorder.bookings) == 1
        assert again.get("replayed") is True or again["error"]["code"] == "idempotency-mismatch"


@SPELLINGS
@given(st.data())
def test_the_upstream_receives_exactly_the_canonical_request_target(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, data: st.DataObject
) -> None:
    url = data.draw(urls("/rooms", "min_guests=2&note=a%2Cb;c~d"), label="url")
    before = (len(upstream.recorder.requests), stored_counts(gateway))
    answer = fetch_json(gateway, turn, {"method": "GET", "url": url})
    canonical = canonical_or_none(url)
    if canonical is None:
        assert_refused_and_nothing_done(answer, gateway, upstream, before)
        return
    assert answer["status"] == 200, answer
    sent = upstream.recorder.requests[-1]
    target = canonical_url(url).request_target
    assert sent["line"] == f"GET {target} HTTP/1.1" and sent["headers"]["Host"] == "hollowbrook.local:8084"
    assert target.endswith("?min_guests=2&note=a%2Cb;c~d")


@pytest.mark.parametrize(
    "path", ["/x/../charges", "/./charges", "/charges/.", "/%63harges", "/%63%68%61%72%67%65%73", "/a/b/../../charges",
             "/../charges", "/charges/", "/charges#fragment"],
)  # fmt: skip
def test_the_spellings_that_once_slipped_past_the_charge_gate_are_held(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, path: str
) -> None:
    answer = fetch_json(gateway, turn, post(f"http://{HOST}:8084{path}", CHARGE))
    assert answer["error"]["code"] == "approval-required"
    assert upstream.recorder.requests == []


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/%2e%2e/charges", "encoded-dot-segment"), ("/x/%2E%2e/charges", "encoded-dot-segment"),
     ("/x%2F..%2Fcharges", "encoded-separator"), ("/x\\..\\charges", "backslash"), ("//charges", "empty-segment"),
     ("/charges;x=1", "path-parameter"), ("/ch%zzarges", "invalid-percent-escape"), ("/charg\u00e9s", "non-ascii"),
     ("/charges%00", "encoded-control-character"), ("/char ges", "control-character"), ("/charges\u2028", "control-character")],
)  # fmt: skip
def test_spellings_servers_disagree_on_are_refused_with_their_reason_before_anything_is_claimed(
    gateway: Gateway, turn: TurnContext, upstream: Upstream, path: str, reason: str
) -> None:
    answer = fetch_json(gateway, turn, post(f"http://{HOST}:8084{path}", CHARGE))
    assert (answer["error"]["code"], answer["error"]["field"], answer["error"]["reason"]) == ("invalid-request", "url", reason)
    assert upstream.recorder.requests == [] and stored_counts(gateway) == (0, 0)
    (row,) = audit_rows(gateway.database, "tenant-a", AuditFilter())
    assert (row.decision, row.code, row.path) == ("refused", "invalid-request", "")


def test_unreserved_characters_in_upper_or_lower_hex_are_one_spelling() -> None:
    for char in sorted(UNRESERVED):
        for hex_pair in {f"{ord(char):02X}", f"{ord(char):02x}"}:
            assert canonical_url(f"http://h/a%{hex_pair}b").path == f"/a{char}b"
    assert canonical_url("http://h/a%3b%2c?x=%2c%7e").request_target == "/a%3B%2C?x=%2C~"
