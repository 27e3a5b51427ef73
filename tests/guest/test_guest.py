"""The guest through the runner interface: catalogue, load_tools, read_object, fetch_url, call_tool."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from tests.gateway.wire import json_upstream

from skillhouse.gateway.exchange import FetchRefusal
from skillhouse.guest import Guest
from skillhouse.host import TurnHost

from .conftest import GuestUnderTest, echo_upstream

OTHER_INN = {
    "create_booking.md": """
        ---
        operation:
          method: POST
          url: https://inn.example/bookings
          body: [guest]
        ---
        Book at the other inn.
        """,
}

Package = Callable[..., dict[str, Any]]
GuestOf = Callable[..., GuestUnderTest]


def names(definitions: list[dict[str, Any]]) -> list[str]:
    return [d["name"] for d in definitions]


def test_the_catalogue_offers_eager_tools_and_defers_every_operation(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    tools = guest_of([hollowbrook]).tools()
    assert names(tools["tools"]) == ["load_tools", "read_object", "fetch_url"]
    assert sorted(names(tools["deferred"])) == [
        "hollowbrook_cancel_booking",
        "hollowbrook_charge",
        "hollowbrook_check_availability",
        "hollowbrook_create_booking",
        "hollowbrook_list_rooms",
    ]
    booking = next(d for d in tools["deferred"] if d["name"] == "hollowbrook_create_booking")
    create = next(op for op in hollowbrook["operations"] if op["name"] == "create_booking")
    assert booking == {
        "name": create["tool_name"],
        "description": create["description"],
        "parameters": create["schema"],
    }


def test_eager_tools_have_object_schemas_and_descriptions(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    for tool in guest_of([hollowbrook]).tools()["tools"]:
        assert tool["description"]
        assert tool["parameters"]["type"] == "object"
        assert tool["parameters"]["additionalProperties"] is False


def test_load_tools_takes_the_short_name_a_skill_lists(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook])
    answer = guest.call("load_tools", {"names": ["create_booking", "hollowbrook_list_rooms"]})
    assert names(answer["loaded"]) == ["hollowbrook_create_booking", "hollowbrook_list_rooms"]
    assert "not_loaded" not in answer
    tools = guest.tools()
    assert names(tools["tools"])[3:] == ["hollowbrook_create_booking", "hollowbrook_list_rooms"]
    assert "hollowbrook_create_booking" not in names(tools["deferred"])


def test_a_short_name_two_skills_share_is_ambiguous_and_names_both(
    hollowbrook: dict[str, Any], package: Package, guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook, package("inn", OTHER_INN)])
    answer = guest.call("load_tools", {"names": ["create_booking"]})
    assert answer["loaded"] == []
    assert answer["not_loaded"] == [
        {
            "name": "create_booking",
            "code": "ambiguous-name",
            "candidates": ["hollowbrook_create_booking", "inn_create_booking"],
        }
    ]
    assert names(guest.call("load_tools", {"names": ["inn_create_booking"]})["loaded"]) == [
        "inn_create_booking"
    ]


def test_an_unknown_name_gets_the_nearest_names_not_the_whole_list(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    answer = guest_of([hollowbrook]).call("load_tools", {"names": ["create_bookings"]})
    problem = answer["not_loaded"][0]
    assert problem["code"] == "unknown-tool"
    assert problem["candidates"][0] == "hollowbrook_create_booking"
    assert len(problem["candidates"]) <= 3


def test_a_name_like_nothing_gets_no_candidates(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    answer = guest_of([hollowbrook]).call("load_tools", {"names": ["zzzzqqq"]})
    assert answer["not_loaded"] == [{"name": "zzzzqqq", "code": "unknown-tool", "candidates": []}]


def test_load_tools_with_bad_arguments_is_refused_with_violations(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    answer = guest_of([hollowbrook]).call("load_tools", {"names": "create_booking"})
    assert answer["error"]["code"] == "invalid-arguments"
    assert [v["path"] for v in answer["error"]["violations"]] == ["$.names"]


def test_read_object_of_a_skill_gives_its_manifest(
    hollowbrook: dict[str, Any], package: Package, guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook, package("inn", OTHER_INN)])
    text = guest.call("read_object", {"path": "skill/hollowbrook"})["ok"]
    assert hollowbrook["instructions"].splitlines()[0] in text
    assert "- list_rooms: " in text
    assert "- hollowbrook_create_booking: " in text  # ambiguous with inn's, so listed by full name
    assert "skill/hollowbrook/house_rules.md" in text


def test_read_object_of_an_operation_file_gives_its_prose_and_the_call(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    text = guest_of([hollowbrook]).call("read_object", {"path": "skill/hollowbrook/create_booking.md"})["ok"]
    assert text.startswith("Book a room for a guest")
    assert "## The call" in text
    assert "POST http://hollowbrook.local:8084/bookings" in text


def test_read_object_of_a_document_gives_it_as_written(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    answer = guest_of([hollowbrook]).call("read_object", {"path": "skill/hollowbrook/house_rules.md"})
    assert answer == {"ok": hollowbrook["documents"][0]["text"]}


def test_read_object_of_a_missing_skill_file_is_not_found(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook])
    assert guest.call("read_object", {"path": "skill/hollowbrook/rules.md"})["error"]["code"] == "not-found"
    assert guest.call("read_object", {"path": "skill/hollowbrok"})["error"]["code"] == "not-found"


def test_read_object_of_other_paths_goes_to_the_host(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    guest = guest_of([hollowbrook], objects={"notes/today.md": "sunny"})
    assert guest.call("read_object", {"path": "notes/today.md"}) == {"ok": "sunny"}
    assert guest.call("read_object", {"path": "notes/none.md"})["error"]["code"] == "not-found"


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("http://hollowbrook/list_rooms.md", "skill/hollowbrook/list_rooms.md"),
        ("https://skills/hollowbrook/create_booking.md", "skill/hollowbrook/create_booking.md"),
        ("http://example.com/skill/hollowbrook/house_rules.md", "skill/hollowbrook/house_rules.md"),
        ("https://cdn.example.org/files/list_rooms.md", "skill/hollowbrook/list_rooms.md"),
        ("skill/hollowbrook/SKILL.md", "skill/hollowbrook/SKILL.md"),
    ],
)
def test_fetching_a_skill_file_is_refused_with_a_pointer_to_read_object(
    hollowbrook: dict[str, Any], guest_of: GuestOf, url: str, path: str
) -> None:
    guest = guest_of([hollowbrook])
    answer = guest.call("fetch_url", {"url": url})
    assert answer["error"]["code"] == "use-read-object"
    assert answer["error"]["path"] == path
    assert guest.host.requests == []


def test_fetch_url_of_an_ordinary_url_is_sent_as_given(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook])
    answer = guest.call(
        "fetch_url", {"url": "https://weather.example/today", "headers": {"Accept": "text/plain"}}
    )
    sent = {
        "method": "GET",
        "url": "https://weather.example/today",
        "headers": {"Accept": "text/plain"},
        "body": None,
    }
    assert guest.host.requests == [sent]
    assert json.loads(answer["body"]) == sent


def test_calling_an_operation_sends_the_built_request_and_answers_what_fetch_url_returned(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    response = {
        "status": 201,
        "headers": {"content-type": "application/json"},
        "body": '{"id": "b-1"}',
        "replayed": True,
    }
    guest = guest_of([hollowbrook], fetch=lambda request: response)
    guest.call("load_tools", {"names": ["create_booking"]})
    answer = guest.runner.call_tool(
        "hollowbrook_create_booking",
        json.dumps({"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-02"}),
    )
    assert json.loads(answer) == response
    assert guest.host.requests == [
        {
            "method": "POST",
            "url": "http://hollowbrook.local:8084/bookings",
            "headers": {"Content-Type": "application/json"},
            "body": '{"arrival":"2025-05-01","departure":"2025-05-02","guest_name":"Mo","room_id":2}',
        }
    ]


def test_the_answer_of_an_operation_call_is_the_hosts_answer_written_as_json_byte_for_byte(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    response = {"status": 201, "headers": {"content-type": "application/json"}, "body": '{"id": "b-1", "note": "é"}'}
    guest = guest_of([hollowbrook], fetch=lambda request: response)
    answer = guest.runner.call_tool("hollowbrook_create_booking", json.dumps(
        {"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-02"}))
    assert answer == (
        '{"status": 201, "headers": {"content-type": "application/json"}, "body": "{\\"id\\": \\"b-1\\", '
        '\\"note\\": \\"é\\"}"}'
    )


class TextOnlyHost:
    """A host with only the WIT contract's ``fetch_url`` (as the component's is): no ``fetch_request``."""

    def __init__(self, host: TurnHost) -> None:
        self.inner = host
        self.eager_tools, self.skill_operations = host.eager_tools, host.skill_operations
        self.read_object, self.complete, self.log = host.read_object, host.complete, host.log
        self.texts: list[str] = []

    def fetch_url(self, request: str) -> str:
        self.texts.append(request)
        return self.inner.fetch_url(request)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("hollowbrook_create_booking", {"room_id": 2, "guest_name": "Mö", "arrival": "2025-05-01", "departure": "2025-05-02"}),
        ("fetch_url", {"url": "https://weather.example/today", "method": "POST", "headers": {"Accept": "text/plain"}, "body": "x"}),
        ("hollowbrook_list_rooms", {"min_guests": 2.0}),
    ],
)
def test_a_host_in_process_gets_the_request_it_would_read_from_the_text_and_the_model_the_same_answer(
    hollowbrook: dict[str, Any], tool: str, arguments: dict[str, Any]
) -> None:
    direct = TurnHost([hollowbrook], json_upstream(echo_upstream))
    text_only = TextOnlyHost(TurnHost([hollowbrook], json_upstream(echo_upstream)))
    answers = [Guest(host).call_tool(tool, json.dumps(arguments)) for host in (direct, text_only)]
    assert answers[0] == answers[1]
    assert direct.requests == text_only.inner.requests == [json.loads(text) for text in text_only.texts]
    assert len(direct.requests) == 1


def test_an_approval_required_answer_reaches_the_model_unchanged(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    held = {"error": {"code": "approval-required", "message": "held for a person", "approval_id": "ap_1"}}
    guest = guest_of([hollowbrook], fetch=lambda request: held)
    answer = guest.call(
        "hollowbrook_charge", {"booking_id": "b-1", "amount_cents": 12000, "description": "2 nights"}
    )
    assert answer == held


def test_an_invalid_call_is_not_sent(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    guest = guest_of([hollowbrook])
    answer = guest.call("hollowbrook_create_booking", {"room_id": "three", "nights": 2})
    assert answer["error"]["code"] == "invalid-arguments"
    assert sorted(v["path"] for v in answer["error"]["violations"]) == [
        "$.arrival",
        "$.departure",
        "$.guest_name",
        "$.nights",
        "$.room_id",
    ]
    assert guest.host.requests == []


@pytest.mark.parametrize("text", ["{room_id: 1}", '{"n": NaN}', "[1,"])
def test_arguments_that_are_not_json_are_refused(
    hollowbrook: dict[str, Any], guest_of: GuestOf, text: str
) -> None:
    guest = guest_of([hollowbrook])
    answer = guest.call("hollowbrook_list_rooms", text)
    assert answer["error"]["code"] == "invalid-arguments"
    assert answer["error"]["violations"][0]["problem"] == "not-json"
    assert guest.host.requests == []


def test_an_unknown_tool_gets_the_nearest_names(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    answer = guest_of([hollowbrook]).call("hollowbrook_list_room", {})
    assert answer["error"]["code"] == "unknown-tool"
    assert answer["error"]["candidates"][0] == "hollowbrook_list_rooms"


def test_a_short_name_call_runs_the_one_operation_that_has_it(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook])
    guest.call("list_rooms", {"min_guests": 2})
    assert guest.host.requests[0]["url"] == "http://hollowbrook.local:8084/rooms?min_guests=2"


def test_arguments_nested_too_deeply_are_refused_before_parsing(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook])
    answer = guest.call("hollowbrook_list_rooms", '{"min_guests": ' + "[" * 5000 + "]" * 5000 + "}")
    assert answer["error"]["violations"] == [
        {"path": "$", "problem": "too-deep", "expected": answer["error"]["violations"][0]["expected"]}
    ]
    assert guest.host.requests == []


def test_a_key_that_is_not_an_identifier_is_quoted_as_a_json_string_in_the_path(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    answer = guest_of([hollowbrook]).call("hollowbrook_list_rooms", {"include[]": 1, "naïve key": 2})
    assert [v["path"] for v in answer["error"]["violations"]] == ['$["include[]"]', '$["naïve key"]']


def test_list_tools_is_exactly_the_json_of_the_offered_and_deferred_definitions(
    hollowbrook: dict[str, Any], package: Package
) -> None:
    other = package("other-inn", OTHER_INN)
    other["operations"][0]["description"] = "Réservez à l'auberge \"Ünïcode\" – 🛏️"
    guest = Guest(TurnHost([hollowbrook, other], fetch=lambda request: FetchRefusal("no", "no")))
    guest.load_tools(["list_rooms", "other-inn_create_booking"])

    text = guest.list_tools()

    # put together from the host's definition texts, it is what json.dumps writes of the definitions
    assert text == json.dumps({"tools": guest.offered(), "deferred": guest.deferred()}, ensure_ascii=False)
    assert [d["name"] for d in json.loads(text)["tools"]][3:] == ["hollowbrook_list_rooms", "other-inn_create_booking"]
    assert guest.catalogue.operations["other-inn_create_booking"] == other["operations"][0]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("hollowbrook_create_booking", {"room_id": 2, "guest_name": "Mö", "arrival": "2025-05-01", "departure": "2025-05-02"}),
        ("create_booking", {"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-02"}),
        ("fetch_url", {"url": "https://weather.example/today", "method": "POST", "headers": {"Accept": "text/plain"}, "body": "x"}),
    ],
)
def test_a_call_prepared_for_the_component_hands_back_the_request_call_tool_sends(
    hollowbrook: dict[str, Any], tool: str, arguments: dict[str, Any]
) -> None:
    sending = TurnHost([hollowbrook], json_upstream(echo_upstream))
    preparing = TurnHost([hollowbrook], json_upstream(echo_upstream))
    answer = Guest(sending).call_tool(tool, json.dumps(arguments))
    request = Guest(preparing).prepare_call_tool(tool, json.dumps(arguments))
    assert isinstance(request, dict)
    assert preparing.requests == []  # nothing sent: the component's host sends it
    assert [request] == sending.requests
    assert preparing.fetch_url(json.dumps(request, ensure_ascii=False)) == answer


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("hollowbrook_create_booking", '{"room_id": "x"}'),
        ("hollowbrook_create_booking", "not json"),
        ("load_tools", '{"names": ["create_booking"]}'),
        ("read_object", '{"path": "skill/hollowbrook/SKILL.md"}'),
        ("fetch_url", '{"url": "skill/hollowbrook/SKILL.md"}'),
        ("no_such_tool", "{}"),
    ],
)
def test_a_call_prepared_for_the_component_that_sends_nothing_answers_as_call_tool_does(
    hollowbrook: dict[str, Any], tool: str, arguments: str
) -> None:
    host = TurnHost([hollowbrook], json_upstream(echo_upstream))
    prepared = Guest(host).prepare_call_tool(tool, arguments)
    assert prepared == Guest(TurnHost([hollowbrook], json_upstream(echo_upstream))).call_tool(tool, arguments)
    assert isinstance(prepared, str)
    assert host.requests == []
