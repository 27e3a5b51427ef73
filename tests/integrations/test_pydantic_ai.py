"""The pydantic-ai toolset with pydantic-ai's own FunctionModel scripted to book through a real API and the
Hollowbrook house on loopback: ``load_tools`` first (deferred loading), one booking, a held charge that the
model reads as a tool result, and the run ends normally."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tests.client.served import Served
from tests.integrations.scenario import assert_booked_once_and_charge_held, booking, charge_for, house_now

from skillhouse.client import AsyncClient
from skillhouse.integrations.pydantic_ai import SkillhouseToolset
from skillhouse.wire.skills import ReleaseOut


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [part for m in messages if isinstance(m, ModelRequest) for part in m.parts if isinstance(part, ToolReturnPart)]


def test_a_function_model_books_through_the_toolset_and_reads_the_held_charge(served: Served, release: ReleaseOut) -> None:
    offered: list[set[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append({tool.name for tool in info.function_tools})
        returns = _returns(messages)
        step = len(offered)
        if step == 1:
            return ModelResponse(parts=[ToolCallPart("load_tools", {"names": ["create_booking", "charge"]})])
        if step == 2:
            return ModelResponse(parts=[ToolCallPart("hollowbrook_create_booking", booking(1))])
        if step == 3:
            return ModelResponse(parts=[ToolCallPart("hollowbrook_charge", charge_for(returns[-1].content))])
        return ModelResponse(parts=[TextPart("Booked; the charge waits for approval.")])

    async def scenario() -> tuple[str, Any]:
        async with AsyncClient(served.url, served.tokens["run"]) as client:
            toolset = await SkillhouseToolset.bind(client, [f"{release.skill}@{release.version}"], deferred=True)
            result = await Agent(FunctionModel(model), toolsets=[toolset]).run("Book the double room, then charge it.")
            return result.output, _returns(result.all_messages())[-1].content

    before = house_now(served)
    output, charge_result = asyncio.run(scenario())

    assert output == "Booked; the charge waits for approval."
    assert offered[0] == {"load_tools", "read_object"}
    assert {"hollowbrook_create_booking", "hollowbrook_charge"} <= offered[1]
    assert "hollowbrook_list_rooms" not in offered[1]
    assert_booked_once_and_charge_held(served, before, charge_result)
