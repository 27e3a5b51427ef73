"""LangChain tools in LangGraph's prebuilt agent, its model LangChain's GenericFakeChatModel scripted to book
through a real API and the Hollowbrook house on loopback: the model is bound afresh at each step to the tools
offered then (``load_tools`` first), one booking, a held charge read as a tool message, the run ends normally."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.prebuilt import create_react_agent
from tests.client.served import Served
from tests.integrations.scenario import assert_booked_once_and_charge_held, booking, charge_for, house_now

from skillhouse.client import Client
from skillhouse.integrations.langchain import SkillhouseTools
from skillhouse.wire.skills import ReleaseOut


class ToolBindingFake(GenericFakeChatModel):
    """GenericFakeChatModel that takes the tools bound to it (and answers its scripted messages regardless)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        return self


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_langgraph_agent_books_through_the_tools_and_reads_the_held_charge(served: Served, release: ReleaseOut) -> None:
    offered: list[set[str]] = []
    seen: list[list[BaseMessage]] = []

    def script() -> Iterator[AIMessage]:
        yield AIMessage("", tool_calls=[{"name": "load_tools", "args": {"names": ["create_booking", "charge"]}, "id": "c1"}])
        yield AIMessage("", tool_calls=[{"name": "hollowbrook_create_booking", "args": booking(2), "id": "c2"}])
        booked = next(m for m in reversed(seen[-1]) if isinstance(m, ToolMessage))
        yield AIMessage("", tool_calls=[{"name": "hollowbrook_charge", "args": charge_for(booked.content), "id": "c3"}])
        yield AIMessage("Booked; the charge waits for approval.")

    fake = ToolBindingFake(messages=script())

    with Client(served.url, served.tokens["run"]) as client:
        tools = SkillhouseTools.bind(client, [f"{release.skill}@{release.version}"], deferred=True)

        def model(state: dict[str, Any], runtime: Any) -> Runnable[LanguageModelInput, BaseMessage]:
            now: list[BaseTool] = tools.offered()
            offered.append({tool.name for tool in now})
            seen.append(list(state["messages"]))
            return fake.bind_tools(now)

        before = house_now(served)
        final = create_react_agent(model, tools.all()).invoke({"messages": [("user", "Book the double room, then charge it.")]})

    messages = final["messages"]
    assert messages[-1].content == "Booked; the charge waits for approval."
    assert offered[0] == {"load_tools", "read_object"}
    assert {"hollowbrook_create_booking", "hollowbrook_charge"} <= offered[1]
    assert "hollowbrook_list_rooms" not in offered[1]
    charged = [m for m in messages if isinstance(m, ToolMessage)][-1]
    assert charged.name == "hollowbrook_charge" and charged.status == "success"
    assert_booked_once_and_charge_held(served, before, charged.content)
