"""The synchronous client: :class:`Client` runs the shared plans (:mod:`skillhouse.client.operations`) over
``httpx.Client``."""

from __future__ import annotations

import time
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


class Client:
    """The HTTP API of one skillhouse server with one token: ``Client(url, token)``; close it (or use ``with``).

    Every method answers the server's own body model (:mod:`skillhouse.wire`) or raises the error tree's
    class for the answer's code (:mod:`skillhouse.client.errors`)."""

    def __init__(self, base_url: str, token: str, *, retries: Retries | None = None, timeout: float = 120.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.retries = retries or Retries()
        self._http = httpx.Client(transport=transport, **connection(base_url, token, timeout))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _run(self, plan: Plan[T]) -> T:
        run = steps(plan, self.retries)
        outcome: Outcome = None
        try:
            while True:
                outcome = self._carry_out(run.send(outcome))
        except StopIteration as done:
            result: T = done.value
            return result

    def _carry_out(self, step: Step) -> Outcome:
        if isinstance(step, Wait):
            time.sleep(step.seconds)
            return None
        try:
            return self._http.send(step.exchange.request(self._http))
        except httpx.TransportError as error:
            return error

    def publish(self, package: str | Path, version: str | None = None, *,
                files: Mapping[str, str] | None = None) -> ReleaseOut:
        """Publish a skill version: ``package`` a skill package directory (its version from SKILL.md unless
        given), or a skill's name with ``version`` and its ``files``. Identical content already published
        answers the same release."""
        return self._run(ops.publish(package, version, files))

    def release(self, skill: str, version: str) -> ReleaseOut:
        """A published release: its document, digest and Agent Skills bundle."""
        return self._run(ops.release(skill, version))

    def release_tools(self, skill: str, version: str, profile: Profile | None = None) -> list[ProviderTool]:
        """A release's tools in ``profile``'s wire format (the neutral definitions when ``None``)."""
        return self._run(ops.release_tools(skill, version, profile))

    def bind(self, skills: Sequence[ops.SkillSpec], profile: Profile = "openai") -> TurnOut:
        """Bind skill versions (``"hollowbrook@1.0.0"``) into a turn whose tools are in ``profile``'s format."""
        return self._run(ops.bind(skills, profile))

    def turn(self, turn_id: str) -> TurnOut:
        return self._run(ops.turn(turn_id))

    def tools(self, turn_id: str) -> list[ProviderTool]:
        """The tools a turn offers, in its profile's wire format."""
        return self._run(ops.tools(turn_id))

    def call(self, turn_id: str, tool: str, arguments: JsonObject | None = None, *, check: bool = True,
             replayable: bool = False) -> CallAnswer:
        """Run one tool call through the guest and the gateway. With ``check`` (the default) a refusal or a
        signal in the answer is raised (``ApprovalRequired`` with its ``approval_id``, ``InvalidArguments``...);
        ``check=False`` answers it as the model would see it. ``replayable``: the operation declares an
        ``identity``, so the call may be sent again after a signal to come back."""
        return self._run(ops.call(turn_id, tool, arguments or {}, check=check, replayable=replayable))

    def run(self, turn_id: str, prompt: str | None = None, **options: Any) -> RunOut:
        """Run the deployment's model on the turn (``messages``, ``system``, ``max_steps`` as in ``RunIn``)."""
        return self._run(ops.run(turn_id, RunIn(prompt=prompt, **options)))

    def approvals(self, state: State | None = None, limit: int = 100) -> list[ApprovalOut]:
        """The tenant's approvals, newest first (only those in ``state`` when given)."""
        return self._run(ops.approvals(state, limit))

    def approval(self, approval_id: str) -> ApprovalOut:
        return self._run(ops.approval(approval_id))

    def approve(self, approval_id: str) -> ApprovalOut:
        """Approve a held request (an ``approve`` or ``admin`` token): the identical call then runs once."""
        return self._run(ops.decide(approval_id, True))

    def deny(self, approval_id: str, reason: str | None = None) -> ApprovalOut:
        """Deny a held request; a model that asks again is told ``reason``."""
        return self._run(ops.decide(approval_id, False, reason))

    def bind_credential(self, origin: str, value: str, scheme: CredentialScheme = "bearer", **fields: Any) -> BindingOut:
        """Bind a secret to ``origin`` (``https://api.example.com``) for the tenant's calls; never read back.
        ``fields``: ``header``, ``allow_http`` and the OAuth 2.0 client's fields of ``CredentialPut``."""
        return self._run(ops.bind_credential(CredentialPut(origin=origin, value=value, scheme=scheme, **fields)))

    def credentials(self) -> list[BindingOut]:
        """The tenant's bindings: where each secret goes, never what it is."""
        return self._run(ops.credentials())

    def delete_credential(self, origin: str, header: str = "authorization") -> None:
        self._run(ops.delete_credential(origin, header))
