"""The real guest gives the same answers, byte for byte, in process and as a component.

(The guest suite in tests/guest runs in full against both runners; this adds generated call sequences.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.gateway.wire import json_upstream
from tests.openapi.specs import SPECS, import_of

from skillhouse.host import InProcessRunner, TurnHost
from skillhouse.host.wasm_build import BuiltComponent
from skillhouse.host.wasm_runner import WasmRunner


def echo(request: dict[str, Any]) -> dict[str, Any]:
    return {"status": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(request)}


def tool_names(release: dict[str, Any]) -> list[str]:
    operations = release["operations"]
    return [
        "load_tools",
        "read_object",
        "fetch_url",
        "no_such_tool",
        *(op["tool_name"] for op in operations),
        *(op["name"] for op in operations),
    ]


known = st.characters(codec="utf-8")
scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(known, max_size=12)
values = st.recursive(
    scalars | st.sampled_from(["2025-05-01", "b-1", "Mo", 2]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def runners(
    hollowbrook: dict[str, Any], agent_component: BuiltComponent, cache_dir: Path
) -> tuple[InProcessRunner, WasmRunner]:
    inprocess = InProcessRunner(TurnHost([hollowbrook], json_upstream(echo), objects={"house_rules.md": "Quiet at ten."}))
    wasm = WasmRunner(
        TurnHost([hollowbrook], json_upstream(echo), objects={"house_rules.md": "Quiet at ten."}), cache_dir=cache_dir
    )
    return inprocess, wasm


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_calls_get_identical_answers_from_both_runners(
    runners: tuple[InProcessRunner, WasmRunner], hollowbrook: dict[str, Any], data: st.DataObject
) -> None:
    inprocess, wasm = runners
    name = data.draw(st.sampled_from(tool_names(hollowbrook)))
    keys = st.sampled_from(["room_id", "guest_name", "arrival", "departure", "names", "path", "url", "id"])
    arguments = data.draw(st.dictionaries(keys | st.text(known, max_size=6), values, max_size=5))
    text = data.draw(st.just(json.dumps(arguments)) | st.text(known, max_size=20))

    assert wasm.call_tool(name, text) == inprocess.call_tool(name, text)
    assert wasm.list_tools() == inprocess.list_tools()
    assert wasm.host.requests == inprocess.guest.host.requests  # type: ignore[attr-defined]


def test_deeply_nested_arguments_get_the_same_answer_from_both_runners(
    runners: tuple[InProcessRunner, WasmRunner],
) -> None:
    inprocess, wasm = runners
    deep = "[" * 20000 + "]" * 20000

    answer = wasm.call_tool("hollowbrook_create_booking", deep)

    assert answer == inprocess.call_tool("hollowbrook_create_booking", deep)
    assert json.loads(answer)["error"]["code"] == "invalid-arguments"


def test_a_key_the_older_unicode_database_does_not_know_gets_the_same_answer_from_both_runners(
    runners: tuple[InProcessRunner, WasmRunner],
) -> None:
    inprocess, wasm = runners
    text = json.dumps({"\U00013440": None})  # unassigned in CPython 3.11's Unicode 14, printable in 3.14's

    assert wasm.call_tool("load_tools", text) == inprocess.call_tool("load_tools", text)


def test_a_deeply_nested_turn_request_gets_the_same_answer_from_both_runners(
    runners: tuple[InProcessRunner, WasmRunner],
) -> None:
    inprocess, wasm = runners
    deep = '{"prompt": "hi", "messages": ' + "[" * 20000 + "]" * 20000 + "}"

    answer = wasm.run_turn(deep)
    assert answer == inprocess.run_turn(deep)
    assert json.loads(answer)["stopped"] == "bad-request"


MATRIX_CALLS = [
    {"primitive": "5", "array": ["3", "4"], "object": {"name": "Alex", "description": "a;b=c,d"}},
    {"primitive": "", "array": ["", "x,y"], "object": {"name": ""}},
    {"primitive": "a/b", "array": [], "object": {}},  # refused: '/' and empty containers
]


@pytest.mark.parametrize("call", MATRIX_CALLS)
def test_matrix_path_parameters_are_written_alike_by_both_runners(
    agent_component: BuiltComponent, cache_dir: Path, call: dict[str, Any]
) -> None:
    (path,) = [p for p in SPECS if p.name == "readme-3.0-parameters-style.json"]
    release = import_of(path).compiled
    assert release is not None
    hosts = [TurnHost([release.document], json_upstream(echo)) for _ in range(2)]
    inprocess, wasm = InProcessRunner(hosts[0]), WasmRunner(hosts[1], cache_dir=cache_dir)
    for operation in release.document["operations"]:
        if "/matrix/" in operation["url"]:
            assert wasm.call_tool(operation["tool_name"], json.dumps(call)) == inprocess.call_tool(operation["tool_name"], json.dumps(call))
    assert wasm.host.requests == inprocess.guest.host.requests  # type: ignore[attr-defined]
    assert all(";primitive" in request["url"] for request in wasm.host.requests)
    assert len(wasm.host.requests) == (0 if call["array"] == [] else 2)
