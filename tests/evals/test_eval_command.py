"""``skillhouse eval``: the Hollowbrook task set against the scripted model, and a task set against a fake
OpenAI-compatible server on loopback that answers scripted chat completions with tool calls and usage.

Both run the command as a person would (the narrowed Typer app, in process), in both arms, through a real
gateway to the Hollowbrook house on loopback; a raw-path run the script makes fail is counted as a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from tests.api.served import serving_in_thread
from typer.testing import CliRunner

from skillhouse.cli import command_app
from skillhouse.evals import wilson_interval

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "evals" / "hollowbrook.yaml"
HOLLOWBROOK = ROOT / "examples" / "hollowbrook"
STAY = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2031-06-01", "departure": "2031-06-03"}

SUMMARY_KEYS = {"task", "arm", "runs", "successes", "success_rate", "interval", "calls_per_task",
                "failed_calls_per_task", "model_calls_per_task", "tokens", "wrong_side_effects",
                "duplicate_side_effects", "seconds_per_task"}
RUN_KEYS = {"task", "arm", "run", "success", "stopped", "error", "calls", "failed_calls", "last_failure", "model_calls",
            "off_profile_calls", "tokens", "wrong_side_effects", "duplicate_side_effects", "approvals", "checks",
            "seconds", "final"}


def eval_cli(*args: str) -> Any:
    argv = ["eval", *args]
    return CliRunner().invoke(command_app(argv), argv)


def summary(report: dict[str, Any], task: str, arm: str) -> dict[str, Any]:
    (found,) = [s for s in report["tasks"] if s["task"] == task and s["arm"] == arm]
    return found


def assert_report_shape(report: dict[str, Any], tasks: list[str], runs: int) -> None:
    assert report["version"] == 1
    assert report["arms"] == ["tools", "raw"]
    assert report["runs_per_task"] == runs and report["confidence"] == 0.95
    assert {"tasks_file", "model", "guest", "started_at", "finished_at"} <= set(report)
    assert report["interrupted"] is False
    assert report["base_url"] is None or report["base_url"].startswith("http")
    assert [(s["task"], s["arm"]) for s in report["tasks"]] == [(t, a) for t in tasks for a in ("tools", "raw")]
    assert [s["arm"] for s in report["totals"]] == ["tools", "raw"] and {s["task"] for s in report["totals"]} == {"*"}
    for entry in [*report["tasks"], *report["totals"]]:
        assert set(entry) == SUMMARY_KEYS
        assert set(entry["tokens"]) == {"input", "output", "per_task"}
        low, high = entry["interval"]
        assert 0 <= low <= entry["success_rate"] <= high <= 1
    assert len(report["runs"]) == len(tasks) * 2 * runs
    for run in report["runs"]:
        assert set(run) == RUN_KEYS
        assert set(run["tokens"]) == {"input", "output"}
        assert run["checks"] and all(set(c) == {"check", "passed", "detail", "wrong", "duplicate"} for c in run["checks"])
        assert run["success"] == (run["stopped"] == "answer" and all(c["passed"] for c in run["checks"]))


def test_the_hollowbrook_set_against_the_scripted_model_counts_the_raw_paths_missing_content_type_as_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLHOUSE_MODEL", raising=False)
    out = tmp_path / "report.json"
    result = eval_cli(str(TASKS), "--model", "scripted", "--runs", "2", "--guest", "inprocess", "--json", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert_report_shape(report, ["check-then-book", "list-rooms", "book-once", "book-and-charge", "charge-denied"], runs=2)

    tools, raw = report["totals"]
    assert (tools["successes"], tools["runs"]) == (10, 10)
    assert (raw["successes"], raw["runs"]) == (8, 10)
    assert tools["interval"] == [round(v, 4) for v in wilson_interval(10, 10)]

    # the third failure on the raw path: no Content-Type, 415 three times, no booking: a failed run
    failed = summary(report, "book-once", "raw")
    assert (failed["successes"], failed["success_rate"], failed["failed_calls_per_task"]) == (0, 0.0, 3.0)
    raw_runs = [r for r in report["runs"] if r["task"] == "book-once" and r["arm"] == "raw"]
    assert [r["success"] for r in raw_runs] == [False, False]
    assert raw_runs[0]["checks"][0]["detail"].startswith("0 matching")
    assert raw_runs[0]["last_failure"] == "HTTP 415 unsupported-media-type"
    # the same move through the tools arm: three sends, one room (the gateway's idempotency)
    resent = summary(report, "book-once", "tools")
    assert (resent["successes"], resent["calls_per_task"], resent["duplicate_side_effects"]) == (2, 4.0, 0)

    # the charge was held, approved by the harness, repeated by the agent, and ran once
    for run in [r for r in report["runs"] if r["task"] == "book-and-charge"]:
        assert run["success"], run
        assert [a["decision"] for a in run["approvals"]] == ["approve"]
        assert run["approvals"][0]["approval_id"].startswith("apr_")
        assert "charged" in run["final"]
    # denied: the agent is told, its repeat is refused, and nothing is charged
    for run in [r for r in report["runs"] if r["task"] == "charge-denied"]:
        assert run["success"], run
        assert [a["decision"] for a in run["approvals"]] == ["deny"]
        assert run["last_failure"] == "approval-denied"
    # the scripted model reports no usage: no tokens, rather than invented ones
    assert tools["tokens"] == {"input": 0, "output": 0, "per_task": 0}
    assert "all tasks" in result.output and "book-and-charge" in result.output


def tool_call(index: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def completion(step: int, content: str | None, calls: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{step}", "object": "chat.completion", "model": "fake-small",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 100 + 10 * step, "completion_tokens": 7, "total_tokens": 107 + 10 * step},
    }


def fake_openai() -> tuple[FastAPI, list[dict[str, Any]]]:
    """A Chat Completions server whose answers are a script per arm, told apart by the tools it is offered."""
    app = FastAPI()
    seen: list[dict[str, Any]] = []
    post = {"method": "POST", "url": "http://hollowbrook.local:8084/bookings", "body": json.dumps(STAY)}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.json()
        seen.append({"authorization": request.headers.get("authorization"), "body": body})
        tools = [t["function"]["name"] for t in body.get("tools", [])]
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if "load_tools" in tools:
            script = [
                (None, [tool_call(1, "load_tools", {"names": ["create_booking"]})]),
                ("Booking it.", [tool_call(2, "hollowbrook_create_booking", STAY)]),
                ("Booked: booking bk_0001.", []),
            ]
        else:  # the raw arm: a call to a tool it was not offered, then the booking without Content-Type
            script = [
                (None, [tool_call(1, "load_tools", {"names": ["create_booking"]})]),
                (None, [tool_call(2, "read_object", {"path": "skill/hollowbrook/create_booking.md"})]),
                (None, [tool_call(3, "fetch_url", post)]),
                (None, [tool_call(4, "fetch_url", post)]),
                ("The guesthouse refused the booking.", []),
            ]
        content, calls = script[min(step, len(script) - 1)]
        return completion(step, content, calls)

    return app, seen


def test_a_fake_openai_compatible_server_in_both_arms_counts_tokens_calls_and_the_raw_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        f"skills: [{HOLLOWBROOK}]\n"
        "tasks:\n"
        "  - id: book\n"
        "    prompt: Book the double room for Ada Lovelace from 1 to 3 June 2031.\n"
        "    checks:\n"
        "      - {get: /bookings, list: bookings, count: 1, where: {room_id: 2, arrival: '2031-06-01'}}\n"
        "      - {answer_contains: bk_0001}\n"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-eval")
    app, seen = fake_openai()
    out = tmp_path / "report.json"
    with serving_in_thread(app) as url:
        result = eval_cli(str(tasks), "--model", "openai:fake-small", "--base-url", f"{url}/v1", "--runs", "2",
                          "--guest", "inprocess", "--json", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert_report_shape(report, ["book"], runs=2)
    assert (report["model"], report["base_url"]) == ("openai:fake-small", f"{url}/v1")

    tools, raw = summary(report, "book", "tools"), summary(report, "book", "raw")
    assert (tools["successes"], tools["calls_per_task"], tools["model_calls_per_task"]) == (2, 2.0, 3.0)
    assert (raw["successes"], raw["calls_per_task"], raw["model_calls_per_task"]) == (0, 4.0, 5.0)
    # the provider's usage, summed: steps 0..2 (tools) and 0..4 (raw), twice each
    assert tools["tokens"] == {"input": 2 * (100 + 110 + 120), "output": 2 * 3 * 7, "per_task": 351.0}
    assert raw["tokens"]["input"] == 2 * (100 + 110 + 120 + 130 + 140) and raw["tokens"]["output"] == 2 * 5 * 7

    raw_run = next(r for r in report["runs"] if r["arm"] == "raw")
    assert raw_run["success"] is False and raw_run["off_profile_calls"] == 1
    # load_tools (not offered), then two 415s: three failed calls of four
    assert raw_run["failed_calls"] == 3 and raw_run["last_failure"] == "HTTP 415 unsupported-media-type"
    assert [c["passed"] for c in raw_run["checks"]] == [False, False]

    # every request carried the key; each arm was offered its own profile
    assert {s["authorization"] for s in seen} == {"Bearer sk-test-eval"}
    offered = {tuple(sorted(t["function"]["name"] for t in s["body"]["tools"])) for s in seen
               if not any(m["role"] == "assistant" for m in s["body"]["messages"])}
    assert offered == {("fetch_url", "load_tools", "read_object"), ("fetch_url", "read_object")}
    # and told how to use them: the guest's opening about load_tools in one arm, the raw path's in the other
    systems = {tuple(sorted(t["function"]["name"] for t in s["body"]["tools"])): s["body"]["messages"][0]["content"]
               for s in seen}
    raw_system, tools_system = systems[("fetch_url", "read_object")], systems[("fetch_url", "load_tools", "read_object")]
    assert "Load the operations you need with load_tools" in tools_system and "load_tools" not in raw_system
    assert "make each request yourself with fetch_url" in raw_system
    assert raw_system.split("Skills:")[1] == tools_system.split("Skills:")[1].replace(
        "Operations: cancel_booking, charge, check_availability, create_booking, list_rooms.", "Operations: no operations.")


def test_the_wilson_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 5)
    assert low == 0.0 and high == pytest.approx(0.4345, abs=1e-4)
    low, high = wilson_interval(8, 10)
    assert (low, high) == (pytest.approx(0.4902, abs=1e-4), pytest.approx(0.9433, abs=1e-4))
    low, _ = wilson_interval(8, 10, confidence=0.5)
    assert low > 0.49


def test_a_task_file_with_problems_is_refused_with_every_problem_and_nothing_runs(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        "skills: [nowhere]\nupstream: elsewhere\ntasks:\n"
        "  - id: Bad Id\n    prompt: ''\n    approval: maybe\n    checks: [{get: bookings}]\n"
    )
    result = eval_cli(str(tasks), "--model", "scripted")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0] == f"error: invalid-task-set: {tasks}:"
    for expected in ("skills[0]: nowhere is not a directory", "upstream: one of hollowbrook", "tasks[0].id:",
                     "tasks[0].prompt:", "tasks[0].approval: one of approve, deny, leave", "tasks[0].checks[0]:"):
        assert any(line.strip().startswith(expected) for line in lines[1:]), (expected, lines)


def test_a_model_spelling_that_names_nothing_is_refused_before_any_run() -> None:
    result = eval_cli(str(TASKS), "--model", "llama", "--guest", "inprocess")
    assert result.exit_code == 2
    assert result.output.startswith("error: model-unavailable: ")


def test_the_documented_report_has_the_reports_fields_and_every_option_is_documented() -> None:
    from tests.docs.pages import FENCE, page

    text = page("evaluations.md")
    (example,) = [json.loads(m.group(3)) for m in FENCE.finditer(text) if m.group(1) == "json"]
    assert set(example["tasks"][0]) == SUMMARY_KEYS
    assert set(example["runs"][0]) == RUN_KEYS
    assert {"version", "tasks_file", "model", "base_url", "guest", "runs_per_task", "started_at", "finished_at", "interrupted", "arms",
            "confidence", "tasks", "totals", "runs"} == set(example)
    import typer.main

    group: Any = typer.main.get_command(command_app(["eval"]))
    options = [p for p in group.commands["eval"].params if p.param_type_name == "option"]
    assert len(options) >= 10
    for option in options:
        assert f"`{option.opts[0]}" in text, option.opts


def test_an_anthropic_endpoint_runs_the_tools_arm_and_its_usage_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.host.models.fake_provider import fake_provider

    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(f"skills: [{HOLLOWBROOK}]\ntasks:\n  - id: book\n    prompt: Book the double room.\n"
                     "    checks: [{get: /bookings, list: bookings, count: 1, where: {room_id: 2}}]\n")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-eval")
    monkeypatch.delenv("SKILLHOUSE_DEFERRED", raising=False)

    def message(usage: tuple[int, int], *blocks: dict[str, Any]) -> dict[str, Any]:
        return {"id": "msg", "type": "message", "role": "assistant", "content": list(blocks),
                "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}

    out = tmp_path / "report.json"
    with fake_provider() as provider:
        provider.reply(message((900, 20), {"type": "tool_use", "id": "tu_1", "name": "load_tools",
                                           "input": {"names": ["create_booking"]}}))
        provider.reply(message((1100, 40), {"type": "tool_use", "id": "tu_2", "name": "hollowbrook_create_booking",
                                            "input": STAY}))
        provider.reply(message((1300, 15), {"type": "text", "text": "Booked: bk_0001."}))
        result = eval_cli(str(tasks), "--model", "anthropic:claude-test", "--base-url", provider.url, "--arm", "tools",
                          "--runs", "1", "--guest", "inprocess", "--json", str(out))
        assert provider.received[0].headers["x-api-key"] == "sk-ant-test-eval"
    assert result.exit_code == 0, result.output
    (run,) = json.loads(out.read_text())["runs"]
    assert (run["success"], run["calls"], run["model_calls"]) == (True, 2, 3)
    assert run["tokens"] == {"input": 3300, "output": 75}
