"""A scripted model: replays a plan of tool calls and a final answer, for tests and ``make demo``.

A plan is a list of steps; each step is one assistant turn: :class:`Calls` (one or more tool calls)
or :class:`Answer` (the final text). Arguments and texts may be functions of the :class:`Transcript`
so far, which is how a plan quotes the booking id a previous call returned. The model keeps no
state of its own: the step it plays is the number of assistant turns already in the request's
messages, so the same plan replays identically in any runner and after any restart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillhouse.json_types import ChatMessage, JsonObject, ModelAnswer, ModelRequest


class Transcript:
    """The messages of a turn so far, read the way a plan needs them."""

    def __init__(self, messages: list[ChatMessage]) -> None:
        self.messages = messages

    def results(self, tool: str) -> list[Any]:
        """The decoded results of every call to ``tool`` (by the name it was called under), in order."""
        names = {
            str(call.get("id")): call.get("name")
            for message in self.messages if message.get("role") == "assistant"
            for call in message.get("tool_calls") or []
        }
        found: list[Any] = []
        for message in self.messages:
            if message.get("role") == "tool" and names.get(str(message.get("tool_call_id"))) == tool:
                found.append(_decoded(message.get("content")))
        return found

    def last_result(self, tool: str) -> Any:
        results = self.results(tool)
        if not results:
            raise LookupError(f"the plan needs a result of {tool} and there is none yet")
        return results[-1]

    def response_body(self, tool: str, index: int = -1) -> Any:
        """The JSON body of a response ``tool`` got (``{"status", "headers", "body"}``; the loop has parsed
        a JSON body already, a text one is decoded here when it holds JSON)."""
        results = self.results(tool)
        with_body = [r for r in results if isinstance(r, dict) and isinstance(r.get("status"), int) and "body" in r]
        if not with_body:
            raise LookupError(f"no call to {tool} has had a response with a body yet")
        return _decoded(with_body[index]["body"])


def _decoded(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


Arguments = JsonObject | Callable[[Transcript], JsonObject]
Text = str | Callable[[Transcript], str]


@dataclass(frozen=True)
class Call:
    """One tool call of a step: the tool's name and its arguments (or how to work them out)."""

    name: str
    arguments: Arguments = field(default_factory=dict)


@dataclass(frozen=True)
class Calls:
    """An assistant turn that calls tools, with an optional line of text beside the calls."""

    calls: Sequence[Call]
    say: Text | None = None


@dataclass(frozen=True)
class Answer:
    """The final assistant turn: text and no calls."""

    text: Text


Step = Calls | Answer


def _text(text: Text, transcript: Transcript) -> str:
    return text(transcript) if callable(text) else text


class ScriptedModel:
    """Plays ``plan`` one step per ``complete``; past the end of the plan it answers ``plan-exhausted``."""

    def __init__(self, plan: Sequence[Step], name: str = "scripted") -> None:
        self.plan = list(plan)
        self.name = name

    def close(self) -> None:
        """Nothing to let go of: a plan holds no connection."""

    def __repr__(self) -> str:
        return f"ScriptedModel({self.name!r}, {len(self.plan)} steps)"

    def complete(self, request: ModelRequest) -> ModelAnswer:
        messages = request.get("messages")
        if not isinstance(messages, list):
            return {"error": {"code": "model-bad-request", "message": "messages must be a list"}}
        played = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        if played >= len(self.plan):
            return {"error": {"code": "plan-exhausted",
                              "message": f"plan {self.name!r} has {len(self.plan)} steps, all played"}}
        step, transcript = self.plan[played], Transcript(messages)
        try:
            if isinstance(step, Answer):
                return {"content": _text(step.text, transcript), "tool_calls": []}
            calls = [
                {"id": f"{self.name}_{played + 1}_{index + 1}", "name": call.name,
                 "arguments": call.arguments(transcript) if callable(call.arguments) else dict(call.arguments)}
                for index, call in enumerate(step.calls)
            ]
            say = _text(step.say, transcript) if step.say is not None else None
        except (LookupError, KeyError, TypeError, ValueError) as exc:
            # a plan that cannot go on, e.g. the booking it meant to charge was never made
            return {"error": {"code": "plan-failed", "message": f"step {played + 1} of {self.name!r}: {exc}"}}
        return {"content": say, "tool_calls": calls}
