"""skillhouse's tools as LangChain tools, for LangChain agents and LangGraph (``pip install 'skillhouse[langchain]'``).

::

    from langgraph.prebuilt import create_react_agent
    from skillhouse.client import Client
    from skillhouse.integrations.langchain import SkillhouseTools

    with Client(url, token) as client:
        tools = SkillhouseTools.bind(client, ["hollowbrook@1.0.0"])
        agent = create_react_agent(chat_model, tools.all())
        agent.invoke({"messages": [("user", "Book the double room ...")]})

Each tool is a ``StructuredTool`` whose arguments are the operation's JSON Schema; calling it sends the call
to skillhouse (``POST /v1/turns/{id}/calls``: the guest builds the request, the gateway polices and sends it),
never to an upstream. Its result is the JSON text the model reads, a held request included (a person must
approve it; repeat the identical call after), so the run goes on. With a ``Client`` the tools run
synchronously, with an ``AsyncClient`` they are coroutines (``ainvoke``).

Deferred loading (``deferred=True``): :meth:`SkillhouseTools.all` is every tool for the tool-running node
(``load_tools`` among them) and :meth:`SkillhouseTools.offered` the ones to bind to the model at this step:
``load_tools``, ``read_object`` and each operation once loaded. LangGraph's prebuilt agent takes a function
of the state for its model, which binds ``offered()`` afresh at every step (see docs/integrations.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from langchain_core.tools import BaseTool, StructuredTool

from skillhouse.client import AsyncClient, Client, OfferedTool
from skillhouse.client.operations import SkillSpec
from skillhouse.integrations.common import LOAD_TOOLS, TurnTools, result_text, tool_result
from skillhouse.wire.skills import Profile
from skillhouse.wire.turns import TurnOut


class SkillhouseTools:
    """The tools of one bound turn as LangChain tools; every call goes through skillhouse with ``client``."""

    def __init__(self, client: Client | AsyncClient, turn: TurnOut, *, deferred: bool = False) -> None:
        self.client = client
        self.turn = TurnTools(turn, deferred)
        offered = [*([self.turn.load_tools_tool()] if deferred else []), *self.turn.tools.values()]
        self._tools = {tool.name: self._tool(tool) for tool in offered}

    @classmethod
    def bind(cls, client: Client, skills: Sequence[SkillSpec], *, profile: Profile = "openai",
             deferred: bool = False) -> Self:
        """Bind ``skills`` (``"hollowbrook@1.0.0"``) into a new turn with a blocking client."""
        return cls(client, client.bind(skills, profile), deferred=deferred)

    @classmethod
    async def abind(cls, client: AsyncClient, skills: Sequence[SkillSpec], *, profile: Profile = "openai",
                    deferred: bool = False) -> Self:
        """Bind ``skills`` into a new turn with an asynchronous client."""
        return cls(client, await client.bind(skills, profile), deferred=deferred)

    def all(self) -> list[BaseTool]:
        """Every tool this turn may call (``load_tools`` first when deferred): the tool node's tools."""
        return list(self._tools.values())

    def offered(self) -> list[BaseTool]:
        """The tools to bind to the model now (all of them unless deferred)."""
        return [self._tools[tool.name] for tool in self.turn.offered()]

    def _load(self, arguments: dict[str, Any]) -> str:
        names = arguments.get("names")
        return result_text(self.turn.load([str(n) for n in names] if isinstance(names, list) else []))

    def _tool(self, tool: OfferedTool) -> StructuredTool:
        name, schema = tool.name, {"title": tool.name, **tool.parameters}
        client = self.client
        if name == LOAD_TOOLS:
            def load(**arguments: Any) -> str:
                return self._load(arguments)

            async def aload(**arguments: Any) -> str:
                return self._load(arguments)

            return StructuredTool(name=name, description=tool.description, args_schema=schema, func=load,
                                  coroutine=aload)
        if isinstance(client, AsyncClient):
            async def acall(**arguments: Any) -> str:
                return result_text(tool_result(await client.call(self.turn.turn.id, name, arguments, check=False)))

            return StructuredTool(name=name, description=tool.description, args_schema=schema, coroutine=acall)

        def call(**arguments: Any) -> str:
            return result_text(tool_result(client.call(self.turn.turn.id, name, arguments, check=False)))

        return StructuredTool(name=name, description=tool.description, args_schema=schema, func=call)
