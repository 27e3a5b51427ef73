"""The agent loop of a turn: ask the model, run the tools it calls, until it answers or runs out of steps.

The request (JSON)::

    {"prompt": str?, "messages": [<neutral messages>]?, "system": str?, "max_steps": int?}

The answer::

    {"final": str | null, "stopped": "answer" | "step-limit" | "model-error" | "bad-request",
     "steps": int, "messages": [<the whole transcript>], "error": {...}?}

Messages are the neutral ones of ``host.complete`` (see :mod:`skillhouse.guest.host`). A tool message's
content is the tool's answer as a model reads it (:func:`skillhouse.guest.results.model_result`): a
response's JSON body parsed into the answer, not quoted inside it, and its transport headers left out.

Standard library only: this runs inside the WebAssembly guest.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from skillhouse.guest.catalogue import Catalogue
from skillhouse.guest.depth import nests_deeper_than
from skillhouse.guest.host import Host
from skillhouse.guest.results import model_text
from skillhouse.guest.values import ChatMessage, JsonObject, ToolDefinition, json_dump


class TurnGuest(Protocol):
    """What the loop needs of a turn's guest (:class:`skillhouse.guest.guest.Guest`, which imports this module)."""

    host: Host
    catalogue: Catalogue

    def offered(self) -> list[ToolDefinition]: ...

    def deferred(self) -> list[ToolDefinition]: ...

    def call_tool(self, name: str, arguments: str) -> str: ...

    def call(self, name: str, arguments: Any) -> str: ...


DEFAULT_STEPS = 12
MAX_STEPS = 100


def system_prompt(guest: TurnGuest, extra: str | None) -> str:
    """What the model is told about the turn: its skills, and how operations become calls."""
    lines = [
        "You act for the user through tools. Each skill below lists operations; an operation is a tool.",
        "Load the operations you need with load_tools (by the names listed), then call them: the tool",
        "builds and sends the request, so never compose it yourself with fetch_url. Read a skill's",
        "instructions and files with read_object before acting on them.",
        "",
        "Skills:",
    ]
    catalogue = guest.catalogue
    for skill in catalogue.skills.values():
        names = (
            ", ".join(catalogue.listed_name(op["tool_name"]) for op in skill.operations) or "no operations"
        )
        lines.append(
            f"- {skill.name} (read_object skill/{skill.name}): {skill.description} Operations: {names}."
        )
    text = "\n".join(lines)
    return f"{text}\n\n{extra.strip()}" if extra and extra.strip() else text


# A turn request holds messages whose tool arguments may nest MAX_DEPTH levels themselves.
TURN_DEPTH = 128


def run_turn(guest: TurnGuest, request_text: str) -> JsonObject:
    # Checked before parsing, so the answer does not depend on the interpreter's stack (it differs
    # between CPython in process and the WebAssembly component).
    if nests_deeper_than(request_text, TURN_DEPTH):
        return _stopped(
            [], 0, "bad-request", {"code": "bad-request", "message": f"the turn request nests over {TURN_DEPTH} levels"}
        )
    try:
        request = json.loads(request_text)
    except (json.JSONDecodeError, RecursionError):
        return _stopped(
            [], 0, "bad-request", {"code": "bad-request", "message": "the turn request is not JSON"}
        )
    if not isinstance(request, dict):
        return _stopped(
            [], 0, "bad-request", {"code": "bad-request", "message": "the turn request must be an object"}
        )
    messages: list[ChatMessage] = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    if isinstance(request.get("prompt"), str):
        messages.append({"role": "user", "content": request["prompt"]})
    if not messages:
        return _stopped([], 0, "bad-request", {"code": "bad-request", "message": "give a prompt or messages"})
    steps_asked = request.get("max_steps", DEFAULT_STEPS)
    max_steps = (
        min(steps_asked, MAX_STEPS) if isinstance(steps_asked, int) and steps_asked > 0 else DEFAULT_STEPS
    )
    system = system_prompt(guest, request.get("system") if isinstance(request.get("system"), str) else None)

    for step in range(1, max_steps + 1):
        completion = {
            "system": system,
            "messages": messages,
            "tools": guest.offered(),
            "deferred": guest.deferred(),
        }
        answer_text = guest.host.complete(json_dump(completion))
        try:
            if nests_deeper_than(answer_text, TURN_DEPTH):
                raise json.JSONDecodeError("too deep", answer_text, 0)
            answer = json.loads(answer_text)
        except json.JSONDecodeError:
            answer = {
                "error": {"code": "model-error", "message": "the model adapter answered something not JSON"}
            }
        if not isinstance(answer, dict) or "error" in answer:
            problem = answer.get("error") if isinstance(answer, dict) else None
            return _stopped(
                messages, step, "model-error", problem or {"code": "model-error", "message": "no answer"}
            )
        calls = [c for c in answer.get("tool_calls") or [] if isinstance(c, dict)]
        messages.append({"role": "assistant", "content": answer.get("content"), "tool_calls": calls})
        if not calls:
            return {"final": answer.get("content"), "stopped": "answer", "steps": step, "messages": messages}
        for index, call in enumerate(calls):
            call_id = str(call.get("id") or f"call_{step}_{index}")
            arguments = call.get("arguments")
            name = str(call.get("name") or "")
            result = (
                guest.call_tool(name, arguments)
                if isinstance(arguments, str)
                else guest.call(name, arguments or {})
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": model_text(result)})
    return _stopped(messages, max_steps, "step-limit", None)


def _stopped(
    messages: list[JsonObject], steps: int, why: str, problem: JsonObject | None
) -> JsonObject:
    out: JsonObject = {"final": None, "stopped": why, "steps": steps, "messages": messages}
    if problem is not None:
        out["error"] = problem
    return out
