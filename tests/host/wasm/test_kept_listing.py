"""The wasm runner's kept listing: served only while nothing has entered the guest since it was made.

A listing depends on the guest's state alone; these hold the runner to handing out exactly what the
guest's export would answer, whatever came in between.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.gateway.wire import json_upstream
from tests.host.wasm.conftest import PROBE_APP, ProbeHost

from skillhouse.host import InProcessRunner, TurnHost
from skillhouse.host.wasm_build import BuiltComponent
from skillhouse.host.wasm_runner import WasmRunner

BOOKING = {"room_id": 2, "guest_name": "Mo", "arrival": "2025-05-01", "departure": "2025-05-03"}


@json_upstream
def created(request: dict[str, Any]) -> dict[str, Any]:
    return {"status": 201, "headers": {}, "body": "{}"}


def offered(listing: str) -> list[str]:
    return [tool["name"] for tool in json.loads(listing)["tools"]]


def test_a_tool_loaded_through_call_tool_is_in_the_next_listing_as_in_process(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> None:
    wasm = WasmRunner(TurnHost([hollowbrook], created), cache_dir=cache_dir)
    inprocess = InProcessRunner(TurnHost([hollowbrook], created))
    before = wasm.list_tools()
    assert wasm.list_tools() == before == inprocess.list_tools()
    assert "hollowbrook_create_booking" not in offered(before)

    load = json.dumps({"names": ["create_booking"]})
    assert wasm.call_tool("load_tools", load) == inprocess.call_tool("load_tools", load)

    after = wasm.list_tools()
    assert after == inprocess.list_tools()
    assert "hollowbrook_create_booking" in offered(after)
    wasm.close()


def test_a_tool_a_turn_called_is_in_the_next_listing_as_in_process(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> None:
    def model(request: dict[str, Any]) -> dict[str, Any]:
        if any(m["role"] == "tool" for m in request["messages"]):
            return {"content": "Booked.", "tool_calls": []}
        return {"content": None, "tool_calls": [{"id": "c1", "name": "hollowbrook_create_booking", "arguments": BOOKING}]}

    wasm = WasmRunner(TurnHost([hollowbrook], created, model), cache_dir=cache_dir)
    inprocess = InProcessRunner(TurnHost([hollowbrook], created, model))
    wasm.list_tools()
    wasm.list_tools()
    turn = json.dumps({"prompt": "Book room 2."})
    assert json.loads(wasm.run_turn(turn)) == json.loads(inprocess.run_turn(turn))
    assert wasm.list_tools() == inprocess.list_tools()
    assert "hollowbrook_create_booking" in offered(wasm.list_tools())
    wasm.close()


def test_a_listing_is_never_served_from_an_instance_the_runner_replaced(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> None:
    def failing(request: dict[str, Any]) -> dict[str, Any]:
        raise ConnectionError("the upstream is down")

    wasm = WasmRunner(TurnHost([hollowbrook], json_upstream(failing)), cache_dir=cache_dir)
    wasm.call_tool("load_tools", json.dumps({"names": ["create_booking", "list_rooms"]}))
    loaded = wasm.list_tools()
    assert wasm.list_tools() == loaded
    assert "hollowbrook_list_rooms" in offered(loaded)

    # the host raising mid-call unwinds the guest: the next call gets a fresh instance, which has loaded nothing
    try:
        wasm.call_tool("hollowbrook_create_booking", json.dumps(BOOKING))
    except ConnectionError:
        pass
    else:
        raise AssertionError("the host's exception did not propagate")
    assert wasm.restarts == 1
    fresh = InProcessRunner(TurnHost([hollowbrook], created)).list_tools()
    assert wasm.list_tools() == fresh != loaded
    wasm.close()


class ChangingHost(ProbeHost):
    """The probe's host, whose eager tools can change between calls."""

    tools = '[{"name": "probe"}]'

    def eager_tools(self) -> str:
        return self.tools


def test_a_listing_the_guest_made_by_asking_the_host_is_asked_again_next_time(
    probe_component: BuiltComponent, cache_dir: Path
) -> None:
    # the probe's listing is the host's eager-tools answer: it can change while the guest's state does not
    host = ChangingHost()
    runner = WasmRunner(host, cache_dir=cache_dir, app=PROBE_APP)
    assert json.loads(runner.list_tools()) == [{"name": "probe"}]
    host.tools = '[{"name": "changed"}]'
    assert json.loads(runner.list_tools()) == [{"name": "changed"}]
    runner.close()


def test_each_runner_lists_its_own_guest(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> None:
    one = WasmRunner(TurnHost([hollowbrook], created), cache_dir=cache_dir)
    other = WasmRunner(TurnHost([hollowbrook], created), cache_dir=cache_dir)
    one.list_tools()
    other.list_tools()
    other.call_tool("load_tools", json.dumps({"names": ["create_booking"]}))
    assert "hollowbrook_create_booking" in offered(other.list_tools())
    assert "hollowbrook_create_booking" not in offered(one.list_tools())
    one.close()
    other.close()
