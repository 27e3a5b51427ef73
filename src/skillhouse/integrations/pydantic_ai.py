"""skillhouse's tools as a pydantic-ai toolset (``pip install 'skillhouse[pydantic-ai]'``).

::

    from pydantic_ai import Agent
    from skillhouse.client import AsyncClient
    from skillhouse.integrations.pydantic_ai import SkillhouseToolset

    async with AsyncClient(url, token) as client:
        toolset = await SkillhouseToolset.bind(client, ["hollowbrook@1.0.0"], deferred=True)
        result = await Agent("openai:gpt-5-mini", toolsets=[toolset]).run("Book the double room ...")

Every call is sent to skillhouse (``POST /v1/turns/{id}/calls``: the guest builds the request, the gateway
polices and sends it); nothing here reaches an upstream. A held request is the tool's result (the model
reads that a person must approve it and to repeat the identical call after), not an exception.
``deferred=True`` offers ``load_tools`` and ``read_object`` first and each operation once loaded: the toolset
lists its tools again at every step of the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from pydantic_ai import RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from skillhouse.client import AsyncClient
from skillhouse.client.operations import SkillSpec
from skillhouse.integrations.common import LOAD_TOOLS, TurnTools, tool_result
from skillhouse.wire.skills import Profile
from skillhouse.wire.turns import TurnOut

_ANY_ARGUMENTS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
"""The arguments go to skillhouse as the model gave them: the guest validates them against the declaration
and the model reads every violation as the tool's result."""


class SkillhouseToolset(AbstractToolset[Any]):
    """The tools of one bound turn; every call goes through skillhouse with ``client``."""

    def __init__(self, client: AsyncClient, turn: TurnOut, *, deferred: bool = False, id: str | None = None) -> None:
        self.client = client
        self.turn = TurnTools(turn, deferred)
        self._id = id

    @classmethod
    async def bind(cls, client: AsyncClient, skills: Sequence[SkillSpec], *, profile: Profile = "openai",
                   deferred: bool = False, id: str | None = None) -> Self:
        """Bind ``skills`` (``"hollowbrook@1.0.0"``) into a new turn and offer its tools."""
        return cls(client, await client.bind(skills, profile), deferred=deferred, id=id)

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(name=tool.name, description=tool.description,
                                        parameters_json_schema=dict(tool.parameters)),
                max_retries=1,
                args_validator=_ANY_ARGUMENTS,
            )
            for tool in self.turn.offered()
        }

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        if name == LOAD_TOOLS and self.turn.deferred:
            names = tool_args.get("names")
            return self.turn.load([str(n) for n in names] if isinstance(names, list) else [])
        return tool_result(await self.client.call(self.turn.turn.id, name, tool_args, check=False))
