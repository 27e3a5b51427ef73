"""The asynchronous client: :class:`AsyncClient` runs the shared plans (:mod:`skillhouse.client.operations`)
over ``httpx.AsyncClient``; every method is :class:`~skillhouse.client.Client`'s, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from skillhouse.client import operations as ops
from skillhouse.client.exchange import Outcome, Plan, Retries, Step, T, Wait, connection, steps
from skillhouse.json_types import JsonObject, ProviderTool
from skillhouse.wire.approvals import ApprovalOut, State
from skillhouse.wire.credentials import BindingOut, CredentialPut, CredentialScheme
from skillhouse.wire.skills import Profile, ReleaseOut
from skillhouse.wire.turns import CallAnswer, RunIn, RunOut, TurnOut


class AsyncClient:
    """:class:`~skillhouse.client.Client` for asyncio: ``async with AsyncClient(url, token) as client``."""

    def __init__(self, base_url: str, token: str, *, retries: Retries | None = None, timeout: float = 120.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.retries = retries or Retries()
        self._http = httpx.AsyncClient(transport=transport, **connection(base_url, token, timeout))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def _run(self, plan: Plan[T]) -> T:
        run = steps(plan, self.retries)
        outcome: Outcome = None
        try:
            while True:
                outcome = await self._carry_out(run.send(outcome))
        except StopIteration as done:
            result: T = done.value
            return result

    async def _carry_out(self, step: Step) -> Outcome:
        if isinstance(step, Wait):
            await asyncio.sleep(step.seconds)
            return None
        try:
            return await self._http.send(step.exchange.request(self._http))
        except httpx.TransportError as error:
            return error

    async def publish(self, package: str | Path, version: str | None = None, *,
                files: Mapping[str, str] | None = None) -> ReleaseOut:
        """As :meth:`Client.publish`."""
        return await self._run(ops.publish(package, version, files))

    async def release(self, skill: str, version: str) -> ReleaseOut:
        """As :meth:`Client.release`."""
        return await self._run(ops.release(skill, version))

    async def release_tools(self, skill: str, version: str, profile: Profile | None = None) -> list[ProviderTool]:
        """As :meth:`Client.release_tools`."""
        return await self._run(ops.release_tools(skill, version, profile))

    async def bind(self, skills: Sequence[ops.SkillSpec], profile: Profile = "openai") -> TurnOut:
        """As :meth:`Client.bind`."""
        return await self._run(ops.bind(skills, profile))

    async def turn(self, turn_id: str) -> TurnOut:
        return await self._run(ops.turn(turn_id))

    async def tools(self, turn_id: str) -> list[ProviderTool]:
        """As :meth:`Client.tools`."""
        return await self._run(ops.tools(turn_id))

    async def call(self, turn_id: str, tool: str, arguments: JsonObject | None = None, *, check: bool = True,
             replayable: bool = False) -> CallAnswer:
        """As :meth:`Client.call`."""
        return await self._run(ops.call(turn_id, tool, arguments or {}, check=check, replayable=replayable))

    async def run(self, turn_id: str, prompt: str | None = None, **options: Any) -> RunOut:
        """As :meth:`Client.run`."""
        return await self._run(ops.run(turn_id, RunIn(prompt=prompt, **options)))

    async def approvals(self, state: State | None = None, limit: int = 100) -> list[ApprovalOut]:
        """As :meth:`Client.approvals`."""
        return await self._run(ops.approvals(state, limit))

    async def approval(self, approval_id: str) -> ApprovalOut:
        return await self._run(ops.approval(approval_id))

    async def approve(self, approval_id: str) -> ApprovalOut:
        """As :meth:`Client.approve`."""
        return await self._run(ops.decide(approval_id, True))

    async def deny(self, approval_id: str, reason: str | None = None) -> ApprovalOut:
        """As :meth:`Client.deny`."""
        return await self._run(ops.decide(approval_id, False, reason))

    async def bind_credential(self, origin: str, value: str, scheme: CredentialScheme = "bearer", **fields: Any) -> BindingOut:
        """As :meth:`Client.bind_credential`."""
        return await self._run(ops.bind_credential(CredentialPut(origin=origin, value=value, scheme=scheme, **fields)))

    async def credentials(self) -> list[BindingOut]:
        """As :meth:`Client.credentials`."""
        return await self._run(ops.credentials())

    async def delete_credential(self, origin: str, header: str = "authorization") -> None:
        await self._run(ops.delete_credential(origin, header))
