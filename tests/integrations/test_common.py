"""What the integrations share: importing skillhouse (the client and this package included) imports no
framework; a turn's tools offered all at once or behind ``load_tools``, which takes full and short names and
names what it could not load; a held call's answer as a tool result that says what to do next."""

from __future__ import annotations

import subprocess
import sys

from skillhouse.integrations.common import TurnTools, tool_result
from skillhouse.wire.turns import BoundRelease, CallAnswer, TurnOut

FRAMEWORKS = ("pydantic_ai", "langchain_core", "langgraph", "agents", "google.adk", "google.genai")


def test_importing_skillhouse_and_its_integrations_package_imports_no_framework() -> None:
    probe = (
        "import sys, skillhouse, skillhouse.client, skillhouse.integrations, skillhouse.integrations.common\n"
        f"print(sorted(m for m in {FRAMEWORKS!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _turn() -> TurnOut:
    def tool(name: str) -> dict[str, object]:
        return {"type": "function", "function": {"name": name, "description": f"{name}.\nMore.",
                                                 "parameters": {"type": "object"}}}

    return TurnOut(id="turn_1", tenant="acme", profile="openai", created_at=0.0,
                   releases=[BoundRelease(skill="hollowbrook", version="1.0.0", digest="sha256:0")],
                   tools=[tool("hollowbrook_list_rooms"), tool("hollowbrook_charge"), tool("read_object")])


def test_all_tools_are_offered_unless_deferred() -> None:
    assert [t.name for t in TurnTools(_turn()).offered()] == ["hollowbrook_list_rooms", "hollowbrook_charge", "read_object"]


def test_deferred_tools_offer_load_tools_and_each_operation_once_loaded_by_full_or_short_name() -> None:
    tools = TurnTools(_turn(), deferred=True)
    first = tools.offered()
    assert [t.name for t in first] == ["load_tools", "read_object"]
    assert "hollowbrook_charge: hollowbrook_charge." in first[0].description

    answer = tools.load(["charge", "hollowbrook_list_rooms", "charge", "book_spa"])
    assert [entry["name"] for entry in answer["loaded"]] == ["hollowbrook_charge", "hollowbrook_list_rooms"]
    assert answer["not_loaded"] == ["book_spa"] and "hollowbrook_charge" in answer["message"]
    assert [t.name for t in tools.offered()] == ["load_tools", "read_object", "hollowbrook_charge",
                                                 "hollowbrook_list_rooms"]


def test_a_held_call_is_a_tool_result_saying_to_repeat_the_identical_call_once_approved() -> None:
    held = CallAnswer.model_validate({"error": {"code": "approval-required", "message": "held", "approval_id": "apr_1"}})
    error = tool_result(held)["error"]
    assert error["code"] == "approval-required" and error["approval_id"] == "apr_1"
    assert "approval apr_1" in error["next"] and "repeat the identical call" in error["next"]
    booked = tool_result(CallAnswer.model_validate({"status": 201, "headers": {"content-type": "application/json"},
                                                    "body": '{"booking_id": 7}'}))
    assert booked["status"] == 201 and booked["body"] == {"booking_id": 7} and "next" not in booked
