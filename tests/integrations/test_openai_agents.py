"""OpenAI Agents SDK function tools with the SDK's own ScriptedModel (its ``Model`` interface, scripted) booking
through a real API and the Hollowbrook house on loopback: ``load_tools`` first (the operations' ``is_enabled``
follows it), one booking, a held charge read as the tool's output, and the run ends normally."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.items import TResponseOutputItem
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from tests.client.served import Served
from tests.integrations.scenario import assert_booked_once_and_charge_held, booking, charge_for, house_now

from skillhouse.client import AsyncClient
from skillhouse.integrations.openai_agents import SkillhouseTools
from skillhouse.wire.skills import ReleaseOut


def _outputs(call: ModelCall) -> list[Any]:
    items = call.input if isinstance(call.input, list) else []
    return [item["output"] for item in items if isinstance(item, dict) and item.get("type") == "function_call_output"]


def test_a_scripted_model_books_through_the_function_tools_and_reads_the_held_charge(
    served: Served, release: ReleaseOut
) -> None:
    offered: list[set[str]] = []

    def step(answer: Any) -> ModelStep:
        def respond(call: ModelCall) -> list[TResponseOutputItem]:
            offered.append({tool.name for tool in call.tools})
            return answer(call)
        return ModelStep.respond(respond)

    model = ScriptedModel([
        step(lambda call: [function_call("load_tools", {"names": ["create_booking", "charge"]}, call_id="c1")]),
        step(lambda call: [function_call("hollowbrook_create_booking", booking(3), call_id="c2")]),
        step(lambda call: [function_call("hollowbrook_charge", charge_for(_outputs(call)[-1]), call_id="c3")]),
        step(lambda call: [assistant_message("Booked; the charge waits for approval.")]),
    ])

    async def scenario() -> tuple[str, Any]:
        async with AsyncClient(served.url, served.tokens["run"]) as client:
            tools = await SkillhouseTools.bind(client, [f"{release.skill}@{release.version}"], deferred=True)
            agent = Agent(name="concierge", instructions="Book rooms at Hollowbrook.", tools=list(tools.tools), model=model)
            result = await Runner.run(agent, "Book the double room, then charge it.",
                                      run_config=RunConfig(tracing_disabled=True))
            return str(result.final_output), _outputs(model.calls[-1])[-1]

    before = house_now(served)
    output, charge_result = asyncio.run(scenario())

    assert output == "Booked; the charge waits for approval."
    model.assert_complete()
    assert offered[0] == {"load_tools", "read_object"}
    assert {"hollowbrook_create_booking", "hollowbrook_charge"} <= offered[1]
    assert "hollowbrook_list_rooms" not in offered[1]
    assert_booked_once_and_charge_held(served, before, charge_result)
