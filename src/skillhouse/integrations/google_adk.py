"""skillhouse's tools as a Google ADK toolset (``pip install 'skillhouse[google-adk]'``).

::

    from google.adk.agents import LlmAgent
    from skillhouse.client import AsyncClient
    from skillhouse.integrations.google_adk import SkillhouseToolset

    async with AsyncClient(url, token) as client:
        toolset = await SkillhouseToolset.bind(client, ["hollowbrook@1.0.0"], deferred=True)
        agent = LlmAgent(name="concierge", model="gemini-2.5-flash", tools=[toolset])

Each tool is an ADK ``BaseTool`` declared with the operation's JSON Schema; running it sends the call to
skillhouse (``POST /v1/turns/{id}/calls``: the guest builds the request, the gateway polices and sends it),
never to an upstream. Its response is the dict the model reads, a held request included (a person must
approve it; repeat the identical call after), so the run goes on: ADK's own tool confirmation is not used,
as skillhouse's gateway is where the approval is kept.

Deferred loading (``deferred=True``): the toolset offers ``load_tools``, ``read_object`` and each operation
once loaded; ADK asks a toolset for its tools before every model call (this toolset opts out of the
per-invocation cache, as ADK's own skill toolset does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from skillhouse.client import AsyncClient, OfferedTool
from skillhouse.client.operations import SkillSpec
from skillhouse.integrations.common import LOAD_TOOLS, TurnTools, tool_result
from skillhouse.wire.skills import Profile
from skillhouse.wire.turns import TurnOut


class SkillhouseTool(BaseTool):
    """One tool of a bound turn; :class:`SkillhouseToolset` runs it."""

    def __init__(self, toolset: SkillhouseToolset, tool: OfferedTool) -> None:
        super().__init__(name=tool.name, description=tool.description)
        self.toolset = toolset
        self.parameters = tool.parameters

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema=dict(self.parameters))

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return await self.toolset.run(self.name, args)


class SkillhouseToolset(BaseToolset):
    """The tools of one bound turn; every call goes through skillhouse with ``client``."""

    def __init__(self, client: AsyncClient, turn: TurnOut, *, deferred: bool = False) -> None:
        super().__init__()
        self._use_invocation_cache = False  # the offered tools change within a run once load_tools loads some
        self.client = client
        self.turn = TurnTools(turn, deferred)
        offered = [*([self.turn.load_tools_tool()] if deferred else []), *self.turn.tools.values()]
        self._tools = {tool.name: SkillhouseTool(self, tool) for tool in offered}

    @classmethod
    async def bind(cls, client: AsyncClient, skills: Sequence[SkillSpec], *, profile: Profile = "gemini",
                   deferred: bool = False) -> Self:
        """Bind ``skills`` (``"hollowbrook@1.0.0"``) into a new turn and offer its tools."""
        return cls(client, await client.bind(skills, profile), deferred=deferred)

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return [self._tools[tool.name] for tool in self.turn.offered()]

    async def run(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run tool ``name``: ``load_tools`` here, any other through skillhouse."""
        if name == LOAD_TOOLS and self.turn.deferred:
            names = arguments.get("names")
            return self.turn.load([str(n) for n in names] if isinstance(names, list) else [])
        return tool_result(await self.client.call(self.turn.turn.id, name, arguments, check=False))
