"""The two arms are two tool profiles of the same guest: what each offers, and what a raw-arm model reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillhouse.compiler import compile_dir
from skillhouse.evals import ARMS
from skillhouse.evals.runner import Meter
from skillhouse.host import RUNNER_KINDS, make_runner
from skillhouse.host.models import Call, Calls, ScriptedModel

HOLLOWBROOK = Path(__file__).resolve().parents[2] / "examples" / "hollowbrook"


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    compiled, errors = compile_dir(HOLLOWBROOK)
    assert compiled is not None, [str(e) for e in errors]
    return compiled.document


def nothing_sent(request: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError(f"nothing should be sent: {request}")


@pytest.mark.parametrize("kind", RUNNER_KINDS)
def test_the_tools_arm_offers_what_a_turn_offers_and_the_raw_arm_only_read_object_and_fetch_url(
    release: dict[str, Any], kind: str
) -> None:
    tools = json.loads(make_runner(ARMS["tools"].host([release], nothing_sent, nothing_sent), kind).list_tools())
    assert [t["name"] for t in tools["tools"]] == ["load_tools", "read_object", "fetch_url"]
    assert "hollowbrook_create_booking" in {t["name"] for t in tools["deferred"]}

    raw_runner = make_runner(ARMS["raw"].host([release], nothing_sent, nothing_sent), kind)
    raw = json.loads(raw_runner.list_tools())
    assert ([t["name"] for t in raw["tools"]], raw["deferred"]) == (["read_object", "fetch_url"], [])
    # the operation's file, as a model on the raw path reads it: the request's shape, written out
    page = json.loads(raw_runner.call_tool("read_object", json.dumps({"path": "skill/hollowbrook/create_booking.md"})))
    assert "`POST http://hollowbrook.local:8084/bookings`" in page["ok"]
    assert "application/json" in page["ok"]
    # and no operation is a tool there
    refused = json.loads(raw_runner.call_tool("hollowbrook_create_booking", "{}"))
    assert refused["error"]["code"] == "unknown-tool"


def test_a_call_to_an_eager_tool_the_arm_does_not_offer_is_counted_and_refused_as_unknown(release: dict[str, Any]) -> None:
    model = ScriptedModel([Calls([Call("load_tools", {})])], name="off-profile")
    meter = Meter(model)
    runner = make_runner(ARMS["raw"].host([release], nothing_sent, meter.complete))
    turn = json.loads(runner.run_turn(json.dumps({"prompt": "Book a room.", "max_steps": 1})))
    assert meter.off_profile == 1 and meter.completions == 1
    (answer,) = [json.loads(m["content"]) for m in turn["messages"] if m["role"] == "tool"]
    assert answer["error"]["code"] == "unknown-tool"
