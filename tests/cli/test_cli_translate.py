"""``skillhouse translate``: the request a call becomes, or the refusal with exit status 1."""

from __future__ import annotations

import json

from tests.conftest import HOLLOWBROOK
from typer.testing import CliRunner

from skillhouse.cli import app

runner = CliRunner()


def translate(*args: str) -> tuple[int, dict[str, object]]:
    result = runner.invoke(app, ["translate", *args])
    return result.exit_code, json.loads(result.stdout)


def test_translate_prints_the_request_for_a_short_name() -> None:
    code, request = translate(
        str(HOLLOWBROOK),
        "create_booking",
        '{"room_id": 3, "guest_name": "Ana", "arrival": "2025-06-01", "departure": "2025-06-03"}',
    )
    assert code == 0
    assert request == {
        "method": "POST",
        "url": "http://hollowbrook.local:8084/bookings",
        "headers": {"Content-Type": "application/json"},
        "body": '{"arrival":"2025-06-01","departure":"2025-06-03","guest_name":"Ana","room_id":3}',
    }


def test_translate_takes_the_full_tool_name() -> None:
    code, request = translate(str(HOLLOWBROOK), "hollowbrook_cancel_booking", '{"booking_id": "b 1;x"}')
    assert code == 0
    assert request["url"] == "http://hollowbrook.local:8084/bookings/b%201%3Bx"


def test_translate_refuses_invalid_arguments_with_every_violation_and_exit_1() -> None:
    code, answer = translate(str(HOLLOWBROOK), "create_booking", '{"room_id": "3", "pets": 1}')
    assert code == 1
    error = answer["error"]
    assert isinstance(error, dict) and error["code"] == "invalid-arguments"
    assert [v["path"] for v in error["violations"]] == [
        "$.arrival",
        "$.departure",
        "$.guest_name",
        "$.room_id",
        "$.pets",
    ]


def test_translate_refuses_arguments_that_are_not_json() -> None:
    code, answer = translate(str(HOLLOWBROOK), "list_rooms", "{min_guests: 2}")
    assert code == 1
    assert answer["error"]["violations"][0]["problem"] == "not-json"  # type: ignore[index]


def test_translate_of_an_unknown_tool_names_the_nearest() -> None:
    code, answer = translate(str(HOLLOWBROOK), "create_bookng", "{}")
    assert code == 1
    assert answer["error"]["code"] == "unknown-tool"  # type: ignore[index]
    assert answer["error"]["candidates"][0] == "hollowbrook_create_booking"  # type: ignore[index]
