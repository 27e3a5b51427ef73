"""The agent loop through the runner interface, with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .conftest import GuestUnderTest

GuestOf = Callable[..., GuestUnderTest]
BOOKING = {"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-03"}


class ScriptedModel:
    """Answers each completion with the next scripted answer and keeps every request it was sent."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        return self.answers[min(len(self.requests), len(self.answers)) - 1]


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"content": None, "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def test_a_booking_is_load_tools_and_one_call(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    model = ScriptedModel(
        [
            call("c1", "load_tools", {"names": ["create_booking"]}),
            call("c2", "hollowbrook_create_booking", json.dumps(BOOKING)),
            {"content": "Booked: b-1.", "tool_calls": []},
        ]
    )
    booked = {"status": 201, "headers": {}, "body": '{"id": "b-1"}'}
    guest = guest_of([hollowbrook], fetch=lambda request: booked, complete=model)
    turn = json.loads(guest.runner.run_turn(json.dumps({"prompt": "Book room 2 for Mo, 1 to 3 May."})))
    assert turn["stopped"] == "answer"
    assert turn["final"] == "Booked: b-1."
    assert turn["steps"] == 3
    assert [m["role"] for m in turn["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    # the model reads the JSON body as part of the answer, not quoted inside it
    assert json.loads(turn["messages"][4]["content"]) == {"status": 201, "headers": {}, "body": {"id": "b-1"}}
    assert turn["messages"][4]["tool_call_id"] == "c2"
    assert len(guest.host.requests) == 1
    first, second = model.requests[0], model.requests[1]
    assert "hollowbrook" in first["system"] and "create_booking" in first["system"]
    assert "hollowbrook_create_booking" in [t["name"] for t in first["deferred"]]
    assert "hollowbrook_create_booking" in [t["name"] for t in second["tools"]]
    assert "hollowbrook_create_booking" not in [t["name"] for t in second["deferred"]]


def test_the_loop_stops_at_the_step_limit(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    model = ScriptedModel([call("c", "read_object", {"path": "skill/hollowbrook"})])
    guest = guest_of([hollowbrook], complete=model)
    turn = json.loads(guest.runner.run_turn(json.dumps({"prompt": "loop", "max_steps": 3})))
    assert turn["stopped"] == "step-limit"
    assert turn["final"] is None
    assert len(model.requests) == 3


def test_a_model_error_ends_the_turn_with_it(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    failing = ScriptedModel([{"error": {"code": "model-unavailable", "message": "down"}}])
    turn = json.loads(guest_of([hollowbrook], complete=failing).runner.run_turn(json.dumps({"prompt": "hi"})))
    assert turn["stopped"] == "model-error"
    assert turn["error"]["code"] == "model-unavailable"


def test_a_turn_request_that_is_not_json_is_a_bad_request(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    guest = guest_of([hollowbrook])
    assert json.loads(guest.runner.run_turn("{nope"))["stopped"] == "bad-request"
    assert json.loads(guest.runner.run_turn("{}"))["stopped"] == "bad-request"


def test_the_callers_system_text_follows_the_guests(hollowbrook: dict[str, Any], guest_of: GuestOf) -> None:
    model = ScriptedModel([{"content": "hello", "tool_calls": []}])
    guest = guest_of([hollowbrook], complete=model)
    turn = json.loads(guest.runner.run_turn(json.dumps({"prompt": "hi", "system": "Answer in French."})))
    assert turn["final"] == "hello"
    assert model.requests[0]["system"].endswith("Answer in French.")


def test_tool_messages_carry_the_parsed_body_and_the_headers_that_matter(
    hollowbrook: dict[str, Any], guest_of: GuestOf
) -> None:
    model = ScriptedModel(
        [
            call("c1", "hollowbrook_create_booking", BOOKING),
            call("c2", "hollowbrook_create_booking", BOOKING),
            {"content": "Done.", "tool_calls": []},
        ]
    )
    answers = iter(
        [
            {
                "status": 201,
                "headers": {
                    "Date": "Tue, 01 Dec 2026 18:00:00 GMT",
                    "Server": "nginx",
                    "Content-Type": "application/json; charset=utf-8",
                    "Content-Length": "13",
                    "Location": "/bookings/b-1",
                    "X-RateLimit-Remaining": "9",
                },
                "body": '{"id": "b-1"}',
            },
            {"status": 429, "headers": {"retry-after": "30", "content-type": "text/plain"}, "body": "slow down"},
        ]
    )
    guest = guest_of([hollowbrook], fetch=lambda request: next(answers), complete=model)
    turn = json.loads(guest.runner.run_turn(json.dumps({"prompt": "Book twice."})))
    results = [json.loads(m["content"]) for m in turn["messages"] if m["role"] == "tool"]
    assert results == [
        {"status": 201, "headers": {"Location": "/bookings/b-1", "X-RateLimit-Remaining": "9"}, "body": {"id": "b-1"}},
        {"status": 429, "headers": {"retry-after": "30", "content-type": "text/plain"}, "body": "slow down"},
    ]
