"""A Google ADK toolset in an ``LlmAgent`` run by ADK's in-memory runner, its model a stub of ADK's model
interface (``BaseLlm.generate_content_async``) scripted to book through a real API and the Hollowbrook house
on loopback: ``load_tools`` first (the toolset's tools are asked for again before each model call), one
booking, a held charge read as the function response, and the run ends normally."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from tests.client.served import Served
from tests.integrations.scenario import assert_booked_once_and_charge_held, booking, charge_for, house_now

from skillhouse.client import AsyncClient
from skillhouse.integrations.google_adk import SkillhouseToolset
from skillhouse.wire.skills import ReleaseOut

Step = Callable[[list[Any]], types.Part]


def _responses(request: LlmRequest) -> list[Any]:
    return [part.function_response.response for content in request.contents for part in content.parts or []
            if part.function_response is not None]


class ScriptedLlm(BaseLlm):
    """ADK's model interface answering scripted parts, recording the tools each request offered."""

    script: list[Step]
    offered: list[set[str]]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.offered.append(set(llm_request.tools_dict))
        part = self.script[len(self.offered) - 1](_responses(llm_request))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def _call(name: str, args: dict[str, Any]) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def test_an_adk_agent_books_through_the_toolset_and_reads_the_held_charge(served: Served, release: ReleaseOut) -> None:
    model = ScriptedLlm(model="scripted", offered=[], script=[
        lambda seen: _call("load_tools", {"names": ["create_booking", "charge"]}),
        lambda seen: _call("hollowbrook_create_booking", booking(4)),
        lambda seen: _call("hollowbrook_charge", charge_for(seen[-1])),
        lambda seen: types.Part(text="Booked; the charge waits for approval."),
    ])

    async def scenario() -> tuple[str, Any]:
        async with AsyncClient(served.url, served.tokens["run"]) as client:
            toolset = await SkillhouseToolset.bind(client, [f"{release.skill}@{release.version}"], deferred=True)
            agent = LlmAgent(name="concierge", model=model, instruction="Book rooms at Hollowbrook.", tools=[toolset])
            runner = InMemoryRunner(agent=agent, app_name="hollowbrook")
            session = await runner.session_service.create_session(app_name="hollowbrook", user_id="ada")
            said = types.Content(role="user", parts=[types.Part(text="Book the double room, then charge it.")])
            events = [event async for event in runner.run_async(user_id="ada", session_id=session.id, new_message=said)]
            text = "".join(p.text or "" for e in events if e.content for p in e.content.parts or [])
            charged = [p.function_response.response for e in events if e.content for p in e.content.parts or []
                       if p.function_response is not None and p.function_response.name == "hollowbrook_charge"]
            return text, charged[-1]

    before = house_now(served)
    output, charge_result = asyncio.run(scenario())

    assert output == "Booked; the charge waits for approval."
    assert model.offered[0] == {"load_tools", "read_object"}
    assert {"hollowbrook_create_booking", "hollowbrook_charge"} <= model.offered[1]
    assert "hollowbrook_list_rooms" not in model.offered[1]
    assert_booked_once_and_charge_held(served, before, charge_result)
