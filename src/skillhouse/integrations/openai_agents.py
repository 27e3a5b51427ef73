"""skillhouse's tools as OpenAI Agents SDK function tools (``pip install 'skillhouse[openai-agents]'``).

::

    from agents import Agent, Runner
    from skillhouse.client import AsyncClient
    from skillhouse.integrations.openai_agents import SkillhouseTools

    async with AsyncClient(url, token) as client:
        tools = await SkillhouseTools.bind(client, ["hollowbrook@1.0.0"], deferred=True)
        agent = Agent(name="concierge", instructions="...", tools=tools.tools)
        result = await Runner.run(agent, "Book the double room ...")

Each tool is a ``FunctionTool`` whose parameters are the operation's JSON Schema (not strict: the guest
validates the arguments against the declaration and the model reads every violation); invoking it sends the
call to skillhouse (``POST /v1/turns/{id}/calls``: the guest builds the request, the gateway polices and
sends it), never to an upstream. Its output is the JSON text the model reads, a held request included (a
person must approve it; repeat the identical call after), so the run goes on: the SDK's own
``needs_approval`` interruption is not used, as skillhouse's gateway is where the approval is kept.

Deferred loading (``deferred=True``): every tool is given to the agent, and each operation's ``is_enabled``
says whether ``load_tools`` has loaded it, so the model is offered ``load_tools``, ``read_object`` and the
operations it loaded, asked afresh at every turn of the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Self

from agents import AgentBase, FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext

from skillhouse.client import AsyncClient, OfferedTool
from skillhouse.client.operations import SkillSpec
from skillhouse.integrations.common import LOAD_TOOLS, TurnTools, result_text, tool_result
from skillhouse.wire.skills import Profile
from skillhouse.wire.turns import TurnOut


class SkillhouseTools:
    """The tools of one bound turn as function tools (:attr:`tools`); every call goes through skillhouse."""

    def __init__(self, client: AsyncClient, turn: TurnOut, *, deferred: bool = False) -> None:
        self.client = client
        self.turn = TurnTools(turn, deferred)
        offered = [*([self.turn.load_tools_tool()] if deferred else []), *self.turn.tools.values()]
        self.tools: list[FunctionTool] = [self._tool(tool) for tool in offered]

    @classmethod
    async def bind(cls, client: AsyncClient, skills: Sequence[SkillSpec], *, profile: Profile = "openai",
                   deferred: bool = False) -> Self:
        """Bind ``skills`` (``"hollowbrook@1.0.0"``) into a new turn and offer its tools."""
        return cls(client, await client.bind(skills, profile), deferred=deferred)

    def _enabled(self, name: str) -> bool:
        return any(tool.name == name for tool in self.turn.offered())

    async def _invoke(self, name: str, input_json: str) -> str:
        try:
            arguments = json.loads(input_json or "{}")
        except json.JSONDecodeError as error:
            arguments = error
        if not isinstance(arguments, dict):
            return result_text({"error": {"code": "invalid-arguments",
                                          "message": "the arguments are not a JSON object; call again with one"}})
        if name == LOAD_TOOLS and self.turn.deferred:
            names = arguments.get("names")
            return result_text(self.turn.load([str(n) for n in names] if isinstance(names, list) else []))
        return result_text(tool_result(await self.client.call(self.turn.turn.id, name, arguments, check=False)))

    def _tool(self, tool: OfferedTool) -> FunctionTool:
        name = tool.name

        async def invoke(context: ToolContext[Any], input_json: str) -> str:
            return await self._invoke(name, input_json)

        def enabled(context: RunContextWrapper[Any], agent: AgentBase) -> bool:
            return self._enabled(name)

        return FunctionTool(name=name, description=tool.description, params_json_schema=dict(tool.parameters),
                            on_invoke_tool=invoke, strict_json_schema=False, is_enabled=enabled)
