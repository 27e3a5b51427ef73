"""A raw ``;`` in a path is accepted only as the matrix parameter of the operation a request is, spelled as it.

The ``matrix`` skill below is bound beside Hollowbrook, on its host: its requests that the guest builds
are matched, keyed and gated as the operation they are; every other raw ``;`` (at a non-matrix segment,
under another name, smuggled into a value, beside ``..``, on a request no operation declares) is refused
``path-parameter`` before anything is claimed or sent, as it is without the skill. A server that strips
``;parameters`` reads ``/;wing=east/suites`` as ``/suites``: the gate on that holds it; and
``/;account=a/charges`` as ``/charges``, whose idempotency key would not hold: it is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from tests.gateway.test_canonical_spellings import CHARGE, post, stored_counts
from tests.gateway.upstream_server import Upstream
from tests.gateway.wire import fetch_json

from skillhouse.compiler import compile_dir
from skillhouse.gateway import Gateway, TurnContext
from skillhouse.gateway.audit_queries import AuditFilter, audit_rows
from skillhouse.gateway.canonical import canonical_request
from skillhouse.gateway.errors import GatewayError
from skillhouse.gateway.exchange import FetchRequest
from skillhouse.gateway.matching import BoundReleases, Match
from skillhouse.guest import build_request

BASE = "http://hollowbrook.local:8084"
SKILL = {
    "SKILL.md": "---\nname: matrix\ndescription: Matrix parameters.\n---\nUse matrix.\n",
    # one room's hold, keyed by the room: ';room=1'
    "hold_room.md": """---
operation:
  method: POST
  url: http://hollowbrook.local:8084/rooms/{room}/holds
  style: {room: matrix}
  body: [nights]
  integer: [nights]
  identity: [room, nights]
---
Hold a room.
""",
    # tags exploded: ';tag=a;tag=b'
    "tag_rooms.md": """---
operation:
  method: POST
  url: http://hollowbrook.local:8084/tags/{tag}
  style: {tag: matrix}
  explode: [tag]
  schema: |
    {"type": "object", "properties": {"tag": {"type": "array", "items": {"type": "string"}}},
     "required": ["tag"], "additionalProperties": false}
---
Tag rooms.
""",
    # an exploded object: its keys name the parameters (';floor=2;view=sea')
    "find_rooms.md": """---
operation:
  method: GET
  url: http://hollowbrook.local:8084/find/{filter}
  style: {filter: matrix}
  explode: [filter]
  schema: |
    {"type": "object", "properties": {"filter": {"type": "object", "additionalProperties": {"type": "string"}}},
     "required": ["filter"], "additionalProperties": false}
---
Find rooms.
""",
    # a wire name that is percent-encoded on the wire
    "filter_floor.md": """---
operation:
  method: GET
  url: http://hollowbrook.local:8084/floors/{floor}
  style: {floor: matrix}
  names: {floor: "floor[id]"}
---
A floor.
""",
    # gated itself
    "release_room.md": """---
operation:
  method: DELETE
  url: http://hollowbrook.local:8084/rooms/{room}
  style: {room: matrix}
approval:
  matches: DELETE /rooms/{room}
  reason: A person frees rooms.
---
Release a room.
""",
    # its stripped form is Hollowbrook's create_booking, which has an idempotency key
    "book_for_account.md": """---
operation:
  method: POST
  url: http://hollowbrook.local:8084/{account}/bookings
  style: {account: matrix}
  body: [room_id]
---
Book for an account.
""",
    # its stripped form is release_room, gated by its own approval
    "close_wing_room.md": """---
operation:
  method: DELETE
  url: http://hollowbrook.local:8084/{wing}/rooms/{room}
  style: {wing: matrix}
---
Close a room of a wing.
""",
    # its stripped form is POST /suites, held by the skill's gate
    "book_suite.md": """---
operation:
  method: POST
  url: http://hollowbrook.local:8084/{wing}/suites
  style: {wing: matrix}
  body: [nights]
---
Book a suite.
""",
    "suites_gate.md": """---
approval:
  matches: POST /suites
  reason: A person books suites.
---
Suites are booked by a person.
""",
    # its stripped form (a server that ignores ';account=a') is the gated POST /charges, which has a key
    "charge_account.md": """---
operation:
  method: POST
  url: http://hollowbrook.local:8084/{account}/charges
  style: {account: matrix}
  body: [booking_id, amount_cents, description]
  integer: [amount_cents]
---
Charge an account.
""",
}


@pytest.fixture(scope="module")
def matrix_release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root: Path = tmp_path_factory.mktemp("skills") / "matrix"
    root.mkdir()
    for name, text in SKILL.items():
        (root / name).write_text(text)
    compiled, errors = compile_dir(root)
    assert compiled is not None, errors
    return compiled.document


@pytest.fixture
def releases(hollowbrook_release: dict[str, Any], matrix_release: dict[str, Any]) -> BoundReleases:
    return BoundReleases([hollowbrook_release, matrix_release])


@pytest.fixture
def matrix_turn(releases: BoundReleases) -> TurnContext:
    return TurnContext("tenant-a", "turn-1", releases)


def _operation(release: dict[str, Any], name: str) -> dict[str, Any]:
    return next(op for op in release["operations"] if op["name"] == name)


def matched(releases: BoundReleases, method: str, url: str) -> Match | None:
    request = canonical_request(FetchRequest(method, url, (), None))
    return releases.match(request.method, request.target)


def refusal(releases: BoundReleases, method: str, url: str) -> str | None:
    try:
        matched(releases, method, url)
    except GatewayError as refused:
        return f"{refused.code}/{refused.details.get('reason')}"
    return None


@pytest.mark.parametrize(
    ("name", "arguments", "parameter", "value"),
    [("hold_room", {"room": "12", "nights": 2}, "room", "12"),
     ("hold_room", {"room": "", "nights": 2}, "room", ""),
     ("hold_room", {"room": "1;x=2,y..", "nights": 2}, "room", "1;x=2,y.."),
     ("hold_room", {"room": "..", "nights": 2}, "room", ".."),
     ("tag_rooms", {"tag": ["a", "b;tag=c"]}, "tag", ";tag=a;tag=b%3Btag%3Dc"),
     ("tag_rooms", {"tag": ["x"]}, "tag", "x"),
     ("find_rooms", {"filter": {"view": "sea", "floor": "2"}}, "filter", ";floor=2;view=sea"),
     ("book_suite", {"wing": "east", "nights": "2"}, "wing", "east"),
     ("filter_floor", {"floor": "3"}, "floor", "3")],
)  # fmt: skip
def test_what_the_guest_builds_is_matched_to_its_operation_with_the_value_it_carries(
    releases: BoundReleases, matrix_release: dict[str, Any], name: str, arguments: dict[str, Any], parameter: str, value: str
) -> None:
    request = build_request(_operation(matrix_release, name), arguments)
    match = matched(releases, request["method"], request["url"])
    assert match is not None and match.operation.qualified == f"matrix.{name}"
    assert match.path[parameter] == value


def test_a_matrix_value_is_one_value_however_its_unreserved_characters_are_spelled(releases: BoundReleases) -> None:
    first = matched(releases, "POST", f"{BASE}/rooms/;room=%31%7e/holds")
    second = matched(releases, "POST", f"{BASE}/rooms/;room=1~/holds")
    assert first is not None and second is not None and first.path == second.path == {"room": "1~"}
    # an encoded ',' is part of the value, a raw one separates items: two lists, two values
    listed = matched(releases, "POST", f"{BASE}/tags/;tag=a%2Cb")
    assert listed is not None and listed.path == {"tag": "a,b"}
    # an encoded wire name is one name in either hex case
    floor = matched(releases, "GET", f"{BASE}/floors/;floor%5bid%5d=3")
    assert floor is not None and floor.operation.qualified == "matrix.filter_floor" and floor.path == {"floor": "3"}


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/charges;x=1"), ("POST", "/charges/;account=a"), ("POST", "/;account=a;x=1/charges"),
     ("POST", "/rooms/;room=1;x=2/holds"), ("POST", "/rooms/;room=1;room=2/holds"), ("POST", "/rooms/;room=1=2/holds"),
     ("POST", "/rooms/;other=1/holds"), ("POST", "/rooms/;Room=1/holds"), ("POST", "/rooms/;/holds"),
     ("POST", "/rooms/;=1/holds"), ("POST", "/rooms/1;room=1/holds"), ("POST", "/rooms/..;room=1/holds"),
     ("POST", "/rooms/;room=1/holds;room=1"), ("POST", "/rooms;room=1/;room=1/holds"), ("POST", "/rooms/;room,x=1/holds"),
     ("DELETE", "/bookings/;booking_id=b1"), ("GET", "/rooms/;room=1/holds"), ("POST", "/tags/;tag=a,b"),
     ("POST", "/tags/;tag=a;other=b"), ("POST", "/tags/;tag=a;;tag=b"), ("GET", "/find/;=1"), ("GET", "/find/;a=1,2"),
     ("POST", "/echo;x=1"), ("POST", "/rooms/;room=1/x/../holds;x"), ("POST", "/;account=a/bookings"),
     ("POST", "/;account=a/charges"),
     ("GET", "/floors/;floor=3")],
)  # fmt: skip
def test_every_other_raw_semicolon_is_refused_as_a_path_parameter(releases: BoundReleases, method: str, path: str) -> None:
    assert refusal(releases, method, BASE + path) == "invalid-request/path-parameter"


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/rooms/;room=a%2F..%2F/holds", "encoded-separator"), ("/rooms/;room=%2e%2e/../%2e%2e/holds", "encoded-dot-segment"),
     ("/rooms/;room=a//holds", "empty-segment"), ("/rooms/;room=\\/holds", "backslash")],
)  # fmt: skip
def test_encoded_separators_and_dot_segments_beside_a_matrix_value_are_refused_as_without_one(
    releases: BoundReleases, path: str, reason: str
) -> None:
    assert refusal(releases, "POST", BASE + path) == f"invalid-request/{reason}"


def test_a_matrix_position_spelled_without_a_semicolon_is_still_its_operation(releases: BoundReleases) -> None:
    # its gate and key hold it: a server routes '/rooms/5/holds' to the same handler
    match = matched(releases, "POST", f"{BASE}/rooms/5/holds")
    assert match is not None and match.operation.qualified == "matrix.hold_room" and match.path == {"room": "5"}


def test_dot_segments_after_a_matrix_segment_leave_another_resource_decided_as_what_it_is(releases: BoundReleases) -> None:
    # '/rooms/;room=1/..' is '/rooms': no ';' is left, and no operation is that path
    assert matched(releases, "POST", f"{BASE}/rooms/;room=1/../holds") is None


def test_a_semicolon_in_an_unbound_fetch_url_is_refused(gateway: Gateway, matrix_turn: TurnContext, upstream: Upstream) -> None:
    for url in ("http://elsewhere.example/a;b=1", f"{BASE}/rooms;room=1", f"{BASE}/x/;room=1/holds"):
        answer = fetch_json(gateway, matrix_turn, {"method": "GET", "url": url})
        assert (answer["error"]["code"], answer["error"]["reason"]) == ("invalid-request", "path-parameter"), url
    assert upstream.recorder.requests == [] and stored_counts(gateway) == (0, 0)
    rows = audit_rows(gateway.database, "tenant-a", AuditFilter())
    assert {(row.decision, row.code, row.path) for row in rows} == {("refused", "invalid-request", "")}


def test_a_matrix_request_is_sent_as_it_was_built_and_keyed_by_its_operation(
    gateway: Gateway, matrix_turn: TurnContext, upstream: Upstream, matrix_release: dict[str, Any]
) -> None:
    request = build_request(_operation(matrix_release, "hold_room"), {"room": "1;x=2", "nights": 2})
    first = fetch_json(gateway, matrix_turn, request)
    assert first["status"] == 200, first
    (sent,) = upstream.recorder.requests
    assert sent["line"] == "POST /rooms/;room=1%3Bx%3D2/holds HTTP/1.1"
    assert fetch_json(gateway, matrix_turn, request).get("replayed") is True
    assert len(upstream.recorder.requests) == 1
    # the same room spelled with an escape of an unreserved character is the same request: replayed
    respelled = {**request, "url": request["url"].replace(";room=1", ";room=%31")}
    assert fetch_json(gateway, matrix_turn, respelled).get("replayed") is True
    (row, *_) = audit_rows(gateway.database, "tenant-a", AuditFilter())
    assert row.operation == "matrix.hold_room"


def test_a_matrix_segment_does_not_slip_past_the_gate_on_the_path_a_stripping_server_reads(
    gateway: Gateway, matrix_turn: TurnContext, upstream: Upstream
) -> None:
    # '/;wing=east/suites' is '/suites' to such a server: the skill's gate on POST /suites holds it
    suite = fetch_json(gateway, matrix_turn, post(f"{BASE}/;wing=east/suites", '{"nights": "2"}'))
    assert suite["error"]["code"] == "approval-required", suite
    # '/;wing=east/rooms/7' is '/rooms/7': release_room's own approval holds it
    room = fetch_json(gateway, matrix_turn, {"method": "DELETE", "url": f"{BASE}/;wing=east/rooms/7"})
    assert room["error"]["code"] == "approval-required", room
    # '/;account=a/charges' is '/charges', whose idempotency key would not hold: refused outright
    charge = fetch_json(gateway, matrix_turn, post(f"{BASE}/;account=a/charges", CHARGE))
    assert (charge["error"]["code"], charge["error"]["reason"]) == ("invalid-request", "path-parameter")
    refused = fetch_json(gateway, matrix_turn, post(f"{BASE}/charges;account=a", CHARGE))
    assert (refused["error"]["code"], refused["error"]["reason"]) == ("invalid-request", "path-parameter")
    assert upstream.recorder.requests == []


def test_a_matrix_operation_with_its_own_gate_is_held_and_a_parameter_beside_it_refused(
    gateway: Gateway, matrix_turn: TurnContext, upstream: Upstream
) -> None:
    held = fetch_json(gateway, matrix_turn, {"method": "DELETE", "url": f"{BASE}/rooms/;room=7"})
    assert held["error"]["code"] == "approval-required", held
    (approval,) = gateway.approvals.list("tenant-a")
    assert approval.operation == "matrix.release_room" and approval.canonical["url"] == f"{BASE}/rooms/;room=7"
    for path in ("/rooms/;room=7;x=1", "/rooms/;room=7/..;x", "/rooms;room=7", "/rooms/x;room=7"):
        refused = fetch_json(gateway, matrix_turn, {"method": "DELETE", "url": BASE + path})
        assert (refused["error"]["code"], refused["error"]["reason"]) == ("invalid-request", "path-parameter"), path
    assert upstream.recorder.requests == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(room=st.text(st.characters(codec="utf-8"), max_size=12), tags=st.lists(st.text(max_size=6), min_size=1, max_size=3))
def test_any_value_the_guest_sends_is_matched_to_its_operation_with_that_value(
    releases: BoundReleases, matrix_release: dict[str, Any], room: str, tags: list[str]
) -> None:
    hold, tag = _operation(matrix_release, "hold_room"), _operation(matrix_release, "tag_rooms")
    if Draft202012Validator(hold["schema"]).is_valid({"room": room, "nights": 1}):
        match = matched(releases, "POST", build_request(hold, {"room": room, "nights": 1})["url"])
        assert match is not None and match.operation.qualified == "matrix.hold_room" and match.path["room"] == room
    if Draft202012Validator(tag["schema"]).is_valid({"tag": tags}):
        url = build_request(tag, {"tag": tags})["url"]
        match = matched(releases, "POST", url)
        assert match is not None and match.operation.qualified == "matrix.tag_rooms"
        # one raw ';' per item and no other: splitting the segment on it gives the items back
        segment = url.split("/tags/", 1)[1]
        assert [piece.partition("=")[::2] for piece in segment[1:].split(";")] == [("tag", quote(t, safe="")) for t in tags]
        assert [unquote(piece.partition("=")[2]) for piece in segment[1:].split(";")] == tags
        assert match.path["tag"] in (segment, tags[0])
