"""The guest's only way out is the WIT host functions, and a broken or runaway guest leaves the host well.

The probe component is built like the real guest (WASI stubbed) from a small app that tries what a
hostile or broken guest would: open a file, open a socket, raise, spin forever.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import pytest

from skillhouse.host.wasm_runner import DEFAULT_MEMORY_LIMIT, WasmRunner

MB = 1024 * 1024

Probe = Callable[..., tuple[WasmRunner, Any]]


def call(runner: WasmRunner, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return json.loads(runner.call_tool(name, json.dumps(arguments or {})))


def test_guest_code_opening_a_file_gets_nothing_and_the_next_call_runs_on_a_fresh_instance(
    probe: Probe,
) -> None:
    runner, _ = probe()
    assert call(runner, "count") == {"calls": 1}

    answer = call(runner, "open-file", {"path": "/etc/passwd"})

    assert answer["error"]["code"] == "guest-trap"
    assert "root:" not in json.dumps(answer)
    assert call(runner, "count") == {"calls": 1}  # fresh instance: the count started again


def test_guest_code_opening_a_socket_connects_to_nothing(probe: Probe) -> None:
    runner, _ = probe()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)

        answer = call(runner, "open-socket", {"port": listener.getsockname()[1]})

        assert "connected" not in answer
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection is waiting: the guest never reached the listener


def test_a_trap_answers_that_call_with_guest_trap_and_the_next_call_works(probe: Probe) -> None:
    runner, host = probe()

    assert call(runner, "raise")["error"]["code"] == "guest-trap"

    assert call(runner, "echo", {"n": 1}) == {"status": 200, "headers": {}, "body": '{"n": 1}'}
    assert host.requests == ['{"n": 1}']
    assert runner.restarts == 1


def test_a_runaway_call_is_stopped_by_epoch_and_the_next_call_works(probe: Probe) -> None:
    runner, _ = probe(timeout=0.2)
    assert call(runner, "count") == {"calls": 1}

    assert call(runner, "spin")["error"]["code"] == "guest-timeout"

    assert call(runner, "count") == {"calls": 1}
    assert json.loads(runner.list_tools()) == [{"name": "probe"}]


def test_a_runaway_turn_is_stopped_and_the_next_turn_answers(probe: Probe) -> None:
    runner, _ = probe(timeout=0.2)

    assert json.loads(runner.run_turn(json.dumps({"then": "spin"})))["error"]["code"] == "guest-timeout"

    assert json.loads(runner.run_turn("{}")) == {"content": "done", "tool_calls": []}


def test_time_the_host_spends_for_the_guest_does_not_count_against_the_guest(probe: Probe) -> None:
    runner, _ = probe(timeout=0.1, hold=0.3)

    assert json.loads(runner.run_turn("{}")) == {"content": "done", "tool_calls": []}


def test_one_runner_stopping_its_guest_leaves_another_runner_alone(probe: Probe) -> None:
    stopped, _ = probe(timeout=0.1)
    other, _ = probe(timeout=5.0)
    assert call(other, "count") == {"calls": 1}

    assert call(stopped, "spin")["error"]["code"] == "guest-timeout"

    assert call(other, "count") == {"calls": 2}
    assert other.restarts == 0


def test_an_exception_in_the_host_propagates_and_the_next_call_gets_a_fresh_guest(probe: Probe) -> None:
    runner, host = probe(fail_complete=True)

    with pytest.raises(ConnectionError):
        runner.run_turn("{}")

    host.fail_complete = False
    assert json.loads(runner.run_turn("{}")) == {"content": "done", "tool_calls": []}


def test_a_guest_holding_more_than_its_memory_limit_traps_and_the_next_call_starts_afresh(probe: Probe) -> None:
    runner, _ = probe(memory_limit=64 * MB)
    assert call(runner, "hoard", {"mb": 16}) == {"held_mb": 16}  # within the limit: held across calls
    assert call(runner, "hoard", {"mb": 16}) == {"held_mb": 32}

    answer = call(runner, "hoard", {"mb": 48})

    assert answer["error"]["code"] == "guest-trap"
    assert call(runner, "hoard", {"mb": 16}) == {"held_mb": 16}  # a fresh instance holds nothing
    assert runner.restarts == 1


def test_arguments_larger_than_the_guests_memory_never_reach_it(probe: Probe) -> None:
    runner, _ = probe(memory_limit=32 * MB)

    answer = json.loads(runner.call_tool("count", json.dumps({"pad": "x" * (40 * MB)})))

    assert answer["error"]["code"] == "guest-trap"
    assert call(runner, "count") == {"calls": 1}


def test_a_runners_guest_memory_is_limited_by_default(probe: Probe) -> None:
    runner, _ = probe()
    assert runner.memory_limit == DEFAULT_MEMORY_LIMIT
    assert call(runner, "hoard", {"mb": DEFAULT_MEMORY_LIMIT // MB})["error"]["code"] == "guest-trap"


def test_arguments_cross_into_the_guest_byte_for_byte_whatever_their_characters_and_size(probe: Probe) -> None:
    runner, host = probe()
    for text in ("", "é", "\x00 NUL", "\U0001f600 \ud7ff \ue000", "x" * (3 * MB), '"\\\n'):
        arguments = json.dumps({"s": text}, ensure_ascii=False)

        answer = json.loads(runner.call_tool("echo", arguments))

        assert answer["body"] == arguments
        assert host.requests[-1] == arguments
    assert runner.restarts == 0


def test_an_export_called_with_more_arguments_than_any_export_takes_is_refused_before_the_guest_runs(
    probe: Probe,
) -> None:
    runner, _ = probe()
    assert call(runner, "count") == {"calls": 1}
    exports = runner._exports
    assert exports is not None

    with pytest.raises(IndexError):
        exports.call("call-tool", "count", "{}", "{}")

    assert call(runner, "count") == {"calls": 2}  # the same instance, entered once more
